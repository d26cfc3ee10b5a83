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
//! starts with the first run() (or cancel()), inside the task that makes
//! that call, and ends with wait().
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
        if (isOpen()) RCPPSPOOL_API(groupClose)(storage_);
    }

    //! Queues `f()` (copied, or moved if an rvalue).
    template <class F>
    void run(F&& f)
    {
        table::TaskUnit task = client::makeTask(std::forward<F>(f));
        const int status = RCPPSPOOL_API(submit)(pool_, table::kSubmitToGroup, storage_, &task, nullptr, 0);
        if (status != table::kOk) client::discardAndThrow(task, status);
    }

    //! Waits for all tasks run so far; rethrows the first exception. The group
    //! can be reused afterwards. On R's main thread an interrupt cancels the
    //! group and throws UserInterruptException once running tasks are done.
    void wait()
    {
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
    // The contract's open mark: the storage's first word (ApiTable::groupWait).
    bool isOpen() const noexcept
    {
        void* mark;
        std::memcpy(&mark, storage_, sizeof(mark));
        return mark != nullptr;
    }

    void* pool_;
    alignas(table::kGroupAlign) unsigned char storage_[table::kGroupBytes];
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
