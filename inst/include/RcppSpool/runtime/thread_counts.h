// The runtime's thread counts: availableCores() and defaultThreads()
// computed, cached and served to clients (table/api_table.h).
//
// availableCores() follows the rules of parallelly::availableCores() (see
// engine/cores.h); defaultThreads() is what pools and loops use when no count
// is given. Both give the same answers as the R functions availableCores()
// and getThreads(): the settings live in R options and environment
// variables.
//
// R options can only be read on R's main thread. There the settings are
// checked at every call (an options() call just before a loop takes effect),
// cheaply: only the options and variables that the last computation read are
// compared with what they were (about 1.5 us in R, 50 ns without R);
// on other threads the answer is the last one computed on the main thread
// (by this runtime), or, before there is one, one computed from the
// environment alone. With -DRCPPSPOOL_STANDALONE there are no options: the
// environment and the machine decide, on any thread.
#pragma once

#include "../abi.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../table/api_table.h"
#include "../engine/cores.h"
#include "../engine/runtime.h"
#include "../host/main_thread.h"
#include "status.h"

#ifdef RCPPSPOOL_STANDALONE
#include <cstdio>
#else
#include "../host/r_options.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace detail {

//! Processors and cgroup limits, read once per process (parallelly also
//! reads them once per session): they do not change under a running process.
RCPPSPOOL_HIDDEN inline const engine::MachineFacts& machineFacts()
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

//! What a computation of the settings read, to tell whether it is still
//! valid: the environment variables, the R options (in R), and the affinity
//! mask. The mask is a system call away; it is re-read at most every 20 ms
//! (the mask changes only when someone runs taskset or the like, and a
//! loop that starts a few milliseconds after that may still use the old count).
struct SettingsInputs {
    bool valid = false;
    engine::EnvSnapshot env;
#ifndef RCPPSPOOL_STANDALONE
    host::OptionSnapshot options;
#endif
    int affinity = engine::naInt;
    std::chrono::steady_clock::time_point affinityReadAt;

    static constexpr std::chrono::milliseconds affinityRecheck{20};

    //! True when nothing that was read has changed.
    bool unchanged()
    {
        if (!valid || !env.unchanged()) return false;
#ifndef RCPPSPOOL_STANDALONE
        if (!options.unchanged()) return false;
#endif
        auto now = std::chrono::steady_clock::now();
        if (now - affinityReadAt > affinityRecheck) {
            int a = engine::affinityCount();
            affinityReadAt = now;
            if (a != affinity) return false;
        }
        return true;
    }
};

//! A result and the inputs it was computed from.
template <class Result>
struct Memo {
    SettingsInputs inputs;
    Result result;
};

//! The memo's result if its inputs are unchanged; else computes it anew with
//! `compute(optionReader, envReader, affinity)`, recording what it reads.
//! One memo per thread (thread_local): no locks, and the readers record
//! into it undisturbed.
template <class Result, class Compute>
const Result& memoized(Memo<Result>& memo, bool withOptions, Compute compute)
{
    if (memo.inputs.unchanged()) return memo.result;
    memo.inputs = SettingsInputs{};
    memo.inputs.affinity = engine::affinityCount();
    memo.inputs.affinityReadAt = std::chrono::steady_clock::now();
    engine::OptionReader option = engine::noOptions;
#ifndef RCPPSPOOL_STANDALONE
    if (withOptions) option = memo.inputs.options.reader();
#else
    (void)withOptions;
#endif
    memo.result = compute(option, memo.inputs.env.reader(), memo.inputs.affinity);
    memo.inputs.env.seal();
    memo.inputs.valid = true;
    return memo.result;
}

//! availableCores() from the given readers.
inline engine::CoresResult computeCores(const engine::OptionReader& option, const engine::EnvReader& env,
                                        int affinity)
{
    engine::CoresInputs in;
    in.option = option;
    in.env = env;
    in.machine = machineFacts();
    in.affinity = affinity;
    return engine::computeAvailableCores(in);
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

RCPPSPOOL_HIDDEN inline SettingsCache& settingsCache()
{
    static SettingsCache cache;  // the runtime's: clients ask through the table
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

#ifndef RCPPSPOOL_STANDALONE
//! The answer last computed on the main thread, if there is one.
template <class Result>
bool fromCache(std::atomic<long long>& slot, const std::string& errorSlot, Result& r)
{
    long long known = slot.load(std::memory_order_acquire);
    if (known == -1) return false;
    if (known >= 0) {
        r.count = static_cast<decltype(r.count)>(known);
    } else {
        std::lock_guard<std::mutex> lock(settingsCache().mutex);
        r.error = errorSlot;
    }
    return true;
}
#endif

//! availableCores() now, with everything it found (warnings included, not
//! yet given). On R's main thread it reads the options (unless they are
//! unchanged since the last call) and updates the cache; on other threads in
//! R it answers from the cache. Without R: the environment, on any thread.
RCPPSPOOL_HIDDEN inline engine::CoresResult coresNow()
{
    auto& cache = settingsCache();
    const bool withOptions = canReadOptions();
#ifndef RCPPSPOOL_STANDALONE
    if (!withOptions) {
        engine::CoresResult r;
        r.rule = "cached";
        if (fromCache(cache.cores, cache.coresError, r)) return r;
    }
#endif
    // The thread's own (thread_local; see threadLocalObject() for mingw-w64).
    Memo<engine::CoresResult>& memo = *engine::runtime::threadLocalObject<Memo<engine::CoresResult>>();
    bool computed = false;
    const engine::CoresResult& r =
        memoized(memo, withOptions, [&](const engine::OptionReader& o, const engine::EnvReader& e, int a) {
            computed = true;
            return computeCores(o, e, a);
        });
    if (computed && withOptions) remember(cache.cores, cache.coresError, r.count, r.error);
    return r;
}

//! defaultThreads() now, as coresNow().
RCPPSPOOL_HIDDEN inline engine::ThreadsResult threadsNow()
{
    auto& cache = settingsCache();
    const bool withOptions = canReadOptions();
#ifndef RCPPSPOOL_STANDALONE
    if (!withOptions) {
        engine::ThreadsResult r;
        r.source = "cached";
        if (fromCache(cache.threads, cache.threadsError, r)) return r;
    }
#endif
    // The thread's own (thread_local; see threadLocalObject() for mingw-w64).
    Memo<engine::ThreadsResult>& memo = *engine::runtime::threadLocalObject<Memo<engine::ThreadsResult>>();
    bool computed = false;
    const engine::ThreadsResult& r =
        memoized(memo, withOptions, [&](const engine::OptionReader& o, const engine::EnvReader& e, int a) {
            computed = true;
            return engine::computeDefaultThreads(o, e, [&] {
                engine::CoresResult c = computeCores(o, e, a);
                if (withOptions) remember(cache.cores, cache.coresError, c.count, c.error);
                return c;
            });
        });
    if (computed && withOptions) remember(cache.threads, cache.threadsError, static_cast<long long>(r.count), r.error);
    return r;
}

//! The warnings not given before (by this shared object): each one is given
//! once, not at every loop.
RCPPSPOOL_HIDDEN inline std::vector<std::string> newWarnings(const std::vector<std::string>& warnings)
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

namespace runtime {

//! A count computed by `now` (detail::coresNow or threadsNow) into `*out`,
//! its new warnings given; a bad setting is kInvalidArgument, its message
//! starting with `prefix`, as the public functions' std::invalid_argument.
template <class Result>
int countNow(Result (*now)(), const char* prefix, std::size_t* out, char* message, std::size_t size) noexcept
{
    return guarded(message, size, [&] {
        const Result r = now();
        detail::giveWarnings(r.warnings);
        if (!r.error.empty()) throw std::invalid_argument(prefix + r.error);
        *out = static_cast<std::size_t>(r.count);
    });
}

//! ApiTable::availableCores.
inline int availableCores(std::size_t* out, char* message, std::size_t size)
{
    return countNow(&detail::coresNow, "availableCores(): ", out, message, size);
}

//! ApiTable::defaultThreads.
inline int defaultThreads(std::size_t* out, char* message, std::size_t size)
{
    return countNow(&detail::threadsNow, "defaultThreads(): ", out, message, size);
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
