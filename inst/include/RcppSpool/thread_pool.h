// ThreadPool: the public face of the work-stealing scheduler.
#pragma once

#include "abi.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "cores.h"
#include "engine/future_state.h"
#include "engine/loop.h"
#include "engine/scheduler.h"
#include "future.h"

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
//! Tasks pushed from outside the pool go to a shared queue; tasks pushed by a
//! task go to its worker's own queue, where idle workers steal them. Waiting
//! (wait(), Future::get(), TaskGroup::wait()) on a worker runs other tasks, so
//! nested loops and recursive tasks work; on R's main thread it keeps R
//! responsive (output, progress, interrupts). Idle workers spin for a few
//! microseconds and then sleep: an idle pool uses no CPU.
class ThreadPool {
public:
    //! A pool with defaultThreads() workers.
    ThreadPool() : ThreadPool(defaultThreads()) {}
    //! A pool with `nWorkers` workers; 0 runs every task inline on the caller.
    explicit ThreadPool(std::size_t nWorkers) : ThreadPool(nWorkers, nullptr) {}

    //! Never hangs: waits for running tasks, drops queued ones (none runs
    //! after it returns; futures of dropped tasks report a cancellation).
    //! Call wait() or join() first to finish all work.
    ~ThreadPool() = default;

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    //! The process-wide pool used by the free functions (parallelFor, async, ...).
    //! It starts with defaultThreads() workers; setNumThreads() on it works
    //! before and after first use. Its destruction at exit waits only for
    //! running tasks.
    //! In a package whose headers' ABI version the installed RcppSpool
    //! package does not serve, it borrows that package's workers instead of
    //! starting threads of its own (see engine/thread_lender.h).
    RCPPSPOOL_HIDDEN static ThreadPool& globalInstance();

    //! Queues `f(args...)`; f and args are decay-copied. Returns at once.
    template <class F, class... Args>
    void push(F&& f, Args&&... args)
    {
        checkUsable();
        engine::Context* ctx = sched_->contextForNewWork();
        ctx->add(1);
        sched_->submit(engine::Task::make(detail::bind(std::forward<F>(f), std::forward<Args>(args)...), ctx));
    }

    //! Queues `f(args...)` and returns a Future for its result.
    template <class F, class... Args>
    auto pushReturn(F&& f, Args&&... args) -> Future<detail::ResultOf<F, Args...>>
    {
        checkUsable();
        using R = detail::ResultOf<F, Args...>;
        auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
        using Computes = engine::ResultTask<R, decltype(call)>;
        // Two references: the task's and the Future's.
        auto* state = new engine::FutureState<R>(sched_.get(), 2, engine::Task::inlineKind<Computes>());
        engine::Context* ctx = sched_->contextForResultTask();
        if (ctx) ctx->add(1);
        sched_->submit(engine::Task::make(Computes{state, std::move(call)}, ctx));
        return Future<R>(state);
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
        checkUsable();
        if (end <= begin) return;
        engine::Context* owner = sched_->contextForNewWork();
        owner->add(1);
        auto* loop = new engine::DetachedLoop<std::decay_t<F>>(std::forward<F>(f), *sched_, begin, end, nBatches, owner);
        loop->invite(false);
        loop->release();
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
    void wait() { waitImpl(std::chrono::steady_clock::time_point::max()); }

    //! wait(), then stops the workers. The pool stays usable (as RcppThread's):
    //! the next push or loop starts the same number of workers again.
    void join()
    {
        wait();
        if (joinedWorkers_ == 0) joinedWorkers_ = sched_->numWorkers();
        sched_->resize(0);
    }

    //! wait() for at most `d`; true if all work finished in time.
    template <class Rep, class Per>
    bool waitFor(std::chrono::duration<Rep, Per> d)
    {
        return waitImpl(std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(d));
    }
    //! wait() until `t` at the latest; true if all work finished in time.
    template <class Clock, class Dur>
    bool waitUntil(std::chrono::time_point<Clock, Dur> t)
    {
        return waitFor(t - Clock::now());
    }

    //! While paused no task starts; running tasks go on. Pushing still works.
    void pause() { sched_->pause(); }
    void unpause() { sched_->unpause(); }
    bool isPaused() const { return sched_->isPaused(); }

    std::size_t getNumThreads() const { return sched_->numWorkers(); }
    //! Changes the number of workers (0 to 1024): waits for running tasks,
    //! keeps queued ones. Not callable from a task of this pool.
    void setNumThreads(std::size_t n)
    {
        sched_->resize(checkCount(n));
        joinedWorkers_ = 0;
    }
    void resize(std::size_t n) { setNumThreads(n); }

    //! Tasks pushed and not started yet (including while paused).
    std::size_t getTasksQueued() const { return sched_->tasksQueued(); }
    //! Tasks executing now.
    std::size_t getTasksRunning() const { return sched_->tasksRunning(); }
    std::size_t getTasksTotal() const { return getTasksQueued() + getTasksRunning(); }

    //! The scheduler underneath (for the library's own free functions).
    engine::Scheduler& scheduler() { return *sched_; }

private:
    //! The global pool: defaultThreads() workers, lent by the process's
    //! runtime when this shared object cannot share it.
    struct Global;
    ThreadPool(std::size_t nWorkers, const engine::ThreadLender* lender)
        : sched_(new engine::Scheduler(checkCount(nWorkers), lender))
    {
    }

    static std::size_t checkCount(std::size_t n)
    {
        if (n > 1024) throw std::invalid_argument("RcppSpool: a pool has 0 to 1024 workers, not " + std::to_string(n));
        return n;
    }
    // After join(): bring the workers back.
    void checkUsable()
    {
        if (joinedWorkers_ != 0) sched_->resize(std::exchange(joinedWorkers_, 0));
    }

    bool waitImpl(std::chrono::steady_clock::time_point deadline)
    {
        engine::Scheduler& s = *sched_;
        if (s.forked()) {
            // In a forked child everything ran inline; counts inherited from
            // the parent will never drop.
            engine::endBlockingCall(s.root().hasError() ? s.root().takeError() : nullptr);
            return true;
        }
        engine::Frame* f = engine::currentFrame();
        if (f && f->scheduler == &s) {
            // Inside one of our tasks: wait for what this task pushed, not for itself.
            engine::Context* c = f->children;
            if (!c) return true;
            if (!s.waitUntil(c, [c] { return c->pending() <= 1; }, deadline)) return false;
            if (c->hasError()) std::rethrow_exception(c->takeError());
            return true;
        }
        engine::Context& root = s.root();
        const bool service = engine::onServiceThread();
        bool finished = s.waitUntilDoneOrInterrupted(service, &root, [&] { return root.done(); }, deadline);
        if (service && engine::interruptRequested()) {
            s.dropQueued();
            s.waitUntil(&root, [&] { return root.done(); });
            root.takeError();  // superseded by the interrupt
            engine::endBlockingCall(nullptr);  // throws UserInterruptException
        }
        if (!finished) {
            engine::endBlockingCall(nullptr);
            return false;
        }
        engine::endBlockingCall(root.hasError() ? root.takeError() : nullptr);
        return true;
    }

    std::unique_ptr<engine::Scheduler> sched_;
    std::size_t joinedWorkers_ = 0;  // workers to restart after join(), if any
};

struct ThreadPool::Global : ThreadPool {
    Global() : ThreadPool(defaultThreads(), engine::runtime::threadLender()) {}
};

RCPPSPOOL_HIDDEN inline ThreadPool& ThreadPool::globalInstance()
{
    static ThreadPool* const pool = engine::runtime::state<Global, engine::runtime::Slot::globalPool>();
    return *pool;
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
