// The state a task shares with the Future that waits for its result: the
// client's side of it. The runtime sees its FutureCore only (table/task_unit.h);
// the result, its type and its exception stay here.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "../engine/block_cache.h"
#include "../engine/interrupt_error.h"
#include "../engine/thread_local_object.h"
#include "api.h"
#include "calls.h"
#include "host_calls.h"
#include "../table/task_unit.h"
#include "make_task.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

namespace state_detail {
//! Work a std::launch::deferred future runs at its first wait. Not a
//! std::function: its destructor, called with every state's, is a null test
//! here and an out-of-line call there.
struct DeferredWork {
    virtual ~DeferredWork() = default;
    virtual void run() = 0;
};
template <class F>
struct DeferredWorkOf final : DeferredWork {
    F f;
    explicit DeferredWorkOf(F&& work) : f(std::move(work)) {}
    void run() override { f(); }
};
//! A thread's cache of freed states (see cache()).
struct StateCache : engine::BlockCache {
    ~StateCache() { engine::runtime::threadLocalEnded<StateCache>(); }
};
//! This thread's freed states, kept for its next ones: states come and go
//! at the rate of tasks (see engine::BlockCache). Null while the thread ends,
//! once even a second cache is gone (engine/thread_local_object.h): a state
//! freed by a thread_local destroyed after the first cache (a user's object
//! holding Futures) went into the destroyed cache and was never freed.
RCPPSPOOL_HIDDEN inline engine::BlockCache* cache() noexcept
{
    return engine::runtime::lastingThreadLocal<StateCache>();
}
}  // namespace state_detail

//! Shared by a task and its Future: the result (or exception), and the core
//! the runtime completes and waits on. For deferred work
//! (std::launch::deferred) it holds the work itself, run by the first wait.
template <class T>
class FutureState : public table::FutureCore {
public:
    //! `pool`: the runtime's pool of the task (null: none). `refs`: how many
    //! owners start with it (the Future, and the task if any). `task`: the op
    //! of the task that computes the result (a ResultTask held in its record,
    //! which then starts with this state's core), or null: see runOwnTask().
    explicit FutureState(void* pool, int refs = 1, table::TaskOp task = nullptr) : task_(task)
    {
        this->pool = pool;
        this->refs.store(refs, std::memory_order_relaxed);
    }

    //! Whether a state can hold a callable of type Call (see withCall()):
    //! one aligned at most as operator new aligns, in a state that is too.
    template <class Call>
    static constexpr bool kCanHold = alignof(Call) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__ &&
                                     alignof(FutureState) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

    //! A state that holds `call` (moved in) itself, after its own fields, in
    //! one block: the task that computes the result is then only the
    //! state's address (StateTask), so that a callable too large for a
    //! task's record, or not trivially copyable (a lambda holding a
    //! std::vector), costs no allocation of its own. Freed by destroy()
    //! (release()); the callable by whoever runs or drops it.
    template <class Call>
    static FutureState* withCall(void* pool, int refs, table::TaskOp task, Call&& call)
    {
        using C = std::decay_t<Call>;
        static_assert(kCanHold<C>, "FutureState::withCall: an over-aligned callable");
        constexpr std::size_t bytes = kBytesWith<C>;
        void* block = allocate(bytes);
        auto* s = ::new (block) FutureState(pool, refs, task);
        s->blockClass_ = classOf(bytes);
        try {
            ::new (static_cast<void*>(reinterpret_cast<unsigned char*>(s) + callOffset<C>())) C(std::forward<Call>(call));
        } catch (...) {
            s->destroy();
            throw;
        }
        return s;
    }

    //! The callable a state made by withCall<Call>() holds.
    template <class Call>
    Call& heldCall() noexcept
    {
        return *std::launder(reinterpret_cast<Call*>(reinterpret_cast<unsigned char*>(this) + callOffset<Call>()));
    }

    //! destroy() of a state that holds nothing (the callable gone, no
    //! result, no error, no deferred work: its getter took the task back
    //! and ran the call itself), of a block of `kBlockBytes` (0: a state
    //! made by `new`; kBytesWith<Call>: by withCall()): back to the thread's
    //! cache, its class a constant, no destructor left to run (it has
    //! nothing to do, but the compiler cannot see that: 6 instructions).
    template <std::size_t kBlockBytes = 0>
    [[gnu::always_inline]] void freeEmpty() noexcept
    {
        if constexpr (alignof(FutureState) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
            ::operator delete(static_cast<void*>(this), std::align_val_t{alignof(FutureState)});
        else
            freeBlock(this, classOf(kBlockBytes != 0 ? kBlockBytes : sizeof(FutureState)));
    }
    //! Where a state made by withCall<Call>() holds the call: after its
    //! own fields, aligned.
    template <class Call>
    static constexpr std::size_t callOffset() noexcept
    {
        return (sizeof(FutureState) + alignof(Call) - 1) / alignof(Call) * alignof(Call);
    }
    //! The block size of a state made by withCall<Call>().
    template <class Call>
    static constexpr std::size_t kBytesWith = callOffset<Call>() + sizeof(Call);

    //! Ends the state and frees its block (also the room of a held
    //! callable, which must be gone already). For the last owner.
    void destroy() noexcept
    {
        const std::size_t c = blockClass_;
        this->~FutureState();
        if constexpr (alignof(FutureState) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
            ::operator delete(static_cast<void*>(this), std::align_val_t{alignof(FutureState)});
        } else {
            // The common class (a state without a call) as a constant: no
            // index computed where it is freed.
            constexpr std::size_t plain = classOf(sizeof(FutureState));
            freeBlock(this, c == plain ? plain : c);
        }
    }

    static void* operator new(std::size_t bytes) { return allocate(bytes); }
    static void operator delete(void* p, std::size_t bytes) noexcept { deallocate(p, bytes); }
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
            keepCurrentException();
        }
    }
    //! Completes after compute().
    void complete() noexcept { markReady(); }
    //! The exception compute() kept, if any.
    const std::exception_ptr& error() const noexcept { return error_; }
    //! Whether an exception (or a cancellation) was kept instead of a result.
    bool hasError() const noexcept { return static_cast<bool>(error_); }

    //! The task was dropped before it ran (pool destroyed, interrupt, error elsewhere).
    void cancel() noexcept
    {
        keepCancellation();
        markReady();
    }
    //! What cancel() keeps, without completing.
    void keepCancellation() noexcept
    {
        try {
            if (client::interruptRequested())
                error_ = engine::interruptError();
            else
                error_ = std::make_exception_ptr(std::runtime_error("RcppSpool: the task was cancelled before it ran"));
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

    bool isReady() const noexcept { return ready.load(std::memory_order_acquire) != 0; }

    //! The join of a task with a result on its own worker, as fib's with
    //! async() and get() (ApiTable::futureJoinOwn): true if the calling
    //! worker ran the task itself, for the getter. The result (or exception)
    //! is then there to take(), unpublished, and both references are the
    //! caller's. False when the result is ready, the task was taken by
    //! another thread, or the caller is not a worker of the pool: wait then.
    [[gnu::always_inline]] bool runOwnTask()
    {
        return task_ && mayTakeBack() && RCPPSPOOL_API(futureJoinOwn)(this, task_) != 0;
    }
    //! Whether the task (if any) may still be on a worker's deque, for its
    //! getter to take back: not ready, queued on a pool.
    bool mayTakeBack() const noexcept { return !isReady() && pool; }
    //! The op of the task that computes the result, or null (see the constructor).
    table::TaskOp taskOp() const noexcept { return task_; }
    bool forGetter() const noexcept { return table::FutureCore::forGetter != 0; }

    //! Nobody will take the result: if the task has not started, it is
    //! skipped (reported cancelled) instead of run; deferred work is dropped.
    void abandon() noexcept
    {
        abandoned.store(1, std::memory_order_release);
        if (deferred_) {
            deferred_.reset();
            cancel();
        }
    }
    bool isAbandoned() const noexcept { return abandoned.load(std::memory_order_acquire) != 0; }

    //! Waits (helping, or servicing R) until ready; on R's main thread the
    //! user's interrupt ends the wait: the task is then abandoned (skipped
    //! if not started, else waited for) and the interrupt thrown.
    void waitOrThrow()
    {
        runDeferred();
        if (isReady()) {
            if (onServiceThread()) endBlockingCall();
            return;
        }
        int done = 0;
        call(RCPPSPOOL_API(futureWait), static_cast<table::FutureCore*>(this), std::int64_t{-1}, int{table::kWaitAbandon}, &done);
    }

    //! Waits at most `timeoutNs` (negative: no limit); false if not ready
    //! then. Throws the user's interrupt on R's main thread.
    bool waitFor(std::int64_t timeoutNs)
    {
        runDeferred();
        if (isReady()) {
            if (onServiceThread()) endBlockingCall();
            return true;
        }
        int done = 0;
        call(RCPPSPOOL_API(futureWait), static_cast<table::FutureCore*>(this), timeoutNs, 0, &done);
        return done != 0;
    }

    //! A Future going away: deferred work is dropped, a queued task is
    //! waited for (helping), through interrupts too, and never throws.
    void settleQuietly() noexcept
    {
        if (isDeferred()) return abandon();
        if (isReady()) return;
        int done = 0;
        const int status = RCPPSPOOL_API(futureWait)(this, -1, table::kWaitQuiet | table::kWaitAbandon, &done, nullptr, 0);
        // With kWaitAbandon an unready end was abandoned and waited for
        // already; only a failure of the wait itself is left to settle.
        if (status != table::kOk) RCPPSPOOL_API(futureAbandon)(this);
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

    //! Makes `work` (a callable, moved in) the work of the first wait.
    template <class F>
    void setDeferred(F work)
    {
        deferred_.reset(new state_detail::DeferredWorkOf<F>(std::move(work)));
    }
    bool isDeferred() const { return deferred_ != nullptr; }

    void release() noexcept
    {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
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
        std::unique_ptr<state_detail::DeferredWork> work = std::move(deferred_);
        work->run();
    }

    // Out of line: the exception_ptr it makes is a local whose address is
    // taken, which in the caller (a task's op) would make
    // -fstack-protector-strong (R's usual flags) guard every task.
    [[gnu::noinline, gnu::cold]] void keepCurrentException() noexcept { error_ = std::current_exception(); }

    void markReady() noexcept
    {
        ready.store(1, std::memory_order_seq_cst);
        if (pool) RCPPSPOOL_API(futureCompleted)(this);
    }

    // Blocks come from this thread's cache (see state_detail::cache()).
    static void* allocate(std::size_t bytes)
    {
        engine::BlockCache* c = state_detail::cache();
        if (void* p = c ? c->take(bytes) : nullptr) return p;
        return ::operator new(engine::BlockCache::rounded(bytes));
    }
    static void deallocate(void* p, std::size_t bytes) noexcept { freeBlock(p, classOf(bytes)); }
    // A block of size class `c` back to this thread's cache, or to the heap.
    [[gnu::always_inline]] static void freeBlock(void* p, std::size_t c) noexcept
    {
        engine::BlockCache* cache = state_detail::cache();
        if (!cache || !cache->giveToClass(p, c)) ::operator delete(p);
    }

    // The block's size class in the thread caches (see destroy()), kept
    // rather than its size: no division where it is freed.
    static constexpr std::uint8_t classOf(std::size_t bytes) noexcept
    {
        const std::size_t c = engine::BlockCache::classOf(bytes);
        return static_cast<std::uint8_t>(c < engine::BlockCache::kClasses ? c : engine::BlockCache::kClasses);
    }

    bool hasValue_ = false;
    std::uint8_t blockClass_ = classOf(sizeof(FutureState));
    table::TaskOp task_;
    alignas(Stored) unsigned char storage_[sizeof(Stored)];
    std::exception_ptr error_;
    std::unique_ptr<state_detail::DeferredWork> deferred_;
};

//! The task that computes a FutureState's result: its core and a callable.
//! It owns one reference to the state.
template <class T, class F>
struct ResultTask {
    table::FutureCore* core;  // first: see table::ApiTable::futureJoinOwn
    F f;
    FutureState<T>* state() const noexcept { return static_cast<FutureState<T>*>(core); }
    void operator()()
    {
        FutureState<T>* s = state();
        if (s->forGetter()) {
            // Run by the Future's get() itself (see FutureState::runOwnTask()).
            if (client::interruptRequested())
                s->keepCancellation();
            else
                s->compute(f);
            return;
        }
        // Result tasks are not dropped by the runtime on an interrupt, so
        // they check themselves; nor is a task whose Future is gone.
        if (client::interruptRequested() || s->isAbandoned())
            s->cancel();
        else
            s->run(f);
        s->release();
    }
    void discard()
    {
        state()->cancel();
        state()->release();
    }
};

//! The task that computes a FutureState's result with the callable the
//! state holds (FutureState::withCall()): its record is the state's core,
//! nothing else. It owns one reference to the state; the callable is
//! destroyed once it ran (or was dropped), before the result is published,
//! since whoever takes the result frees the block that holds it.
template <class T, class Call>
struct StateTask {
    table::FutureCore* core;  // first: see table::ApiTable::futureJoinOwn
    FutureState<T>* state() const noexcept { return static_cast<FutureState<T>*>(core); }
    void operator()()
    {
        FutureState<T>* s = state();
        Call& call = s->template heldCall<Call>();
        if (s->forGetter()) {
            // Run by the Future's get() itself (see FutureState::runOwnTask()).
            if (client::interruptRequested())
                s->keepCancellation();
            else
                s->compute(call);
            call.~Call();
            return;
        }
        // As ResultTask: skipped after an interrupt, or when its Future is gone.
        if (client::interruptRequested() || s->isAbandoned()) {
            call.~Call();
            s->cancel();
        } else {
            s->compute(call);
            call.~Call();
            s->complete();
        }
        s->release();
    }
    void discard()
    {
        FutureState<T>* s = state();
        s->template heldCall<Call>().~Call();
        s->cancel();
        s->release();
    }
};

//! Whether the task that computes a result of type T with a `Call` holds the
//! call in its record (ResultTask: trivially copyable, at most 40 bytes
//! beside the state's core: read where the record is, with it, by whoever
//! runs it), else in the state (StateTask; FutureState::kCanHold).
template <class T, class Call>
constexpr bool kCallInRecord = task_detail::fitsInline<ResultTask<T, Call>>();

//! Whether the state holds the call instead (StateTask): the record cannot,
//! the state can. (Neither: an over-aligned call, which the record holds
//! through a pointer to the heap, ResultTask's heap form.)
template <class T, class Call>
constexpr bool kStateHoldsCall = !kCallInRecord<T, Call> && FutureState<T>::template kCanHold<Call>;

//! The task that computes a result of type T with a `Call`.
template <class T, class Call>
using ResultTaskOf = std::conditional_t<kStateHoldsCall<T, Call>, StateTask<T, Call>, ResultTask<T, Call>>;

//! Whether its getter can take such a task back and run the call itself
//! (Future::getHeld()): the call is in the record or in the state.
template <class T, class Call>
constexpr bool kTakenBackByGetter = kCallInRecord<T, Call> || kStateHoldsCall<T, Call>;

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
