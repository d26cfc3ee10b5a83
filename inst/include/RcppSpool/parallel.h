// Free functions on the global pool: parallelFor, push, async, wait, ...
#pragma once

#include "abi.h"

#include <cstddef>
#include <future>
#include <iterator>
#include <type_traits>
#include <utility>

#include "cores.h"
#include "engine/loop.h"
#include "future.h"
#include "thread_pool.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! Runs `f(i)` for every i in [begin, end) on up to `nThreads` threads (the
//! caller and nThreads - 1 workers of the global pool) and returns when all
//! are done; rethrows the first exception `f` threw (the remaining iterations
//! are skipped). Split adaptively; nBatches > 0 bounds the split: no piece
//! gets smaller than (end - begin) / nBatches. nThreads 0 or 1 runs serially
//! on the caller. Nested calls (from inside `f`) work and help.
template <class F>
void parallelFor(std::ptrdiff_t begin, std::ptrdiff_t end, F&& f, std::size_t nThreads = defaultThreads(),
                 std::size_t nBatches = 0)
{
    auto& s = ThreadPool::globalInstance().scheduler();
    engine::blockingFor(s, begin, end, f, nThreads, nBatches);
}

//! Runs `f(item)` for every element of `items`, as parallelFor.
template <class I, class F>
void parallelForEach(I& items, F&& f, std::size_t nThreads = defaultThreads(), std::size_t nBatches = 0)
{
    auto body = [&items, &f](std::ptrdiff_t i) { f(items[i]); };
    parallelFor(0, static_cast<std::ptrdiff_t>(std::size(items)), body, nThreads, nBatches);
}

//! Queues `f(args...)` on the global pool.
template <class F, class... Args>
void push(F&& f, Args&&... args)
{
    ThreadPool::globalInstance().push(std::forward<F>(f), std::forward<Args>(args)...);
}

//! Queues `f(args...)` on the global pool and returns a Future for its result.
template <class F, class... Args>
auto pushReturn(F&& f, Args&&... args)
{
    return ThreadPool::globalInstance().pushReturn(std::forward<F>(f), std::forward<Args>(args)...);
}

//! std::async that scales: runs `f(args...)` as a task of the global pool
//! (never a new thread per call), arguments decay-copied. get() on a worker
//! helps, so recursive async (fib, quicksort, ...) works on any pool size.
template <class F, class... Args>
auto async(F&& f, Args&&... args)
{
    return pushReturn(std::forward<F>(f), std::forward<Args>(args)...);
}

//! async with a std::launch policy: `async` queues the task; `deferred` runs
//! it on the thread that first calls get()/wait(); both bits let the library
//! choose: it runs the task inline at once when the calling worker already
//! has a long queue of its own (all workers are busy), else queues it.
template <class F, class... Args>
auto async(std::launch policy, F&& f, Args&&... args) -> Future<detail::ResultOf<F, Args...>>
{
    using R = detail::ResultOf<F, Args...>;
    auto& pool = ThreadPool::globalInstance();
    const bool mayQueue = (policy & std::launch::async) == std::launch::async;
    const bool mayDefer = (policy & std::launch::deferred) == std::launch::deferred;
    if (mayQueue && !(mayDefer && pool.scheduler().callerIsSaturated()))
        return pool.pushReturn(std::forward<F>(f), std::forward<Args>(args)...);
    auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
    auto* state = new engine::FutureState<R>(&pool.scheduler());
    if (mayQueue) {  // both: run now, inline
        state->run(call);
    } else {
        // Run by the Future's own wait, while the Future holds the state.
        state->setDeferred([state, call]() mutable { state->run(call); });
    }
    return Future<R>(state);
}

//! Waits for all work pushed to the global pool (see ThreadPool::wait()).
inline void wait() { ThreadPool::globalInstance().wait(); }

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
