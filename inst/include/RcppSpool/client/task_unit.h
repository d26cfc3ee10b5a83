// What a client hands the runtime as a task, a future's completion, a
// group: the contract layouts of the table's task entries (api_table.h).
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
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

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

//! How many bytes, aligned to kGroupAlign, a TaskGroup keeps for the
//! runtime's group (its context): fixed by the contract.
constexpr std::size_t kGroupBytes = 256;
constexpr std::size_t kGroupAlign = 64;

//! A chunk of a loop nobody blocks on (ThreadPool::parallelFor): runs
//! [begin, end) of `self`'s body; returns the boxed error if it threw.
using ChunkFn = ErrorBox* (*)(void* self, std::ptrdiff_t begin, std::ptrdiff_t end);

namespace task_detail {

//! The exception of the catch block this is called in, boxed.
struct ExceptionBox final : ErrorBox {
    std::exception_ptr error;
    static void destroyIt(ErrorBox* b) noexcept { delete static_cast<ExceptionBox*>(b); }
    [[noreturn]] static void rethrowIt(ErrorBox* b)
    {
        std::exception_ptr e = std::move(static_cast<ExceptionBox*>(b)->error);
        delete static_cast<ExceptionBox*>(b);
        std::rethrow_exception(e);
    }
};
[[gnu::noinline]] inline ErrorBox* boxCurrentException() noexcept
{
    auto* box = new (std::nothrow) ExceptionBox();
    if (!box) std::terminate();  // no memory to keep the error in
    box->destroy = &ExceptionBox::destroyIt;
    box->rethrow = &ExceptionBox::rethrowIt;
    box->error = std::current_exception();
    return box;
}

// A closure may offer `discard()`: called instead of running it when the
// task is dropped (a future then reports the cancellation).
template <class Fn, class = void>
struct HasDiscard : std::false_type {};
template <class Fn>
struct HasDiscard<Fn, std::void_t<decltype(std::declval<Fn&>().discard())>> : std::true_type {};

template <class Fn>
constexpr bool fitsInline()
{
    return sizeof(Fn) <= TaskUnit::kStorageBytes && alignof(Fn) <= 8 && std::is_trivially_copyable<Fn>::value;
}

template <class Fn>
ErrorBox* inlineOp(int what, unsigned char* s) noexcept
{
    // Trivially copyable: no destructor to call.
    Fn& f = *std::launder(reinterpret_cast<Fn*>(s));
    if (what == kTaskRun) {
        try {
            f();
        } catch (...) {
            return boxCurrentException();
        }
    } else if constexpr (HasDiscard<Fn>::value) {
        f.discard();
    }
    return nullptr;
}

template <class Fn>
ErrorBox* heapOp(int what, unsigned char* s) noexcept
{
    Fn* p;
    std::memcpy(&p, s, sizeof(p));
    ErrorBox* error = nullptr;
    if (what == kTaskRun) {
        try {
            (*p)();
        } catch (...) {
            error = boxCurrentException();
        }
    } else if constexpr (HasDiscard<Fn>::value) {
        p->discard();
    }
    delete p;
    return error;
}

}  // namespace task_detail

//! The task that runs `f()` (moved or copied in). Closures that are
//! trivially copyable and at most 48 bytes (lambdas that capture references,
//! pointers and numbers: the common case) live in the record, so queueing
//! them allocates nothing; others live on the heap.
template <class F>
TaskUnit makeTask(F&& f)
{
    using Fn = std::decay_t<F>;
    TaskUnit t;
    if constexpr (task_detail::fitsInline<Fn>()) {
        ::new (static_cast<void*>(t.storage)) Fn(std::forward<F>(f));
        t.op = &task_detail::inlineOp<Fn>;
    } else {
        Fn* p = new Fn(std::forward<F>(f));
        std::memcpy(t.storage, &p, sizeof(p));
        t.op = &task_detail::heapOp<Fn>;
    }
    return t;
}

//! The op of a task made from an `Fn` held in the record, else null.
template <class Fn>
constexpr TaskOp inlineOpOf() noexcept
{
    if constexpr (task_detail::fitsInline<Fn>())
        return &task_detail::inlineOp<Fn>;
    else
        return nullptr;
}

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
