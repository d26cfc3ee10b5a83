// TaskGroup: structured task parallelism (run, then wait for all of them).
#pragma once

#include "abi.h"

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
//! The group's state is the runtime's, kept in this object's storage: it
//! starts with the first task queued (or cancel()), inside the task that
//! makes that call, and ends with wait().
//!
//! A task nobody could steal is not queued (lazy task creation): where the
//! pool would rather the caller ran it (the rule of async(std::launch::async
//! | std::launch::deferred): on a worker whose deque holds tasks for
//! thieves, no worker of the pool hungry, deeper in the stack than the last
//! task that worker queued), a group with no task queued keeps the task in
//! itself, and wait() (or the destructor) runs it as a plain call: a
//! recursion's spawn then costs about a hundred instructions instead of
//! about four hundred. A second run() queues the kept task first, so a
//! group keeps at most one, and only while it is its only task. A kept task
//! runs as part of the waiter: work it pushes with ThreadPool::push()
//! counts as the waiter's, the groups and loops it starts are cancelled
//! with the waiter's rather than with this group, and a timeline shows its
//! time in the waiter's span. cancel(), or the user's interrupt, before it
//! runs drops it, as either drops a queued task.
class TaskGroup {
public:
    //! A group running on the global pool.
    TaskGroup() : TaskGroup(ThreadPool::globalInstance()) {}
    explicit TaskGroup(ThreadPool& pool) : pool_(pool.handle()) { std::memset(storage_, 0, sizeof(void*)); }
    TaskGroup(const TaskGroup&) = delete;
    TaskGroup& operator=(const TaskGroup&) = delete;

    //! Waits for the group's tasks (without rethrowing their exception).
    ~TaskGroup()
    {
        if (kept_.op) runKeptAtEnd();
        if (isOpen()) RCPPSPOOL_API(groupClose)(storage_);
    }

    //! Queues `f()` (copied, or moved if an rvalue), or keeps it (see above).
    template <class F>
    void run(F&& f)
    {
        if (!kept_.op && !isOpen()) {
            const char frame = 0;  // where in the stack the spawn is (see prefersCallerRuns())
            // 1: the worker's rule; 2 (no workers, or in a forked child) is
            // not taken: there run() runs the task as it always did.
            if (RCPPSPOOL_API(prefersCallerRuns)(pool_, &frame) == 1) {
                client::makeTaskIn(kept_, std::forward<F>(f));
                return;
            }
        } else if (kept_.op && kept_.op != &runningOp) {
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
        if (kept_.op) runKept(true);
        if (isOpen()) client::callForError(RCPPSPOOL_API(groupWait), static_cast<void*>(storage_));
    }

    //! Tasks of the group that have not started will not run.
    void cancel() { client::call(RCPPSPOOL_API(groupCancel), static_cast<void*>(storage_), pool_); }
    //! True once cancel() was called or a task threw, until wait() returns.
    bool isCancelled() const
    {
        return isOpen() && RCPPSPOOL_API(groupCancelled)(const_cast<unsigned char*>(storage_)) != 0;
    }

private:
    // The kept task's op while it runs: a run() meanwhile (the task itself
    // may call it) queues, a wait() (the same) does not run it again.
    static table::ErrorBox* runningOp(int, unsigned char*) noexcept { return nullptr; }
    // The kept task, run here, in place: dropped if cancel() came first (it
    // opened the group) or the user interrupted, as the runtime drops a
    // queued task. `rethrow`: wait()'s; the destructor's drops the error.
    [[gnu::always_inline]] void runKept(bool rethrow)
    {
        const table::TaskOp op = kept_.op;
        if (op == &runningOp) return;
        if (isOpen() || client::interruptRequested()) {
            kept_.op = nullptr;
            op(table::kTaskDiscard, kept_.storage);
            return;
        }
        kept_.op = &runningOp;
        table::ErrorBox* e = op(table::kTaskRun, kept_.storage);
        kept_.op = nullptr;
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
            RCPPSPOOL_API(groupCancel)(storage_, pool_, nullptr, 0);
            table::ErrorBox* other = nullptr;
            RCPPSPOOL_API(groupWait)(storage_, &other, nullptr, 0);
            if (other) other->destroy(other);
        }
        if (rethrow) e->rethrow(e);
        e->destroy(e);
    }
    // A second task: the kept one is queued first, as if it had never been kept.
    [[gnu::noinline]] void queueKept()
    {
        table::TaskUnit task = kept_;
        kept_.op = nullptr;
        queue(task);
    }
    // Hands `task` to the runtime as one of this group's (opening the group).
    void queue(table::TaskUnit& task)
    {
        const int status = RCPPSPOOL_API(submit)(pool_, table::kSubmitToGroup, storage_, &task, nullptr, 0);
        if (status != table::kOk) client::discardAndThrow(task, status);
    }

    // The contract's open mark: the storage's first word (ApiTable::groupWait).
    bool isOpen() const noexcept
    {
        void* mark;
        std::memcpy(&mark, storage_, sizeof(mark));
        return mark != nullptr;
    }

    void* pool_;
    table::TaskUnit kept_;  // a task kept for wait(), if `op` is set (runningOp: it runs)
    alignas(table::kGroupAlign) unsigned char storage_[table::kGroupBytes];
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
