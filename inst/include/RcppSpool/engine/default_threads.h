// Thread settings: checks of a thread count, and the default count (setThreads(), options, fork...).
#pragma once

#include "../abi.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cores_options.h"
#include "cores_values.h"
#include "fork_guard.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! The largest thread count that can be set.
constexpr std::size_t maxThreads = 1024;

//! The option in which setThreads() keeps its value. An R option, not a C++
//! global, because every package that compiles these headers has its own
//! copy of the globals but all of them can read R's options.
constexpr const char* setThreadsOption = "RcppSpool.setThreads";
//! The option users set for the default thread count.
constexpr const char* threadsOption = "RcppSpool.threads";
//! The environment variable for the default thread count.
constexpr const char* threadsEnvVar = "RCPPSPOOL_NUM_THREADS";

//! What is allowed, for messages.
inline const char* allowedThreadsText()
{
    return "a whole number from 0 (no worker threads: everything runs on the calling thread) to 1024, "
           "or NULL for automatic";
}

//! Checks a thread count given as an R value (an argument of setThreads() or
//! an option): a single, non-missing whole number from 0 to maxThreads, of R
//! type integer or double. Returns an empty string and sets `n` when it is
//! valid, else a message that names `what`, the value and what is allowed.
inline std::string checkThreadCount(const OptionValue& v, const std::string& what, std::size_t& n)
{
    bool ok = v.isNumeric() && v.length() == 1 && std::isfinite(v.numbers[0]) && v.numbers[0] >= 0 &&
              v.numbers[0] <= static_cast<double>(maxThreads) && std::floor(v.numbers[0]) == v.numbers[0];
    if (!ok) return what + " is " + v.describe() + "; it must be " + allowedThreadsText();
    n = static_cast<std::size_t>(v.numbers[0]);
    return "";
}

//! Checks a thread count given as text (the environment variable): a whole
//! number from 0 to maxThreads, surrounding blanks allowed. Returns false
//! when it is not one.
inline bool parseThreadCount(const std::string& text, std::size_t& n)
{
    double x;
    if (!cores_detail::parseNumber(text, x) || !std::isfinite(x) || x < 0 ||
        x > static_cast<double>(maxThreads) || std::floor(x) != x)
        return false;
    n = static_cast<std::size_t>(x);
    return true;
}

//! Registers the fork handler of fork_guard.h when the shared object (or
//! program) that compiled these headers is loaded, rather than at the first
//! pool: forkGeneration() then counts every fork since the load, even in a
//! package that had not run parallel code before its process forked.
RCPPSPOOL_HIDDEN inline const unsigned forkGenerationAtLoad = forkGeneration();

//! True in a child created by fork() (parallel::mclapply(), future's
//! multicore, makeForkCluster()) since these headers were loaded.
inline bool forkedSinceLoad() noexcept { return forkGeneration() != forkGenerationAtLoad; }

//! The answer of defaultThreads().
struct ThreadsResult {
    std::size_t count = 1;  //!< threads to use when no count is given
    //! Where it came from: "setThreads", "RcppSpool.threads",
    //! "RCPPSPOOL_NUM_THREADS", "fork", or the availableCores() rule.
    std::string source;
    std::string error;  //!< non-empty: a bad setting (an R error in R)
    std::vector<std::string> warnings;  //!< a bad environment variable, ignored
};

//! The default thread count: the value given to setThreads() (kept in the
//! option setThreadsOption), else the option `RcppSpool.threads`, else the
//! environment variable RCPPSPOOL_NUM_THREADS, else 1 in a forked child
//! (`forkedChild`), else `cores()` (which should compute availableCores()).
//! A bad option is an error (the user asked for something impossible, and
//! should hear it); a bad variable gives a warning and is ignored
//! (environments are inherited, often from far away).
//!
//! Why 1 in a forked child: fork() copies only the calling thread, so a pool
//! that existed before the fork runs everything on the caller in the child
//! anyway (scheduler.h); a pool created in the child would start fresh
//! threads, and with availableCores() of them in each of mclapply()'s
//! children the machine would be oversubscribed (children x cores threads).
//! The children are the parallelism; an explicit setting still wins.
inline ThreadsResult computeDefaultThreads(const OptionReader& option, const EnvReader& env,
                                           const std::function<CoresResult()>& cores,
                                           bool forkedChild = forkedSinceLoad())
{
    ThreadsResult res;
    OptionValue v;
    if (option(setThreadsOption, v) && !v.isNull()) {
        res.error = checkThreadCount(v, std::string("option '") + setThreadsOption + "' (set by setThreads())", res.count);
        res.source = "setThreads";
        return res;
    }
    if (option(threadsOption, v) && !v.isNull()) {
        res.error = checkThreadCount(v, std::string("option '") + threadsOption + "'", res.count);
        res.source = threadsOption;
        return res;
    }
    std::string text;
    if (env(threadsEnvVar, text) && !cores_detail::trim(text).empty()) {
        if (parseThreadCount(text, res.count)) {
            res.source = threadsEnvVar;
            return res;
        }
        res.warnings.push_back(std::string("ignoring the environment variable ") + threadsEnvVar + "='" + text +
                               "': it must be a whole number from 0 to 1024, or empty for automatic");
    }
    if (forkedChild) {
        res.count = 1;
        res.source = "fork";
        return res;
    }
    CoresResult c = cores();
    res.warnings.insert(res.warnings.end(), c.warnings.begin(), c.warnings.end());
    res.error = c.error;
    res.count = static_cast<std::size_t>(c.count);
    res.source = c.rule;
    return res;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
