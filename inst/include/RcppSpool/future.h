// Future<T>: the result of pushReturn()/async(), waited for without blocking a worker.
#pragma once

#include "abi.h"

#include <chrono>
#include <exception>
#include <future>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "client/future_state.h"
#include "client/host_calls.h"
#include "engine/deferred_call.h"
#include "engine/interrupt_error.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

namespace detail {
//! A call the library deferred whose result nobody took (its future is
//! going): it runs now, so no work is lost, unless the user interrupted (a
//! queued task would be skipped then); its result and exception go, as a
//! queued task's would. Future's and DeferrableFuture's destructors.
template <class Run>
void runUnclaimed(Run&& run) noexcept
{
    if (client::interruptRequested()) return;
    try {
        run();
    } catch (...) {
    }
}
}  // namespace detail

//! The eventual result of a task started with pushReturn() or async().
//!
//! Movable, not copyable, like std::future. get() and wait() called on a pool
//! worker run other tasks while they wait (so recursive tasks neither deadlock
//! nor idle a core); on R's main thread they keep R responsive and react to
//! the user's interrupt. A Future converts by move to std::future<T>, so code
//! that stores results in std::future (as RcppThread code does) compiles.
template <class T>
class Future {
public:
    Future() noexcept = default;
    explicit Future(client::FutureState<T>* s) noexcept : state_(s) {}
    //! A future whose work the library deferred (see async()): it runs on
    //! the thread that calls get() or wait(), or when the Future is destroyed.
    template <class F>
    Future(engine::DeferTag, F&& call) : call_(std::forward<F>(call))
    {
    }
    Future(Future&& other) noexcept : state_(std::exchange(other.state_, nullptr)), call_(std::move(other.call_)) {}
    //! Moves: `other` no longer refers to the result (its pending work, if any, comes along).
    Future& operator=(Future&& other) noexcept
    {
        if (this != &other) {
            reset();
            state_ = std::exchange(other.state_, nullptr);
            call_ = std::move(other.call_);
        }
        return *this;
    }
    Future(const Future&) = delete;
    Future& operator=(const Future&) = delete;
    //! Like a std::future from std::async, a Future destroyed before its task
    //! finished waits for it (helping, on a worker), so a task never outlives
    //! the scope that made it (it may use that scope's variables), and the
    //! task runs even if nobody takes its result (as RcppThread's pushReturn:
    //! no work is lost). Only deferred work (std::launch::deferred) that
    //! nobody asked for is dropped, as std::async's, and on R's main thread a
    //! user's interrupt ends the wait: a task not started by then is skipped.
    ~Future()
    {
        // Inline, as get() leaves nothing to do (a deferred call costs a few
        // nanoseconds: the destructor must not add a call).
        if (state_ || call_) reset();
    }

    //! True while the future refers to a result not yet taken by get().
    bool valid() const noexcept { return state_ || call_; }

    //! Waits for the result and returns it (or rethrows the task's exception).
    //! Afterwards valid() is false.
    T get()
    {
        if (call_) {
            // Work the library deferred runs here, as a plain call, unless
            // the user interrupted (as a queued task would be skipped).
            if (client::interruptRequested()) dropCallAndThrow();
            return call_.run();
        }
        return getQueued();
    }

    //! Waits until the result is ready.
    void wait() const
    {
        runDeferredCall();
        check();
        waitOrThrow();
    }

    //! Waits at most `d`. Deferred work (std::launch::deferred) is not started
    //! by wait_for(): it reports std::future_status::deferred, as std::future
    //! does. Work the library deferred (async() with both policies) is run.
    template <class Rep, class Per>
    std::future_status wait_for(const std::chrono::duration<Rep, Per>& d) const
    {
        return wait_until(std::chrono::steady_clock::now() + d);
    }

    //! Waits until the time `t` at most, as wait_for().
    template <class Clock, class Dur>
    std::future_status wait_until(const std::chrono::time_point<Clock, Dur>& t) const
    {
        runDeferredCall();
        check();
        if (state_->isDeferred()) return std::future_status::deferred;
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(t - Clock::now()).count();
        return state_->waitFor(left < 0 ? 0 : left) ? std::future_status::ready : std::future_status::timeout;
    }

    //! As std::future::share(): a std::shared_future<T> for the same result;
    //! afterwards valid() is false.
    std::shared_future<T> share() { return std::future<T>(std::move(*this)).share(); }

    //! Moves this future into a std::shared_future<T> (see share()).
    operator std::shared_future<T>() && { return share(); }

    //! Moves this future into a std::future<T> that waits for the same result
    //! (through this library's helping wait, when its get() is called).
    operator std::future<T>() &&
    {
        check();
        auto shared = std::make_shared<Future<T>>(std::move(*this));
        return std::async(std::launch::deferred, [shared]() -> T { return shared->get(); });
    }

private:
    template <class, class>
    friend class TaskFuture;

    // TaskFuture::get(): when the task that computes `state`'s result is
    // one that calls a `Call` (client::ResultTaskOf) and is still on top of
    // the calling worker's deque, the task is taken off and the call runs
    // here, a plain call the compiler sees through, its result returned as
    // it comes (no copy into the state, no exception kept and rethrown).
    // Otherwise as get(). Safe for any state: the task's op says whether it
    // calls a `Call`. `state` is null afterwards.
    template <class Call>
    [[gnu::always_inline]] static T getHeld(client::FutureState<T>*& state)
    {
        using Computes = client::ResultTaskOf<T, Call>;
        client::FutureState<T>* s = state;
        if (s && s->taskOp() == client::inlineOpOf<Computes>() && s->mayTakeBack()) {
            const unsigned char* record = nullptr;
            const int how = RCPPSPOOL_API(futureTakeBack)(s, s->taskOp(), &record);
            state = nullptr;
            if (how == table::kTakenBack) {
                if constexpr (client::kCallInRecord<T, Call>)
                    return runFromRecord<Call>(s, record);
                else
                    return runHeld<Call>(s);
            }
            return takeAfterJoin(s, how);
        }
        return Future(std::exchange(state, nullptr)).get();
    }
    // The call of a task taken back whose record holds it (`record`: its
    // storage, in the deque), copied out first: the call may queue tasks,
    // which reuse that slot. The state holds nothing; both references are ours.
    template <class Call>
    [[gnu::always_inline]] static T runFromRecord(client::FutureState<T>* s, const unsigned char* record)
    {
        Call call = std::launder(reinterpret_cast<const client::ResultTask<T, Call>*>(record))->f;
        if (client::interruptRequested()) freeAndThrowInterrupt(s);
        try {
            if constexpr (std::is_void<T>::value) {
                call();
                s->freeEmpty();
            } else {
                T value = call();
                s->freeEmpty();
                return value;
            }
        } catch (...) {
            s->freeEmpty();
            throw;
        }
    }
    [[noreturn, gnu::noinline]] static void freeAndThrowInterrupt(client::FutureState<T>* s)
    {
        s->freeEmpty();
        std::rethrow_exception(engine::interruptError());
    }
    // The call of a state whose task its getter took back: run here.
    // Both references are ours; the call goes, then the state.
    template <class Call>
    [[gnu::always_inline]] static T runHeld(client::FutureState<T>* s)
    {
        Call& call = s->template heldCall<Call>();
        if (client::interruptRequested()) dropHeldAndThrow<Call>(s);
        try {
            if constexpr (std::is_void<T>::value) {
                call();
                dropHeld<Call>(s);
            } else {
                T value = call();
                dropHeld<Call>(s);
                return value;
            }
        } catch (...) {
            dropHeld<Call>(s);
            throw;
        }
    }
    template <class Call>
    [[gnu::always_inline]] static void dropHeld(client::FutureState<T>* s) noexcept
    {
        s->template heldCall<Call>().~Call();
        s->template freeEmpty<client::FutureState<T>::template kBytesWith<Call>>();
    }
    // As a task taken back after the user's interrupt: not run.
    template <class Call>
    [[noreturn, gnu::noinline]] static void dropHeldAndThrow(client::FutureState<T>* s)
    {
        dropHeld<Call>(s);
        std::rethrow_exception(engine::interruptError());
    }
    // getHeld() when the getter did not take its task back: run for it by
    // the runtime (the result kept, unpublished), or to be waited for.
    [[gnu::noinline]] static T takeAfterJoin(client::FutureState<T>* s, int how)
    {
        if (how == table::kRunForGetter) return takeOwn(s);
        return Future(s).waitAndTake();
    }

    // get() of a queued task, and of a deferred call after an interrupt: out
    // of line, so that get() of a deferred call (a few nanoseconds of work in
    // fine-grained recursion) stays small enough to inline. No local of its
    // own whose address is taken (a guard object, an exception's argument):
    // with -fstack-protector-strong (R's usual flags) such a local guards
    // the whole function, 5 instructions a spawn; the paths that need one
    // are calls of their own.
    [[gnu::noinline]] T getQueued()
    {
        check();
        if (state_->runOwnTask()) return takeOwn(std::exchange(state_, nullptr));
        return waitAndTake();
    }
    // The result of a task the getter ran itself (see runOwnTask()): both
    // references are ours.
    static T takeOwn(client::FutureState<T>* s)
    {
        if constexpr (std::is_void<T>::value || std::is_reference<T>::value ||
                      std::is_nothrow_move_constructible<T>::value) {
            if (s->hasError()) rethrowAndDelete(s);
            if constexpr (std::is_void<T>::value) {
                s->destroy();
            } else {
                T value = s->take();
                s->destroy();
                return value;
            }
        } else {
            struct Delete {
                client::FutureState<T>* s;
                ~Delete() { s->destroy(); }
            } guard{s};
            return s->take();
        }
    }
    [[noreturn, gnu::noinline]] static void rethrowAndDelete(client::FutureState<T>* s)
    {
        std::exception_ptr error = s->error();
        s->destroy();
        std::rethrow_exception(error);
    }
    [[gnu::noinline]] T waitAndTake()
    {
        state_->waitOrThrow();
        client::FutureState<T>* s = std::exchange(state_, nullptr);
        struct Release {
            client::FutureState<T>* s;
            ~Release() { s->release(); }
        } guard{s};
        return s->take();
    }
    [[noreturn, gnu::noinline]] void dropCallAndThrow()
    {
        call_.reset();
        std::rethrow_exception(engine::interruptError());
    }
    void check() const
    {
        if (!state_ && !call_) throwNoState();
    }
    [[noreturn, gnu::noinline, gnu::cold]] static void throwNoState()
    {
        throw std::future_error(std::future_errc::no_state);
    }
    // Work the library deferred, run now into a state of its own (for wait(),
    // which keeps the result for a later get()).
    void runDeferredCall() const
    {
        if (!call_) return;
        auto* s = new client::FutureState<T>(nullptr);
        if (client::interruptRequested()) {
            call_.reset();
            s->cancel();
        } else {
            auto run = [this]() -> T { return call_.run(); };
            s->run(run);
        }
        state_ = s;
    }
    // On R's main thread an interrupt ends the wait early: the task is then
    // abandoned (skipped if it has not started) and, if running, waited for,
    // before the interrupt is reported.
    void waitOrThrow() const { state_->waitOrThrow(); }
    [[gnu::noinline]] void reset() noexcept
    {
        if (call_) {
            detail::runUnclaimed([this] { call_.run(); });
            call_.reset();  // (if it did not run)
        }
        if (!state_) return;
        state_->settleQuietly();
        std::exchange(state_, nullptr)->release();
    }

    // mutable: wait() runs deferred work into a state of its own.
    mutable client::FutureState<T>* state_ = nullptr;
    mutable engine::DeferredCall<T> call_;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
