// What availableCores() reads and answers, and how parallelly reads its options and variables.
#pragma once

#include "../abi.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cores_machine.h"
#include "cores_values.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Everything the rules read.
struct CoresInputs {
    OptionReader option = noOptions;  //!< R options (or none)
    EnvReader env = processEnv;       //!< environment variables
    MachineFacts machine;             //!< processors and cgroups
    int affinity = naInt;             //!< CPUs in the affinity mask (the "nproc" rule)
};

//! The answer of availableCores().
struct CoresResult {
    int count = 1;                 //!< cores this process may use (at least 1)
    std::string rule = "current";  //!< the rule that decided, as parallelly names it; a
                                   //!< trailing "*" means it was raised to the minimum option
    //! Every rule that applied, in the order of the methods, after the
    //! minimum and omit options (parallelly's `which = "all"`).
    std::vector<std::pair<std::string, int>> all;
    //! Non-empty when the settings are invalid (a core count of zero or
    //! less, a bad minimum or omit option...): parallelly stops with an
    //! error there, and so does our R function; `count` is then meaningless.
    std::string error;
    std::vector<std::string> warnings;  //!< things ignored (cgroup values, Slurm counts)
};

//! The methods parallelly uses when its option does not say otherwise, in
//! its order: where several give the same minimum, the first names the result.
RCPPSPOOL_HIDDEN inline const std::vector<std::string>& defaultCoresMethods()
{
    static const std::vector<std::string> m = {"system", "cgroups.cpuset", "cgroups.cpuquota", "cgroups2.cpu.max",
                                               "nproc", "mc.cores", "BiocParallel", "_R_CHECK_LIMIT_CORES_",
                                               "Bioconductor", "LSF", "PJM", "PBS", "SGE", "Slurm",
                                               "fallback", "custom"};
    return m;
}

namespace cores_detail {

//! parallelly's getOption2(): the option `name`, else the same name with the
//! prefix "parallelly." or "future." (either prefix is first removed).
inline bool getOption2(const CoresInputs& in, const std::string& name, OptionValue& out)
{
    if (in.option(name, out) && !out.isNull()) return true;
    std::string base = name;
    for (const char* p : {"parallelly.", "future."})
        if (startsWith(name, p)) base = name.substr(std::string(p).size());
    for (const std::string& n : {"parallelly." + base, "future." + base})
        if (n != name && in.option(n, out) && !out.isNull()) return true;
    return false;
}

//! parallelly's getEnvVar2(): the first non-empty of the variable `name` and
//! the same with the prefix R_PARALLELLY_ or R_FUTURE_.
inline bool getEnvVar2(const CoresInputs& in, const std::string& name, std::string& out)
{
    if (in.env(name, out) && !out.empty()) return true;
    std::string base = name;
    for (const char* p : {"R_PARALLELLY_", "R_FUTURE_"})
        if (startsWith(name, p)) base = name.substr(std::string(p).size());
    for (const std::string& n : {"R_PARALLELLY_" + base, "R_FUTURE_" + base})
        if (n != name && in.env(n, out) && !out.empty()) return true;
    return false;
}

//! A core count from an environment variable (through getEnvVar2, trimmed,
//! as.integer: "4.7" is 4, "abc" NA).
inline int envInt(const CoresInputs& in, const std::string& name)
{
    std::string v;
    if (!getEnvVar2(in, name, v)) return naInt;
    return stringToInt(trim(v));
}

//! A variable read with plain Sys.getenv() (no prefixes, untrimmed).
inline std::string envPlain(const CoresInputs& in, const std::string& name)
{
    std::string v;
    return in.env(name, v) ? v : std::string();
}

//! One of parallelly's own options, "parallelly.<base>": the option (or its
//! "future." twin), else the environment variable R_PARALLELLY_<BASE> (or
//! R_FUTURE_<BASE>), which parallelly turns into the option when it loads:
//! trimmed, split at commas for the methods, converted to an integer for the
//! others (NA when it is not a number; `naIsError` for the options whose
//! variable parallelly then refuses to load with).
inline bool parallellyOption(const CoresInputs& in, const std::string& base, bool isList, bool naIsError,
                             OptionValue& out, std::string& error)
{
    if (getOption2(in, "parallelly." + base, out)) return true;
    std::string env = "R_PARALLELLY_" + toUpper(base);
    std::replace(env.begin(), env.end(), '.', '_');
    std::string raw;
    if (!getEnvVar2(in, env, raw)) return false;
    std::string v = trim(raw);
    if (v.empty()) return false;
    if (isList) {
        std::vector<std::string> parts;
        for (auto& p : split(v, ',')) parts.push_back(trim(p));
        out = OptionValue::text(parts);
        return true;
    }
    int n = stringToInt(v);
    if (n == naInt && naIsError) {
        error = "the environment variable " + env + "='" + raw +
                "' is not a whole number, as option 'parallelly." + base + "' must be";
        return false;
    }
    out = OptionValue::number(n == naInt ? std::numeric_limits<double>::quiet_NaN() : n, true);
    return true;
}

//! The option mc.cores as parallelly sees it: set by the user, else taken
//! from the environment variable MC_CORES (package parallel does that when it
//! loads, if the option is unset and the variable is a number), else
//! parallelly's prefixed twins "parallelly.mc.cores" and "future.mc.cores".
inline bool mcCoresOption(const CoresInputs& in, OptionValue& out)
{
    if (in.option("mc.cores", out) && !out.isNull()) return true;
    std::string v;
    if (in.env("MC_CORES", v)) {
        int n = stringToInt(v);
        if (n != naInt) {
            out = OptionValue::number(n, true);
            return true;
        }
    }
    return getOption2(in, "mc.cores", out);
}

}  // namespace cores_detail

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
