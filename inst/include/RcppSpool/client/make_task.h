// How a client packages a callable as the table's task record
// (table/task_unit.h): the record's op, compiled in the client from the
// callable's type, which runs it and boxes what it throws.
#pragma once

#include "../abi.h"

#include <cstring>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "../table/task_unit.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

namespace task_detail {

//! The exception of the catch block this is called in, boxed.
struct ExceptionBox final : table::ErrorBox {
    std::exception_ptr error;
    static void destroyIt(table::ErrorBox* b) noexcept { delete static_cast<ExceptionBox*>(b); }
    [[noreturn]] static void rethrowIt(table::ErrorBox* b)
    {
        std::exception_ptr e = std::move(static_cast<ExceptionBox*>(b)->error);
        delete static_cast<ExceptionBox*>(b);
        std::rethrow_exception(e);
    }
};
[[gnu::noinline]] inline table::ErrorBox* boxCurrentException() noexcept
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
    return sizeof(Fn) <= table::TaskUnit::kStorageBytes && alignof(Fn) <= 8 && std::is_trivially_copyable<Fn>::value;
}

template <class Fn>
table::ErrorBox* inlineOp(int what, unsigned char* s) noexcept
{
    // Trivially copyable: no destructor to call.
    Fn& f = *std::launder(reinterpret_cast<Fn*>(s));
    if (what == table::kTaskRun) {
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
table::ErrorBox* heapOp(int what, unsigned char* s) noexcept
{
    Fn* p;
    std::memcpy(&p, s, sizeof(p));
    table::ErrorBox* error = nullptr;
    if (what == table::kTaskRun) {
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

//! The task that runs `f()`, made as a record's op and storage (`storage`:
//! TaskUnit::kStorageBytes, aligned to 8, holding no callable): `op` is set
//! last, once the callable is there (a heap copy may throw std::bad_alloc
//! first). See makeTask().
template <class F>
void makeTaskIn(table::TaskOp& op, unsigned char* storage, F&& f)
{
    using Fn = std::decay_t<F>;
    if constexpr (task_detail::fitsInline<Fn>()) {
        ::new (static_cast<void*>(storage)) Fn(std::forward<F>(f));
        op = &task_detail::inlineOp<Fn>;
    } else {
        Fn* p = new Fn(std::forward<F>(f));
        std::memcpy(storage, &p, sizeof(p));
        op = &task_detail::heapOp<Fn>;
    }
}
//! makeTaskIn() into the record `t`.
template <class F>
void makeTaskIn(table::TaskUnit& t, F&& f)
{
    makeTaskIn(t.op, t.storage, std::forward<F>(f));
}

//! The task that runs `f()` (moved or copied in). Closures that are
//! trivially copyable and at most 48 bytes (lambdas that capture references,
//! pointers and numbers: the common case) live in the record, so queueing
//! them allocates nothing; others live on the heap.
template <class F>
table::TaskUnit makeTask(F&& f)
{
    table::TaskUnit t;
    makeTaskIn(t, std::forward<F>(f));
    return t;
}

//! The op of a task made from an `Fn` held in the record, else null.
template <class Fn>
constexpr table::TaskOp inlineOpOf() noexcept
{
    if constexpr (task_detail::fitsInline<Fn>())
        return &task_detail::inlineOp<Fn>;
    else
        return nullptr;
}

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
