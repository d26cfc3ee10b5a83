// The records a client and the runtime exchange through the table
// (api_table.h): a task, a future's completion, a group's storage. Their
// layouts are fixed by the table's contract and belong to neither side: the
// engine queues and runs these records (engine/task.h), a client packages its
// callables into them (client/make_task.h).
//
// A task is the user's callable packaged by the client as 64 bytes: the
// client's function (`op`, compiled in the client from the callable's type)
// and 48 bytes of storage that hold the callable, or a pointer to it on the
// heap. The runtime queues, steals and runs these records without knowing
// what is in them. An exception thrown by the callable never crosses into
// the runtime: the client's op catches it and returns it boxed (ErrorBox),
// and whoever waits gets the box back and rethrows it.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace table {

//! An error of a client's callback, kept by the client that caught it. The
//! runtime only holds it and hands it to whoever waits (who may be code of
//! another package: the functions are the box's own).
struct ErrorBox {
    void (*destroy)(ErrorBox* self) noexcept;  //!< frees the box (nobody will rethrow it)
    void (*rethrow)(ErrorBox* self);  //!< frees the box and throws its error (never returns)
};

//! What a TaskOp is asked to do.
enum TaskWhat : int {
    kTaskRun = 0,      //!< run the callable, then release it
    kTaskDiscard = 1,  //!< release it without running it (the task was dropped)
};

//! A task's code: runs or discards the callable in `storage`; returns the
//! boxed error of a callable that threw, else null.
using TaskOp = ErrorBox* (*)(int what, unsigned char* storage);

//! A task as it crosses the table: 64 bytes, trivially copyable.
struct TaskUnit {
    static constexpr std::size_t kStorageBytes = 48;
    TaskOp op = nullptr;
    void* context = nullptr;  //!< the runtime's: a client leaves it null
    alignas(8) unsigned char storage[kStorageBytes];
};
static_assert(sizeof(TaskUnit) == 64, "TaskUnit is part of the table's contract");

//! The part of a future's state that the runtime sees: a task that computes
//! a result (a TaskUnit whose storage starts with a pointer to its core)
//! completes it; a waiter waits on its address. The result itself, and its
//! type, stay with the client. C layout.
struct FutureCore {
    void* pool = nullptr;          //!< the runtime's pool that runs the task, or null
    std::atomic<int> refs{1};      //!< owners: the Future, the task (the client's)
    std::atomic<int> ready{0};     //!< 1 once the result (or error) is there
    std::atomic<int> abandoned{0}; //!< 1: nobody will take the result (skip the task)
    int forGetter = 0;             //!< 1: run by the getter itself (set by the runtime)
};

//! A TaskGroup's storage (the `storage` of the table's group entries): one
//! pointer-sized word that the client zeroes, null while the group is
//! closed; the runtime makes its group when the group opens (its first task
//! queued, or cancel()), keeps its address there, and frees it and zeroes
//! the word when the group closes. Since table version 6. Before it the
//! runtime kept its group in the storage itself, 256 bytes aligned to 64
//! whose first word was the open mark: a client built against such headers
//! still works, as the runtime writes only that first word.
using GroupStorage = void*;

//! A chunk of a loop nobody blocks on (ThreadPool::parallelFor): runs
//! [begin, end) of `self`'s body; returns the boxed error if it threw.
using ChunkFn = ErrorBox* (*)(void* self, std::ptrdiff_t begin, std::ptrdiff_t end);

}  // namespace table
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
