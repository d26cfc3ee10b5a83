// The state a task shares with the Future that waits for its result.
#pragma once

#include "../abi.h"

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "host_hooks.h"
#include "scheduler.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Shared by a task and its Future: the result (or exception), a ready flag,
//! and two references (task, future). For deferred work (std::launch::deferred)
//! it holds the work itself, run by the first wait.
template <class T>
class FutureState {
public:
    //! `refs`: how many owners start with it (the Future, and the task if any).
    //! `task`: the kind of the task that computes the result (a ResultTask,
    //! which then starts with a pointer to this state), or null: see popOwnTask().
    explicit FutureState(Scheduler* s, int refs = 1, Task::Kind task = nullptr) : sched_(s), refs_(refs), task_(task)
    {
    }

    // States come and go at the rate of tasks: workers keep freed ones.
    static void* operator new(std::size_t bytes) { return Scheduler::allocateBlock(bytes); }
    static void operator delete(void* p, std::size_t bytes) noexcept { Scheduler::freeBlock(p, bytes); }
    // A result type aligned beyond operator new's guarantee: the heap's own.
    static void* operator new(std::size_t bytes, std::align_val_t a) { return ::operator new(bytes, a); }
    static void operator delete(void* p, std::size_t, std::align_val_t a) noexcept { ::operator delete(p, a); }

    template <class F>
    void run(F& f) noexcept
    {
        compute(f);
        markReady();
    }

    //! Runs `f` and keeps its result or exception, without completing:
    //! complete() (or fail()) does that. For a caller that may replace the
    //! exception first (see onMainThread()).
    template <class F>
    void compute(F& f) noexcept
    {
        try {
            if constexpr (std::is_void<T>::value) {
                f();
            } else if constexpr (std::is_reference<T>::value) {
                ::new (static_cast<void*>(storage_)) Stored(std::addressof(f()));
                hasValue_ = true;
            } else {
                ::new (static_cast<void*>(storage_)) Stored(f());
                hasValue_ = true;
            }
        } catch (...) {
            error_ = std::current_exception();
        }
    }
    //! Completes after compute().
    void complete() noexcept { markReady(); }
    //! The exception compute() kept, if any.
    const std::exception_ptr& error() const noexcept { return error_; }

    //! The task was dropped before it ran (pool destroyed, interrupt, error elsewhere).
    void cancel() noexcept
    {
        keepCancellation();
        markReady();
    }

    //! The join of a task with a result on its own worker, as fib's with
    //! async() and get(): if the task is still on top of the calling
    //! worker's own deque (under tasks it pushed later, which are run first,
    //! as a helping wait runs them), takes it into `mine` and returns true.
    //! The caller then runs it with runForGetter(), which computes the result
    //! without publishing it: nobody else looks at this state, and both its
    //! references are the caller's (callgrind, fib with one async() per
    //! call: 450 instructions per spawn, 518 with a wait). False when the result is ready, the
    //! task was taken by another thread, or the caller is not a worker of
    //! this state's pool: the caller waits then.
    [[gnu::always_inline]] bool popOwnTask(Task& mine)
    {
        // Ready first: a Future may outlive its pool (which completes the
        // tasks it drops), and then sched_ is gone; a result not ready yet
        // means the pool still runs.
        if (!task_ || ready() || !sched_) return false;
        return sched_->joinOwn([this] { return ready(); }, [this](const Task& t) { return t.holds(task_, this); },
                               mine) == Scheduler::OwnJoin::mine;
    }
    //! Runs the task popOwnTask() took, on this thread, for the Future's
    //! get(): afterwards the result (or exception) is there to take(), not
    //! published, and the task has given up its reference.
    void runForGetter(Task& mine)
    {
        forGetter_ = true;
        sched_->executeOwn(mine);
    }
    bool forGetter() const noexcept { return forGetter_; }
    //! What cancel() keeps, without completing (runForGetter()'s interrupt).
    void keepCancellation() noexcept
    {
        try {
            if (interruptRequested())
                error_ = interruptError();
            else
                error_ = std::make_exception_ptr(
                    std::runtime_error("RcppSpool: the task was cancelled before it ran"));
        } catch (...) {
            error_ = std::current_exception();
        }
    }

    //! Completes with `error` instead of a result.
    void fail(std::exception_ptr error) noexcept
    {
        error_ = std::move(error);
        markReady();
    }

    bool ready() const noexcept { return ready_.load(std::memory_order_acquire); }

    //! The calling thread is the host's service thread (see
    //! Scheduler::isServiceThread()).
    bool onServiceThread() const { return sched_ ? sched_->isServiceThread() : engine::onServiceThread(); }

    //! Nobody will take the result: if the task has not started, it is
    //! skipped (reported cancelled) instead of run; deferred work is dropped.
    void abandon() noexcept
    {
        abandoned_.store(true, std::memory_order_release);
        if (deferred_) {
            deferred_ = nullptr;
            cancel();
        }
    }
    bool abandoned() const noexcept { return abandoned_.load(std::memory_order_acquire); }

    //! Nobody will take the result (the Future is going, or an interrupt
    //! ended its wait): a task that has not started is skipped; a running one
    //! is waited for, also through an interrupt, since it cannot be stopped
    //! from outside and may use its caller's stack.
    void abandonAndWait()
    {
        if (ready()) return;
        abandon();
        if (ready() || !sched_ || sched_->forked()) return;
        sched_->waitUntil(this, [this] { return ready(); });
    }

    //! Waits (helping, or servicing the host) until ready. Returns false if
    //! the deadline passed first. `service`: the caller is the host's service
    //! thread (onServiceThread(), asked once by the caller, not at every look
    //! of the wait: a helping wait looks after every task it runs).
    bool wait(bool service,
              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max())
    {
        runDeferred();
        if (ready()) return true;
        if (!sched_ || sched_->forked()) return ready();
        return sched_->waitUntilDoneOrInterrupted(service, this, [this] { return ready(); }, deadline) && ready();
    }

    //! Moves the result out (or throws the task's exception). Call once, when ready.
    T take()
    {
        if (error_) std::rethrow_exception(error_);
        if constexpr (std::is_reference<T>::value)
            return static_cast<T>(**stored());
        else if constexpr (!std::is_void<T>::value)
            return std::move(*stored());
    }

    void setDeferred(std::function<void()> work) { deferred_ = std::move(work); }
    bool isDeferred() const { return static_cast<bool>(deferred_); }

    void release() noexcept
    {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    ~FutureState()
    {
        if constexpr (!std::is_void<T>::value)
            if (hasValue_) stored()->~Stored();
    }

private:
    // What is kept: the value; for a reference result, a pointer; for void, nothing.
    using Stored = std::conditional_t<std::is_void<T>::value, char,
                                      std::conditional_t<std::is_reference<T>::value,
                                                         std::remove_reference_t<T>*, T>>;
    Stored* stored() { return std::launder(reinterpret_cast<Stored*>(storage_)); }

    void runDeferred()
    {
        if (!deferred_) return;
        auto work = std::move(deferred_);
        deferred_ = nullptr;
        work();
    }

    void markReady() noexcept
    {
        ready_.store(true, std::memory_order_seq_cst);
        if (sched_) sched_->notifyCompletion(this);
    }

    Scheduler* sched_;
    std::atomic<int> refs_;
    std::atomic<bool> ready_{false};
    std::atomic<bool> abandoned_{false};
    bool hasValue_ = false;
    bool forGetter_ = false;  // run by runForGetter() (the getter's thread only)
    Task::Kind task_;
    alignas(Stored) unsigned char storage_[sizeof(Stored)];
    std::exception_ptr error_;
    std::function<void()> deferred_;
};

//! The task that computes a FutureState's result: its state and a callable.
//! It owns one reference to the state.
template <class T, class F>
struct ResultTask {
    FutureState<T>* state;  // first: see Task::holds() and FutureState::popOwnTask()
    F f;
    void operator()()
    {
        if (state->forGetter()) {
            // Run by the Future's get() itself (see FutureState::runForGetter()).
            if (interruptRequested())
                state->keepCancellation();
            else
                state->compute(f);
            return;
        }
        // Tasks without a context are not dropped by the scheduler on an
        // interrupt, so they check themselves; nor is a task whose Future is gone.
        if (interruptRequested() || state->abandoned())
            state->cancel();
        else
            state->run(f);
        state->release();
    }
    void discard()
    {
        state->cancel();
        state->release();
    }
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
