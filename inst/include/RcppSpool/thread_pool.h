// ThreadPool: the public face of the work-stealing scheduler.
#pragma once

#include "abi.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "client/api.h"
#include "client/calls.h"
#include "client/future_state.h"
#include "client/make_task.h"
#include "cores.h"
#include "engine/range_body.h"
#include "future.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "runtime/task_entries.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

namespace detail {

//! Arguments stored by value next to a callable. An aggregate rather than
//! std::tuple because std::tuple is never trivially copyable, and trivially
//! copyable closures travel without allocation (engine/task.h). The rest of
//! the arguments is a base, not a member, so that the empty pack at the end
//! takes no room: as a member it took a byte and its padding (a lambda of
//! 48 bytes became 56, too large for a Future to keep in place, and
//! async(async | deferred) queued every branch of knapsack's search).
template <class... A>
struct ArgPack;
template <>
struct ArgPack<> {
    template <bool Move, class F, class... X>
    decltype(auto) apply(F& f, X&&... x)
    {
        return std::invoke(f, std::forward<X>(x)...);
    }
};
template <class H, class... T>
struct ArgPack<H, T...> : ArgPack<T...> {
    H head;
    template <bool Move, class F, class... X>
    decltype(auto) apply(F& f, X&&... x)
    {
        ArgPack<T...>& tail = *this;
        if constexpr (Move)
            return tail.template apply<Move>(f, std::forward<X>(x)..., std::move(head));
        else
            return tail.template apply<Move>(f, std::forward<X>(x)..., head);
    }
};
inline ArgPack<> packArgs() { return {}; }
template <class H, class... T>
ArgPack<std::decay_t<H>, std::decay_t<T>...> packArgs(H&& h, T&&... t)
{
    return {packArgs(std::forward<T>(t)...), std::forward<H>(h)};
}

//! `f(args...)` with f and args decay-copied, as std::thread and std::async do.
template <class F, class... A>
struct BoundCall : ArgPack<A...> {
    F f;
    //! Arguments are passed as rvalues, as std::thread passes them, unless f
    //! cannot take them so (a parameter `T&`); then as lvalues, as std::bind
    //! (and so RcppThread) passes them.
    static constexpr bool byMove = std::is_invocable_v<F&, A&&...>;
    decltype(auto) operator()() { return this->template apply<byMove>(f); }
};
template <class F, class... A>
BoundCall<std::decay_t<F>, std::decay_t<A>...> bind(F&& f, A&&... a)
{
    return {packArgs(std::forward<A>(a)...), std::forward<F>(f)};
}

template <class F, class... A>
using ResultOf = typename std::conditional_t<
    std::is_invocable_v<std::decay_t<F>&, std::decay_t<A>&&...>,
    std::invoke_result<std::decay_t<F>&, std::decay_t<A>&&...>,
    std::invoke_result<std::decay_t<F>&, std::decay_t<A>&...>>::type;

}  // namespace detail

//! A pool of worker threads with work-stealing queues.
//!
//! Tasks pushed from outside the pool go to a queue of the first outside
//! thread that pushes (R's main thread, say), from which idle workers take
//! them in batches, or, from other outside threads, to a shared queue; tasks
//! pushed by a task go to its worker's own queue, where idle workers steal
//! them. Waiting
//! (wait(), Future::get(), TaskGroup::wait()) on a worker runs other tasks, so
//! nested loops and recursive tasks work; on R's main thread it keeps R
//! responsive (output, progress, interrupts). Idle workers spin for a few
//! microseconds and then sleep: an idle pool uses no CPU.
//!
//! The pool itself is the runtime's (compiled once, in RcppSpool's shared
//! library in R): this class holds its handle and packages the tasks.
class ThreadPool {
public:
    //! A pool with defaultThreads() workers.
    ThreadPool() : ThreadPool(table::kAutoThreads) {}
    //! A pool with `nWorkers` workers (0 to 1024); 0 runs every task inline
    //! on the caller.
    explicit ThreadPool(std::size_t nWorkers)
    {
        client::call(RCPPSPOOL_API(poolCreate), nWorkers, &pool_);
        owned_ = true;
    }

    //! Never hangs: waits for running tasks, drops queued ones (none runs
    //! after it returns; futures of dropped tasks report a cancellation).
    //! Call wait() or join() first to finish all work.
    ~ThreadPool()
    {
        if (owned_) RCPPSPOOL_API(poolDestroy)(pool_);
    }

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    //! The process-wide pool used by the free functions (parallelFor, async, ...).
    //! It starts with defaultThreads() workers; setNumThreads() on it works
    //! before and after first use. One per process, whichever package asks:
    //! the runtime's.
    RCPPSPOOL_HIDDEN static ThreadPool& globalInstance()
    {
        // Inline, the first-use check only: every async() and TaskGroup asks.
        static ThreadPool* const global = makeGlobal();
        return *global;
    }

    //! Queues `f(args...)`; f and args are decay-copied. Returns at once.
    template <class F, class... Args>
    void push(F&& f, Args&&... args)
    {
        submit(table::kSubmitPush, client::makeTask(detail::bind(std::forward<F>(f), std::forward<Args>(args)...)));
    }

    //! Queues `f(args...)` and returns a Future for its result.
    template <class F, class... Args>
    auto pushReturn(F&& f, Args&&... args) -> Future<detail::ResultOf<F, Args...>>
    {
        using R = detail::ResultOf<F, Args...>;
        return pushBound<R, Future<R>>(detail::bind(std::forward<F>(f), std::forward<Args>(args)...));
    }

    //! pushReturn() of a call already bound to its arguments (detail::bind()),
    //! whose result is an R, returned as a `Handle`: a Future<R>, or a
    //! TaskFuture that knows the call's type (async()'s).
    template <class R, class Handle, class Call>
    Handle pushBound(Call&& call)
    {
        using State = client::FutureState<R>;
        using C = std::decay_t<Call>;
        using Computes = client::ResultTaskOf<R, C>;
        // Two references: the task's and the Future's.
        if constexpr (client::kStateHoldsCall<R, C>) {
            // The state holds the call; the record is the state's core.
            State* s = State::withCall(pool_, 2, client::inlineOpOf<Computes>(), std::forward<Call>(call));
            Handle future(s);
            submitResult(client::makeTask(Computes{s}));
            return future;
        } else {
            // The record holds the call (over-aligned: a pointer to it).
            auto* s = new State(pool_, 2, client::inlineOpOf<Computes>());
            Handle future(s);
            submitResult(client::makeTask(Computes{s, std::forward<Call>(call)}));
            return future;
        }
    }

    //! Queues `f(item)` for every item (each item copied into its task).
    template <class F, class I>
    void map(F&& f, I&& items)
    {
        for (auto&& item : items) push(f, item);
    }

    //! Runs `f(i)` for i in [begin, end) on the pool's workers; returns at
    //! once, wait() ends it. `f` is copied (moved if an rvalue). nBatches > 0
    //! bounds the split: no piece is smaller than (end - begin) / nBatches.
    //! `f` may be a range body `f(b, e)`, as for RcppSpool::parallelFor().
    template <class F>
    void parallelFor(std::ptrdiff_t begin, std::ptrdiff_t end, F&& f, std::size_t nBatches = 0)
    {
        if (end <= begin) return;
        using Body = DetachedBody<std::decay_t<F>>;
        auto* body = new Body{std::forward<F>(f)};
        // The runtime owns `body` from here on (also if the call fails).
        client::call(RCPPSPOOL_API(poolParallelFor), pool_, begin, end, &Body::chunk, static_cast<void*>(body),
                     &Body::destroy, nBatches);
    }

    //! Runs `f(item)` for every element of `items` (by reference: keep
    //! `items` alive until wait() returns); returns at once.
    template <class I, class F>
    void parallelForEach(I& items, F&& f, std::size_t nBatches = 0)
    {
        auto body = [&items, g = std::forward<F>(f)](std::ptrdiff_t i) mutable { g(items[i]); };
        parallelFor(0, static_cast<std::ptrdiff_t>(std::size(items)), std::move(body), nBatches);
    }

    //! Waits until all pushed work is done and rethrows the first exception a
    //! task threw (the pool is clean afterwards). Called from a task of this
    //! pool, waits for (and helps run) the tasks and loops that task pushed
    //! with push(), map() and parallelFor(); results of pushReturn() are waited
    //! for with their Future (its get() helps in the same way). On R's main
    //! thread it keeps R responsive; on an interrupt it drops queued work,
    //! waits for running tasks and throws UserInterruptException.
    void wait() { waitNs(-1); }

    //! wait(), then stops the workers. The pool stays usable (as RcppThread's):
    //! the next push or loop starts the same number of workers again.
    void join()
    {
        wait();
        control(table::kPoolStopWorkers);
    }

    //! wait() for at most `d`; true if all work finished in time.
    template <class Rep, class Per>
    bool waitFor(std::chrono::duration<Rep, Per> d)
    {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
        return waitNs(ns < 0 ? 0 : ns);
    }
    //! wait() until `t` at the latest; true if all work finished in time.
    template <class Clock, class Dur>
    bool waitUntil(std::chrono::time_point<Clock, Dur> t)
    {
        return waitFor(t - Clock::now());
    }

    //! While paused no task starts; running tasks go on. Pushing still works.
    void pause() { control(table::kPoolPause); }
    //! Lets queued tasks start again.
    void unpause() { control(table::kPoolUnpause); }
    //! True while paused.
    bool isPaused() const { return control(table::kPoolIsPaused) != 0; }

    //! The number of workers.
    std::size_t getNumThreads() const { return control(table::kPoolNumThreads); }
    //! Changes the number of workers (0 to 1024): waits for running tasks,
    //! keeps queued ones. Not callable from a task of this pool.
    void setNumThreads(std::size_t n) { control(table::kPoolSetNumThreads, n); }
    //! The same as setNumThreads() (RcppThread's name).
    void resize(std::size_t n) { setNumThreads(n); }

    //! Tasks pushed and not started yet (including while paused).
    std::size_t getTasksQueued() const { return control(table::kPoolTasksQueued); }
    //! Tasks executing now.
    std::size_t getTasksRunning() const { return control(table::kPoolTasksRunning); }
    //! getTasksQueued() + getTasksRunning().
    std::size_t getTasksTotal() const { return getTasksQueued() + getTasksRunning(); }

    //! The runtime's handle of this pool (for the library's own functions).
    void* handle() const noexcept { return pool_; }

#if defined(RCPPSPOOL_RUNTIME_HERE)
    //! The scheduler underneath, where the runtime is compiled in (tests,
    //! benchmarks): clients of the table never see it.
    engine::Scheduler& scheduler() { return static_cast<runtime::Pool*>(pool_)->scheduler(); }
#endif

private:
    struct Global {};
    explicit ThreadPool(Global) { client::call(RCPPSPOOL_API(globalPool), &pool_); }
    // Never destroyed: the runtime's pool lives as long as the runtime.
    [[gnu::noinline]] static ThreadPool* makeGlobal() { return new ThreadPool(Global{}); }

    //! A loop body that the runtime runs in chunks and frees.
    template <class F>
    struct DetachedBody {
        F f;
        static table::ErrorBox* chunk(void* self, std::ptrdiff_t b, std::ptrdiff_t e) noexcept
        {
            try {
                engine::runChunk(static_cast<DetachedBody*>(self)->f, b, e);
                return nullptr;
            } catch (...) {
                return client::task_detail::boxCurrentException();
            }
        }
        static void destroy(void* self) { delete static_cast<DetachedBody*>(self); }
    };

    // By reference, never by value: a TaskUnit passed by value is copied
    // into the argument area in 16-byte loads from the narrower stores that
    // just built it, which the CPU cannot forward (each load waits for the
    // stores to reach the cache). That copy, where this call was not
    // inlined, made fine-grained async() 28% slower (bench_tasks fib, fine).
    void submit(int how, table::TaskUnit&& task)
    {
        const int status = RCPPSPOOL_API(submit)(pool_, how, nullptr, &task, nullptr, 0);
        if (status != table::kOk) client::discardAndThrow(task, status);
    }

    // submit(kSubmitResult, task) in one call of the runtime (futureSubmit).
    void submitResult(table::TaskUnit&& task)
    {
        const int status = RCPPSPOOL_API(futureSubmit)(pool_, &task);
        if (status != table::kOk) client::discardAndThrow(task, status);
    }

    std::size_t control(int what, std::size_t value = 0) const
    {
        std::size_t out = 0;
        client::call(RCPPSPOOL_API(poolControl), pool_, what, value, &out);
        return out;
    }

    bool waitNs(std::int64_t timeoutNs)
    {
        int finished = 0;
        client::callForError(RCPPSPOOL_API(poolWait), pool_, timeoutNs, &finished);
        return finished != 0;
    }

    void* pool_ = nullptr;
    bool owned_ = false;  // false for the global pool's handle
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
