// TaskGroup: structured task parallelism (run, then wait for all of them).
#pragma once

#include "abi.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "client/api.h"
#include "client/calls.h"
#include "client/make_task.h"
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
//!
//! The group's state is the runtime's, made when the first task is queued
//! (or cancel() is called), inside the task that makes that call, and freed
//! by wait(); this object holds its address (and a kept task: 128 bytes in
//! all, where the state in it made 384).
//!
//! A task nobody could steal is not queued (lazy task creation): where the
//! pool would rather the caller ran it (the rule of async(std::launch::async
//! | std::launch::deferred): on a worker whose deque holds tasks for
//! thieves, no worker of the pool hungry, deeper in the stack than the last
//! task that worker queued), a group with no task queued keeps the task in
//! itself, and wait() (or the destructor) runs it as a plain call: a
//! recursion's spawn then costs about eighty instructions instead of
//! about four hundred. A second run() queues the kept task first, so a
//! group keeps at most one, and only while it is its only task. A kept task
//! runs as part of the waiter: work it pushes with ThreadPool::push()
//! counts as the waiter's, the groups and loops it starts are cancelled
//! with the waiter's rather than with this group, and a timeline shows its
//! time in the waiter's span. cancel(), or the user's interrupt, before it
//! runs drops it, as either drops a queued task.
//!
//! Aligned to a cache line (its holder's frame is realigned, 4 instructions
//! a call): unaligned (its 72 bytes 16-aligned), fine-grained fib with a
//! group a call (bench_tasks --grain fine) took 10% longer, on one thread
//! and on two, with 14% fewer instructions.
class alignas(64) TaskGroup {
public:
    //! A group running on the global pool.
    TaskGroup() : TaskGroup(ThreadPool::globalInstance()) {}
    explicit TaskGroup(ThreadPool& pool) : pool_(pool.handle()) {}
    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;

    //! Waits for the group's tasks (without rethrowing their exception).
    ~TaskGroup()
    {
        if (kept()) runKeptAtEnd();
        if (isOpen()) RCPPSPOOL_API(groupClose)(&group_);
    }

    //! Queues `f()` (copied, or moved if an rvalue), or keeps it (see above).
    template <class F>
    void run(F&& f)
    {
        if (!keptOp_ && !isOpen()) {
            const char frame = 0;  // where in the stack the spawn is (see prefersCallerRuns())
            // 1: the worker's rule; 2 (no workers, or in a forked child) is
            // not taken: there run() runs the task as it always did.
            if (RCPPSPOOL_API(prefersCallerRuns)(pool_, &frame) == 1) {
                client::makeTaskIn(keptOp_, keptStorage_, std::forward<F>(f));
                return;
            }
        } else if (kept()) {
            queueKept();
        }
        table::TaskUnit task = client::makeTask(std::forward<F>(f));
        queue(task);
    }

    //! Waits for all tasks run so far; rethrows the first exception. The group
    //! can be reused afterwards. On R's main thread an interrupt cancels the
    //! group and throws UserInterruptException once running tasks are done.
    void wait()
    {
        if (kept()) runKept(true);
        if (isOpen()) client::callForError(RCPPSPOOL_API(groupWait), static_cast<void*>(&group_));
    }

    //! Tasks of the group that have not started will not run.
    void cancel() { client::call(RCPPSPOOL_API(groupCancel), static_cast<void*>(&group_), pool_); }
    //! True once cancel() was called or a task threw, until wait() returns.
    bool isCancelled() const
    {
        return isOpen() && RCPPSPOOL_API(groupCancelled)(const_cast<void**>(&group_)) != 0;
    }

private:
    // keptOp_ while the kept task runs: a run() meanwhile (the task itself
    // may call it) queues, a wait() (the same) does not run it again. Not a
    // function: one comparison tells a task to run from both null and this.
    static table::TaskOp running() noexcept { return reinterpret_cast<table::TaskOp>(std::uintptr_t{1}); }
    // A kept task not yet running.
    bool kept() const noexcept { return reinterpret_cast<std::uintptr_t>(keptOp_) > 1; }
    // The kept task, run here, in place: dropped if cancel() came first (it
    // opened the group) or the user interrupted, as the runtime drops a
    // queued task. `rethrow`: wait()'s; the destructor's drops the error.
    [[gnu::always_inline]] void runKept(bool rethrow)
    {
        const table::TaskOp op = keptOp_;
        if (isOpen() || client::interruptRequested()) {
            keptOp_ = nullptr;
            op(table::kTaskDiscard, keptStorage_);
            return;
        }
        keptOp_ = running();
        table::ErrorBox* e = op(table::kTaskRun, keptStorage_);
        keptOp_ = nullptr;
        if (e) keptFailed(e, rethrow);
    }
    // The destructor's runKept() (out of line: the destructor's common case
    // is two tests, inline).
    [[gnu::noinline]] void runKeptAtEnd() noexcept { runKept(false); }
    // The kept task threw. If it queued tasks of this group, those not
    // started are cancelled and the others waited for (an error of theirs
    // is dropped: the kept task's is the one wait() rethrows).
    [[gnu::noinline, gnu::cold]] void keptFailed(table::ErrorBox* e, bool rethrow)
    {
        if (isOpen()) {
            RCPPSPOOL_API(groupCancel)(&group_, pool_, nullptr, 0);
            table::ErrorBox* other = nullptr;
            RCPPSPOOL_API(groupWait)(&group_, &other, nullptr, 0);
            if (other) other->destroy(other);
        }
        if (rethrow) e->rethrow(e);
        e->destroy(e);
    }
    // A second task: the kept one is queued first, as if it had never been kept.
    [[gnu::noinline]] void queueKept()
    {
        table::TaskUnit task;
        task.op = keptOp_;
        std::memcpy(task.storage, keptStorage_, sizeof(task.storage));
        keptOp_ = nullptr;
        queue(task);
    }
    // Hands `task` to the runtime as one of this group's (opening the group).
    void queue(table::TaskUnit& task)
    {
        const int status = RCPPSPOOL_API(submit)(pool_, table::kSubmitToGroup, &group_, &task, nullptr, 0);
        if (status != table::kOk) client::discardAndThrow(task, status);
    }

    // The contract's open mark (table::GroupStorage).
    bool isOpen() const noexcept { return group_ != nullptr; }

    void* pool_;
    table::GroupStorage group_ = nullptr;  // the runtime's group while open
    // A task kept for wait(): its op (null: none; running(): it runs) and
    // its callable, as a task record holds them (client::makeTaskIn()).
    table::TaskOp keptOp_ = nullptr;
    alignas(8) unsigned char keptStorage_[table::TaskUnit::kStorageBytes];
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
