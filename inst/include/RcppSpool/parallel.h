// Free functions on the global pool: parallelFor, push, async, wait, ...
#pragma once

#include "abi.h"

#include <cstddef>
#include <future>
#include <iterator>
#include <type_traits>
#include <utility>

#include "client/future_state.h"
#include "client/loop_call.h"
#include "cores.h"
#include "deferrable_future.h"
#include "future.h"
#include "task_future.h"
#include "thread_pool.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! Runs `f(i)` for every i in [begin, end) on up to `nThreads` threads (the
//! caller and nThreads - 1 workers of the global pool) and returns when all
//! are done; rethrows the first exception `f` threw (the remaining iterations
//! are skipped). The range is cut into one contiguous block per thread (as
//! OpenMP's static schedule does), each run in chunks that grow while they
//! are short; a thread whose block is done takes chunks from the block with
//! the most left. nBatches > 0 bounds the split: no piece gets smaller than
//! (end - begin) / nBatches (unless the range is). nThreads 0 or 1 runs serially
//! on the caller. Nested calls (from inside `f`) work and help.
//!
//! `f` may instead be a range body, `f(b, e)` with b, e of type ptrdiff_t
//! (or convertible from it), called once per chunk [b, e): set-up hoisted
//! out of the inner loop, an inner loop the compiler can vectorise. The
//! chunks are the same as for an index body (blocks per thread, sized
//! adaptively, bounded by nBatches); cancellation and interrupts are checked
//! between chunks. A callable that accepts both forms is called with ranges.
//!
//!     RcppSpool::parallelFor(0, n, [&](std::ptrdiff_t b, std::ptrdiff_t e) {
//!         for (std::ptrdiff_t i = b; i < e; ++i) y[i] = a * x[i] + y[i];
//!     });
//!
//! nThreads' default, table::kAutoThreads, means defaultThreads(), which
//! the runtime reads when the loop starts: the loop itself is the runtime's
//! code, compiled once (see table/api_table.h); what this template compiles
//! in the caller is the body's chunk loop and one call.
template <class F>
void parallelFor(std::ptrdiff_t begin, std::ptrdiff_t end, F&& f, std::size_t nThreads = table::kAutoThreads,
                 std::size_t nBatches = 0)
{
    client::parallelFor(begin, end, f, nThreads, nBatches);
}

//! Runs `f(item)` for every element of `items`, as parallelFor.
template <class I, class F>
void parallelForEach(I& items, F&& f, std::size_t nThreads = table::kAutoThreads, std::size_t nBatches = 0)
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
//! Returns a TaskFuture<R, Call>, a Future<R> typed by the call, whose
//! get() runs the task itself when it can take it back (see TaskFuture);
//! it converts by move to Future<R>, std::future<R> and
//! std::shared_future<R>. (A callable aligned beyond what operator new
//! gives: a Future<R>.)
template <class F, class... Args>
auto async(F&& f, Args&&... args)
{
    using R = detail::ResultOf<F, Args...>;
    auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
    using Call = decltype(call);
    auto& pool = ThreadPool::globalInstance();
    if constexpr (client::kTakenBackByGetter<R, Call>)
        return pool.template pushBound<R, TaskFuture<R, Call>>(std::move(call));
    else
        return pool.template pushBound<R, Future<R>>(std::move(call));
}

namespace detail {
//! pushReturn() out of line, for async(async | deferred): a caller that
//! defers most of its calls (fine-grained recursion) then keeps a smaller
//! frame (fewer registers saved at every call of it).
//! The call by value: a small one comes in registers, where the caller
//! keeps it (by reference, it went through the stack at every spawn,
//! kept or queued).
template <class R, class Call>
[[gnu::noinline]] Future<R> queueCall(ThreadPool& pool, Call call)
{
    return pool.template pushBound<R, Future<R>>(std::move(call));
}
}  // namespace detail

//! async with a std::launch policy, as std::async:
//! - `std::launch::async` queues a task (as async(f, args...));
//! - `std::launch::deferred` runs `f` on the thread that first calls get() or
//!   wait() on the Future; a Future destroyed before that drops the work;
//! - both (`std::launch::async | std::launch::deferred`) let the library
//!   choose per call. Called on a worker of the pool that already has tasks
//!   of its own queued (kLazyDepth, 2) while no worker is hungry (searching
//!   for work, asleep for want of it, or waiting for a result with nothing
//!   to help with), from deeper in the stack than the last call that worker
//!   queued, the call is deferred: it runs as a plain call in
//!   get() or wait() (or wait_for()), or when the Future is destroyed, on the
//!   thread that holds the Future; no work is lost. Otherwise (on any other
//!   thread, when a worker could take it, or from the frame that queued the
//!   last call, or a shallower one) it is queued. Recursive code
//!   (fib, quicksort, branch and bound) thus costs about a plain call per
//!   spawn once every worker is busy, and still spreads: a hungry worker
//!   gets the next spawn, and the calls queued are those near the root of
//!   the recursion (the big ones), where thieves find them. A loop that
//!   spawns many calls from one function queues them all, as
//!   `std::launch::async` would: kept on its thread, they would be out of
//!   every thief's reach. Callables larger than 48 bytes, or aligned beyond
//!   a pointer, are queued.
//!
//! The result is a DeferrableFuture<R, Call> (Call: `f` bound to its
//! arguments), a Future<R> that keeps a deferred call itself, typed, so
//! that get() runs it as a plain call; it converts by move to Future<R>,
//! std::future<R> and std::shared_future<R>. For a callable that is always
//! queued (see above) it is a Future<R>.
template <class F, class... Args>
auto async(std::launch policy, F&& f, Args&&... args)
{
    using R = detail::ResultOf<F, Args...>;
    using Call = decltype(detail::bind(std::forward<F>(f), std::forward<Args>(args)...));
    constexpr bool keepable = engine::DeferredCall<R>::template fits<Call>;
    using Result = std::conditional_t<keepable, DeferrableFuture<R, Call>, Future<R>>;
    auto& pool = ThreadPool::globalInstance();
    const bool mayQueue = (policy & std::launch::async) == std::launch::async;
    const bool mayDefer = (policy & std::launch::deferred) == std::launch::deferred;
    if (mayQueue) {
        auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
        if constexpr (keepable) {
            const char frame = 0;  // where in the stack the spawn is (see prefersCallerRuns())
            if (mayDefer) {
                if (RCPPSPOOL_API(prefersCallerRuns)(pool.handle(), &frame))
                    return Result(engine::deferTag, std::move(call));
                return Result(detail::queueCall<R>(pool, std::move(call)));
            }
        }
        return Result(pool.template pushBound<R, Future<R>>(std::move(call)));
    }
    auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
    auto* state = new client::FutureState<R>(pool.handle());
    // Run by the Future's own wait, while the Future holds the state.
    state->setDeferred([state, call]() mutable { state->run(call); });
    return Result(Future<R>(state));
}

//! Waits for all work pushed to the global pool (see ThreadPool::wait()).
inline void wait() { ThreadPool::globalInstance().wait(); }

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
