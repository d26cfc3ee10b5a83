// TaskFuture<T, Call>: what async(f) returns, a Future<T> that knows the type of its call.
#pragma once

#include "abi.h"

#include <chrono>
#include <future>
#include <utility>

#include "client/future_state.h"

#include "future.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The result of async(f, args...): a Future<T> whose type also names the
//! call that computes the result (`Call`: f bound to its arguments). When
//! get() is called on the worker that queued the task and nobody took the
//! task meanwhile (a recursion's common case), the task is taken back and
//! the call runs inside get() as a plain call the compiler can inline,
//! its result returned as it comes: no call through a pointer, no copy of
//! the result into the shared state, no exception kept and rethrown.
//!
//! In every other respect it is a Future<T>: get(), wait(), wait_for(),
//! wait_until(), valid(), share() mean the same; it is movable, not
//! copyable; its destructor waits for the task, as Future's does; and it
//! converts by move to Future<T>, std::future<T> and std::shared_future<T>,
//! so code that stores async()'s result in one of those (or in a
//! std::vector of them) compiles and behaves as before. Only code that
//! names the type of async()'s result itself (a function template
//! deducing Future<T> from it, `cond ? async(f) : async(g)` with two
//! different lambdas) must convert first.
template <class T, class Call>
class TaskFuture {
public:
    //! No result (valid() is false).
    TaskFuture() noexcept = default;
    //! The future of a task that computes its result with a `Call` (see
    //! ThreadPool::pushBound()), holding one reference to its state. Any
    //! state is safe: get() checks that its task is of that kind before it
    //! runs the call itself.
    explicit TaskFuture(client::FutureState<T>* state) noexcept : state_(state) {}
    TaskFuture(TaskFuture&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
    //! Moves: `other` no longer refers to the result.
    TaskFuture& operator=(TaskFuture&& other) noexcept
    {
        if (this != &other) {
            if (state_) settle(state_);
            state_ = std::exchange(other.state_, nullptr);
        }
        return *this;
    }
    TaskFuture(const TaskFuture&) = delete;
    TaskFuture& operator=(const TaskFuture&) = delete;
    //! As Future's: waits for the task (helping, on a worker).
    ~TaskFuture()
    {
        if (state_) settle(state_);
    }

    //! True while the future refers to a result not yet taken by get().
    bool valid() const noexcept { return state_ != nullptr; }

    //! Waits for the result and returns it (or rethrows the task's
    //! exception); runs the task itself if it can take it back (see the
    //! class). Afterwards valid() is false.
    T get() { return Future<T>::template getHeld<Call>(state_); }

    //! Waits until the result is ready.
    void wait() const
    {
        check();
        state_->waitOrThrow();
    }

    //! As Future::wait_for().
    template <class Rep, class Per>
    std::future_status wait_for(const std::chrono::duration<Rep, Per>& d) const
    {
        return wait_until(std::chrono::steady_clock::now() + d);
    }

    //! As Future::wait_until().
    template <class Clock, class Dur>
    std::future_status wait_until(const std::chrono::time_point<Clock, Dur>& t) const
    {
        check();
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(t - Clock::now()).count();
        return state_->waitFor(left < 0 ? 0 : left) ? std::future_status::ready : std::future_status::timeout;
    }

    //! As Future::share(): afterwards valid() is false.
    std::shared_future<T> share() { return Future<T>(std::exchange(state_, nullptr)).share(); }

    //! This future as a Future<T>.
    operator Future<T>() && { return Future<T>(std::exchange(state_, nullptr)); }
    //! This future as a std::future<T> (see Future's conversion).
    operator std::future<T>() && { return static_cast<std::future<T>>(Future<T>(std::exchange(state_, nullptr))); }
    //! This future as a std::shared_future<T> (see share()).
    operator std::shared_future<T>() && { return share(); }

private:
    // A Future's end: waits for the task (quietly), releases the state.
    [[gnu::noinline]] static void settle(client::FutureState<T>* s) noexcept { Future<T> owner(s); }
    void check() const
    {
        if (!state_) throw std::future_error(std::future_errc::no_state);
    }

    client::FutureState<T>* state_ = nullptr;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
