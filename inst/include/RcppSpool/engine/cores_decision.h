// availableCores()'s decision: the methods' counts, the fallback, the minimum and omit options.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cores_methods.h"
#include "cores_options.h"
#include "cores_values.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! The cores this process may use, by parallelly::availableCores()'s rules
//! (with its default arguments): each method in the option
//! `parallelly.availableCores.methods` (default: defaultCoresMethods()) gives
//! a count or does not apply; a count of zero or less is an error; the
//! fallback (option `parallelly.availableCores.fallback`, variable
//! R_PARALLELLY_AVAILABLECORES_FALLBACK) replaces the machine's own counts
//! when nothing else applies and they do not limit the process; the smallest
//! count wins, named by its method (the first one, on a tie); it is raised to
//! the option `parallelly.availableCores.min` (marking the name with "*") and
//! lowered by `parallelly.availableCores.omit` (not below 1). Each of those
//! options may also be given as an R_PARALLELLY_AVAILABLECORES_* variable.
inline CoresResult computeAvailableCores(const CoresInputs& in)
{
    using namespace cores_detail;
    CoresResult res;
    res.warnings = in.machine.warnings;

    // Which methods.
    std::vector<std::string> methods = defaultCoresMethods();
    OptionValue v;
    std::string err;
    if (parallellyOption(in, "availableCores.methods", true, false, v, err)) {
        if (v.type != OptionValue::Type::string) {
            res.error = "option 'parallelly.availableCores.methods' must be a character vector of method names, not " +
                        v.describe();
            return res;
        }
        methods.clear();
        for (std::size_t i = 0; i < v.strings.size(); ++i)
            if (!v.stringIsNA[i]) methods.push_back(v.strings[i]);
    }

    // The machine's size, as parallelly's detectCores() sees it (an option can override it).
    OptionValue systemOpt;
    bool hasSystemOpt = parallellyOption(in, "availableCores.system", false, false, systemOpt, err);
    int systemCount = hasSystemOpt ? firstAsInt(systemOpt) : (in.machine.processors == naInt ? 1 : in.machine.processors);

    // What each method says.
    std::vector<std::pair<std::string, int>> found;
    for (auto& m : methods) {
        found.push_back({m, coresByMethod(in, m, hasSystemOpt ? &systemOpt : nullptr, res)});
    }

    std::string invalid;
    for (auto& f : found)
        if (f.second != naInt && f.second <= 0)
            invalid += (invalid.empty() ? "" : ", ") + ("'" + f.first + "' = " + std::to_string(f.second));
    if (!invalid.empty()) {
        res.error = "invalid (zero or less) core settings: " + invalid;
        return res;
    }

    std::vector<std::pair<std::string, int>> ncores;
    for (auto& f : found)
        if (f.second != naInt) ncores.push_back(f);
    if (ncores.empty()) ncores.push_back({"current", 1});

    // The fallback counts only when nothing but the machine's own counts
    // applies, and those do not limit the process below the machine's size
    // (parallelly's list of those counts misspells "cgroups.cpuquota", so a
    // CPU quota, like every other rule, keeps the fallback out).
    std::vector<std::pair<std::string, int>> chosen = ncores;
    if (ncores.size() >= 2) {
        auto fb = std::find_if(ncores.begin(), ncores.end(), [](const auto& f) { return f.first == "fallback"; });
        if (fb != ncores.end()) {
            auto isSpecial = [](const std::string& n) {
                return n == "system" || n == "cgroups.cpuset" || n == "nproc";
            };
            bool useFallback = true;
            int sys = naInt;
            for (auto& f : ncores) {
                if (f.first != "fallback" && !isSpecial(f.first)) useFallback = false;
                if (f.first == "system") sys = f.second;
            }
            if (useFallback && sys != naInt)
                for (auto& f : ncores)
                    if (isSpecial(f.first) && f.second < sys) useFallback = false;
            if (useFallback) {
                chosen = {*fb};
            } else {
                chosen.clear();
                for (auto& f : ncores)
                    if (f.first != "fallback") chosen.push_back(f);
            }
        }
    }
    auto best = std::min_element(chosen.begin(), chosen.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    res.count = best->second;
    res.rule = best->first;
    res.all = ncores;

    // The minimum: a single whole-ish number from 1 to the machine's size.
    OptionValue minOpt;
    if (parallellyOption(in, "availableCores.min", false, true, minOpt, err)) {
        if (minOpt.length() != 1 || !minOpt.isNumeric()) {
            res.error = "option 'parallelly.availableCores.min' must be a single number, not " + minOpt.describe();
            return res;
        }
        double mn = minOpt.numbers[0];
        if (!std::isfinite(mn) || mn < 1) {
            res.error = "option 'parallelly.availableCores.min' must be a number of at least 1, not " +
                        minOpt.describe();
            return res;
        }
        if (systemCount == naInt) {
            res.error = "option 'parallelly.availableCores.system' is not a number: " + systemOpt.describe();
            return res;
        }
        if (mn > systemCount) {
            res.error = "option 'parallelly.availableCores.min' must not be greater than the number of cores on "
                        "the system: " + minOpt.describe() + " > " + std::to_string(systemCount);
            return res;
        }
        int floorMin = static_cast<int>(std::floor(mn));
        if (res.count < mn) {
            res.count = floorMin;
            res.rule += "*";
        }
        for (auto& f : res.all)
            if (f.second < mn) {
                f.second = floorMin;
                f.first += "*";
            }
    } else if (!err.empty()) {
        res.error = err;
        return res;
    } else if (hasSystemOpt && systemCount == naInt) {
        res.error = "option 'parallelly.availableCores.system' is not a number: " + systemOpt.describe();
        return res;
    }

    // Cores to leave free.
    OptionValue omitOpt;
    if (parallellyOption(in, "availableCores.omit", false, true, omitOpt, err)) {
        if (omitOpt.length() != 1 || !omitOpt.isNumeric() || !std::isfinite(omitOpt.numbers[0]) ||
            omitOpt.numbers[0] < 0) {
            res.error = "option 'parallelly.availableCores.omit' must be a single number of at least 0, not " +
                        omitOpt.describe();
            return res;
        }
        int omit = doubleToInt(omitOpt.numbers[0]);
        auto lower = [omit](int n) { return std::max(1, n - omit); };
        res.count = lower(res.count);
        for (auto& f : res.all) f.second = lower(f.second);
    } else if (!err.empty()) {
        res.error = err;
        return res;
    }
    return res;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
