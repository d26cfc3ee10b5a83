// TaskGroup: structured task parallelism (run, then wait for all of them).
#pragma once

#include "abi.h"

#include <exception>
#include <utility>

#include "engine/context.h"
#include "engine/loop.h"
#include "thread_pool.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! A set of tasks waited for together, as tbb::task_group.
//!
//! run() queues a task; wait() runs other tasks while it waits (on a worker)
//! and rethrows the first exception; once a task throws, the group's tasks
//! that have not started are cancelled. Groups nest: a task may create its own
//! group, and cancelling a group cancels the groups and loops started inside
//! its tasks. The destructor waits (without rethrowing).
class TaskGroup {
public:
    //! A group running on the global pool.
    TaskGroup() : TaskGroup(ThreadPool::globalInstance()) {}
    explicit TaskGroup(ThreadPool& pool)
        : sched_(pool.scheduler()), ctx_(engine::Scheduler::enclosingContext())
    {}
    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;

    ~TaskGroup()
    {
        if (!ctx_.done() && !sched_.forked()) sched_.waitUntil(&ctx_, [this] { return ctx_.done(); });
    }

    //! Queues `f()` (copied, or moved if an rvalue).
    template <class F>
    void run(F&& f)
    {
        ctx_.add(1);
        sched_.submit(engine::Task::make(std::forward<F>(f), &ctx_));
    }

    //! Waits for all tasks run so far; rethrows the first exception. The group
    //! can be reused afterwards. On R's main thread an interrupt cancels the
    //! group and throws UserInterruptException once running tasks are done.
    void wait()
    {
        // A recursion's join on a worker: the group's tasks are on top of
        // its own deque; once they are run and none failed, nothing is left
        // to do, and no wait is set up (callgrind, fib with one task per
        // call on 1 worker: 429 instead of 450 instructions per spawn).
        if (engine::Task t; sched_.joinOwn([this] { return ctx_.done(); }, [](const engine::Task&) { return false; },
                                           t) == engine::Scheduler::OwnJoin::done &&
                            !ctx_.hasError()) {
            ctx_.uncancel();
            return;
        }
        const bool service = sched_.isServiceThread();
        if (!sched_.forked()) sched_.waitUntilDoneOrInterrupted(service, &ctx_, [&] { return ctx_.done(); });
        if (!ctx_.done()) {  // interrupted
            ctx_.cancel();
            sched_.waitUntil(&ctx_, [this] { return ctx_.done(); });
            ctx_.takeError();
        }
        // Off the service thread and without an error there is nothing to end
        // (a recursion's common case).
        if (ctx_.hasError())
            engine::endBlockingCall(ctx_.takeError(), service);
        else if (service)
            engine::endBlockingCall(nullptr, service);
        ctx_.uncancel();
    }

    //! Tasks of the group that have not started will not run.
    void cancel() { ctx_.cancel(); }
    bool isCancelled() const { return ctx_.cancelled(); }

private:
    engine::Scheduler& sched_;
    engine::Context ctx_;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
