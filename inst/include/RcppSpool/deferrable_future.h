// DeferrableFuture<T, F>: what async(policy, f) returns, a Future that may hold its call, typed.
#pragma once

#include "abi.h"

#include <chrono>
#include <exception>
#include <future>
#include <new>
#include <type_traits>
#include <utility>

#include "client/host_calls.h"
#include "engine/deferred_call.h"
#include "engine/interrupt_error.h"
#include "future.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The result of async(policy, f, args...): a Future<T> that keeps the call
//! itself (`F`, the decay-copied f with its arguments) when the library
//! chose not to queue it (std::launch::async | std::launch::deferred on a
//! busy worker). get() then runs it as a plain call the compiler can inline:
//! no call through a pointer, nothing stored anywhere else, so fine-grained
//! recursion (fib with a call per node) keeps close to the speed of plain
//! calls. In every other respect it is a Future<T>: get(), wait(),
//! wait_for(), wait_until(), valid(), share() mean the same, it is movable
//! and not copyable, and it converts by move to Future<T>, std::future<T>
//! and std::shared_future<T>, so code that stores the result of async() in
//! one of those compiles and behaves as before (a kept call moves into the
//! Future). Only code that names the type of async()'s result itself (a
//! function template deducing Future<T> from it, `cond ? async(..) :
//! async(..)` with two different lambdas) must convert first.
template <class T, class F>
class DeferrableFuture {
    static_assert(engine::DeferredCall<T>::template fits<F>,
                  "DeferrableFuture: a call that a Future cannot keep is always queued");

public:
    //! No result (valid() is false).
    DeferrableFuture() noexcept = default;
    //! The future of work queued (or deferred by the caller's policy).
    explicit DeferrableFuture(Future<T>&& future) noexcept : future_(std::move(future)) {}
    //! Keeps `call` (moved in) to run at the first get() or wait(), or when
    //! the future is destroyed.
    DeferrableFuture(engine::DeferTag, F&& call) noexcept
    {
        ::new (static_cast<void*>(call_)) F(std::move(call));
        hasCall_ = true;
    }
    DeferrableFuture(DeferrableFuture&& other) noexcept : future_(std::move(other.future_)) { takeCall(other); }
    //! Moves: `other` no longer refers to the result (a kept call comes along;
    //! a call this future kept runs first, as in the destructor).
    DeferrableFuture& operator=(DeferrableFuture&& other) noexcept
    {
        if (this != &other) {
            if (hasCall_) runKeptCall();
            future_ = std::move(other.future_);
            takeCall(other);
        }
        return *this;
    }
    DeferrableFuture(const DeferrableFuture&) = delete;
    DeferrableFuture& operator=(const DeferrableFuture&) = delete;
    //! As Future's: a kept call runs now (no work is lost), unless the user
    //! interrupted; a queued task is waited for.
    ~DeferrableFuture()
    {
        if (hasCall_) runKeptCall();
    }

    //! True while the future refers to a result not yet taken by get().
    bool valid() const noexcept { return hasCall_ || future_.valid(); }

    //! Waits for the result and returns it (or rethrows the task's
    //! exception); a kept call runs here. Afterwards valid() is false.
    T get()
    {
        if (hasCall_) {
            // As a queued task would be skipped after the user's interrupt.
            if (client::interruptRequested()) dropCallAndThrow();
            struct Drop {
                DeferrableFuture* self;
                ~Drop() { self->dropCall(); }
            } drop{this};
            return call()();
        }
        return future_.get();
    }

    //! Waits until the result is ready (a kept call runs, its result kept for get()).
    void wait() const
    {
        settle();
        future_.wait();
    }

    //! As Future::wait_for() (a kept call runs).
    template <class Rep, class Per>
    std::future_status wait_for(const std::chrono::duration<Rep, Per>& d) const
    {
        settle();
        return future_.wait_for(d);
    }

    //! As Future::wait_until() (a kept call runs).
    template <class Clock, class Dur>
    std::future_status wait_until(const std::chrono::time_point<Clock, Dur>& t) const
    {
        settle();
        return future_.wait_until(t);
    }

    //! As Future::share(): afterwards valid() is false.
    std::shared_future<T> share() { return static_cast<Future<T>>(std::move(*this)).share(); }

    //! This future as a Future<T> (a kept call moves into it).
    operator Future<T>() &&
    {
        if (!hasCall_) return std::move(future_);
        // Made in place (no Future moved: a move of a kept call is a call
        // through a pointer, and vectors of futures convert at every spawn).
        struct Drop {
            DeferrableFuture* self;
            ~Drop() { self->dropCall(); }
        } drop{this};
        return Future<T>(engine::deferTag, std::move(call()));
    }
    //! This future as a std::future<T> (see Future's conversion).
    operator std::future<T>() && { return static_cast<std::future<T>>(static_cast<Future<T>>(std::move(*this))); }
    //! This future as a std::shared_future<T> (see share()).
    operator std::shared_future<T>() && { return share(); }

private:
    F& call() const noexcept { return *std::launder(reinterpret_cast<F*>(call_)); }
    void dropCall() const noexcept
    {
        call().~F();
        hasCall_ = false;
    }
    void takeCall(DeferrableFuture& other) noexcept
    {
        if (!other.hasCall_) return;
        ::new (static_cast<void*>(call_)) F(std::move(other.call()));
        other.dropCall();
        hasCall_ = true;
    }
    // The kept call becomes future_'s: everything but get() is then Future's.
    void settle() const
    {
        if (!hasCall_) return;
        future_ = Future<T>(engine::deferTag, std::move(call()));
        dropCall();
    }
    [[noreturn, gnu::noinline]] void dropCallAndThrow()
    {
        dropCall();
        std::rethrow_exception(engine::interruptError());
    }
    // Out of line: a future whose result nobody took (its exception goes, as
    // a queued task's would).
    [[gnu::noinline]] void runKeptCall() noexcept
    {
        detail::runUnclaimed([this] { (void)call()(); });
        dropCall();
    }

    // mutable: wait() hands a kept call to future_.
    mutable Future<T> future_;
    alignas(F) mutable unsigned char call_[sizeof(F)];
    mutable bool hasCall_ = false;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
