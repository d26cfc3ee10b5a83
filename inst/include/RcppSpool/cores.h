// How many cores this process may use, and how many threads to use by default.
//
// availableCores() follows the rules of parallelly::availableCores() (see
// engine/cores.h); defaultThreads() is what pools and loops use when no count
// is given. Both give the same answers as the R functions availableCores()
// and getThreads(), also in a package that only has `LinkingTo: RcppSpool`:
// the settings live in R options and environment variables, which every
// package's copy of these headers can read.
//
// R options can only be read on R's main thread. There the settings are read
// afresh at every call (an options() call just before a loop takes effect);
// on other threads the answer is the last one computed on the main thread
// (by this shared object), or, before there is one, one computed from the
// environment alone. With -DRCPPSPOOL_STANDALONE there are no options: the
// environment and the machine decide, on any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/cores.h"
#include "host/main_thread.h"

#ifdef RCPPSPOOL_STANDALONE
#include <cstdio>
#else
#include "host/r_options.h"
#endif

namespace RcppSpool {
namespace detail {

//! Processors and cgroup limits, read once per process (parallelly also
//! reads them once per session): they do not change under a running process.
inline const engine::MachineFacts& machineFacts()
{
    static const engine::MachineFacts facts = engine::readMachineFacts();
    return facts;
}

//! True where R options can be read: on R's main thread, in R.
inline bool canReadOptions()
{
#ifdef RCPPSPOOL_STANDALONE
    return false;
#else
    return host::isMainThread();
#endif
}

//! The inputs of the rules, with R options only where they can be read.
inline engine::CoresInputs coresInputs(bool withOptions)
{
    engine::CoresInputs in;
#ifndef RCPPSPOOL_STANDALONE
    if (withOptions) in.option = host::readROption;
#else
    (void)withOptions;
#endif
    in.env = engine::processEnv;
    in.machine = machineFacts();
    in.affinity = engine::affinityCount();
    return in;
}

//! The last answers computed with R options, for threads that cannot read
//! them. The counts are atomics so that a worker asking (a nested loop with
//! the default count) takes no lock; -1: none yet; -2: that computation
//! failed, the message is in `error` (guarded by `mutex`).
struct SettingsCache {
    std::atomic<long long> cores{-1};
    std::atomic<long long> threads{-1};
    std::mutex mutex;
    std::string coresError, threadsError;
};

inline SettingsCache& settingsCache()
{
    static SettingsCache cache;
    return cache;
}

inline void remember(std::atomic<long long>& slot, std::string& errorSlot, long long count, const std::string& error)
{
    auto& c = settingsCache();
    if (!error.empty()) {
        std::lock_guard<std::mutex> lock(c.mutex);
        errorSlot = error;
        slot.store(-2, std::memory_order_release);
    } else {
        slot.store(count, std::memory_order_release);
    }
}

//! availableCores() now, with everything it found (warnings included, not
//! yet given). On the main thread (in R) it reads the options and updates the
//! cache; elsewhere it answers from the cache.
inline engine::CoresResult coresNow()
{
    auto& cache = settingsCache();
    if (canReadOptions()) {
        engine::CoresResult r = engine::computeAvailableCores(coresInputs(true));
        remember(cache.cores, cache.coresError, r.count, r.error);
        return r;
    }
#ifndef RCPPSPOOL_STANDALONE
    long long known = cache.cores.load(std::memory_order_acquire);
    if (known >= 0 || known == -2) {
        engine::CoresResult r;
        r.rule = "cached";
        if (known >= 0) {
            r.count = static_cast<int>(known);
        } else {
            std::lock_guard<std::mutex> lock(cache.mutex);
            r.error = cache.coresError;
        }
        return r;
    }
#endif
    return engine::computeAvailableCores(coresInputs(false));
}

//! defaultThreads() now, as coresNow().
inline engine::ThreadsResult threadsNow()
{
    auto& cache = settingsCache();
    if (canReadOptions()) {
#ifdef RCPPSPOOL_STANDALONE
        engine::OptionReader option = engine::noOptions;
#else
        engine::OptionReader option = host::readROption;
#endif
        engine::ThreadsResult r = engine::computeDefaultThreads(option, engine::processEnv, coresNow);
        remember(cache.threads, cache.threadsError, static_cast<long long>(r.count), r.error);
        return r;
    }
#ifndef RCPPSPOOL_STANDALONE
    long long known = cache.threads.load(std::memory_order_acquire);
    if (known >= 0 || known == -2) {
        engine::ThreadsResult r;
        r.source = "cached";
        if (known >= 0) {
            r.count = static_cast<std::size_t>(known);
        } else {
            std::lock_guard<std::mutex> lock(cache.mutex);
            r.error = cache.threadsError;
        }
        return r;
    }
#endif
    return engine::computeDefaultThreads(engine::noOptions, engine::processEnv, coresNow);
}

//! The warnings not given before (by this shared object): each one is given
//! once, not at every loop.
inline std::vector<std::string> newWarnings(const std::vector<std::string>& warnings)
{
    static std::mutex mutex;
    static std::set<std::string> given;
    std::vector<std::string> out;
    if (warnings.empty()) return out;
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& w : warnings)
        if (given.insert(w).second) out.push_back(w);
    return out;
}

//! Gives the new ones of `warnings`: as R warnings on R's main thread; on
//! stderr without R. In R off the main thread nothing is given (nor marked
//! given): the main thread gives it when it next computes the settings.
inline void giveWarnings(const std::vector<std::string>& warnings)
{
    if (warnings.empty()) return;
#ifdef RCPPSPOOL_STANDALONE
    for (auto& w : newWarnings(warnings)) std::fprintf(stderr, "RcppSpool warning: %s\n", w.c_str());
#else
    if (!host::isMainThread()) return;
    for (auto& w : newWarnings(warnings)) host::rWarning(w);
#endif
}

}  // namespace detail

//! The number of cores this process may use: the minimum over the limits
//! that apply (the machine, cgroups v1/v2 cpusets and CPU quotas, the
//! affinity mask, the option `mc.cores` or variable MC_CORES, batch
//! schedulers' variables, R CMD check's _R_CHECK_LIMIT_CORES_, parallelly's
//! options...), by the rules of parallelly::availableCores(); the same as the
//! R function availableCores(). At least 1.
//!
//! Throws std::invalid_argument where the R function gives an error: when a
//! setting is invalid (a core count of zero or less, e.g.
//! SLURM_CPUS_PER_TASK=0, or a bad `parallelly.availableCores.min`). Rcpp and
//! cpp11 turn that into an R error.
inline std::size_t availableCores()
{
    engine::CoresResult r = detail::coresNow();
    detail::giveWarnings(r.warnings);
    if (!r.error.empty()) throw std::invalid_argument("availableCores(): " + r.error);
    return static_cast<std::size_t>(r.count);
}

//! The number of threads a pool or loop uses when no count is given: the
//! value of setThreads() (kept in the R option `RcppSpool.setThreads`), else
//! the option `RcppSpool.threads`, else the environment variable
//! RCPPSPOOL_NUM_THREADS, else availableCores(). From 0 (no worker threads:
//! everything runs on the calling thread) to 1024; the same as the R function
//! getThreads().
//!
//! Throws std::invalid_argument when an option holds a bad value (not a
//! whole number from 0 to 1024), as getThreads() gives an error. A bad
//! environment variable gives one warning and is ignored.
inline std::size_t defaultThreads()
{
    engine::ThreadsResult r = detail::threadsNow();
    detail::giveWarnings(r.warnings);
    if (!r.error.empty()) throw std::invalid_argument("defaultThreads(): " + r.error);
    return r.count;
}

}  // namespace RcppSpool
