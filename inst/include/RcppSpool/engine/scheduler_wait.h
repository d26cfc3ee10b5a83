// Scheduler's members for waiting: helping waits, joins on the own deque, sleeping till done.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "context.h"
#include "host_hooks.h"
#include "parking.h"
#include "scheduler.h"
#include "task.h"
#include "trace.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

template <class Done>
inline bool Scheduler::waitUntil(const void* key, Done&& done, std::chrono::steady_clock::time_point deadline)
{
    if (done()) return true;
    return waitUntilOn(isServiceThread(), key, done, deadline);
}

// Two instantiations, so that other threads' waits (a recursion's joins)
// check `done()` alone, inlined: the combined condition was an out-of-line
// call at every look (TaskGroup: 471 -> 451 instructions per spawn in fib).
template <class Done>
inline bool Scheduler::waitUntilDoneOrInterrupted(bool service, const void* key, Done&& done,
                                                  std::chrono::steady_clock::time_point deadline)
{
    if (service) return waitUntilOn(true, key, [&] { return done() || interruptRequested(); }, deadline);
    return waitUntilOn(false, key, done, deadline);
}

template <class Done>
inline bool Scheduler::waitUntilOn(bool service, const void* key, Done&& done,
                                   std::chrono::steady_clock::time_point deadline)
{
    const bool bounded = deadline != std::chrono::steady_clock::time_point::max();
    const bool inlined = inlineMode();
    Worker* w = inlined ? nullptr : currentWorker();
    // A join's common case first: on a worker, what it waits for is on
    // top of its own deque (the task a recursion queued just before).
    // It runs that, and whatever it pushed, as the loop below would,
    // without first setting up a full wait (helper slot, hunger mark,
    // clock, spin counts): 42 instructions less per TaskGroup task in
    // fib (callgrind, 1 worker: 517 -> 475), and with the execute() fix
    // fib(30) with a task per call (P3, 2 workers) takes 37 ms, was 54.
    if (w) {
        Task t;
        if (joinOwnOn(*w, done, [](const Task&) { return false; }, t) == OwnJoin::done) return true;
    }
    // A timeline's span (if recording): the wait past that fast path.
    trace::Span waiting(trace::kWait, key);
    // A borrower's thread from outside (a worker of the lender, waiting
    // in a call to this package's code) helps as a worker would: the
    // lender's threads may all be waiting so, with nobody left to serve
    // the sessions this pool asked for (see LentSlot).
    LentSlot helper(*this, !w && lender_ && !service && !inlined);
    if (helper) w = helper.worker();
    // Only the service thread needs the clock (recursive waits are hot).
    auto lastService = service ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    // A worker that waits and finds no work is hungry as an idle one is
    // (see callerRuns()): counted after kHungrySpins failed
    // searches (most joins end sooner: no shared counter to touch then)
    // until it finds work or returns.
    // (A helper's slot was vacant, and so counted hungry: the mark is its.)
    HungerMark hunger{hungry_, static_cast<bool>(helper)};
    for (int spins = 0;; ++spins) {
        if (done()) {
            if (!w) trimOutside();
            return true;
        }
        if (w) {
            Task t;
            if (findWork(*w, t)) {
                hunger.set(false);
                execute(t, w);
                spins = 0;
                continue;
            }
            if (spins >= kHungrySpins) hunger.set(true);
        }
        if (service || bounded) {
            auto now = std::chrono::steady_clock::now();
            if (bounded && now >= deadline) return done();
            if (service && (now - lastService >= kServicePeriod || serviceRequested())) {
                hostHooks().service();
                lastService = std::chrono::steady_clock::now();
                continue;
            }
        }
        if (spins < kWaitSpins) {
            cpuRelax();
            continue;
        }
        if (spins < kWaitSpins + kWaitYields) {
            std::this_thread::yield();
            continue;
        }
        // A borrowing pool's waiter that does not help (R's main thread)
        // sees that queued work has a session: the lender drops the
        // sessions it was asked for when it is interrupted.
        if (lender_ && !w && hasVisibleWork()) wakeWorker(Waker::leaves);  // it sleeps next
        // Sleep until `key` completes (or, on a worker, new work arrives).
        auto until = std::chrono::steady_clock::now() + kParkSlice;
        if (bounded) until = std::min(until, deadline);
        auto slice = until - std::chrono::steady_clock::now();
        if (service) slice = std::min<decltype(slice)>(slice, kServicePeriod);
        if (slice > slice.zero())
            sleepUntilDone(key, done, w != nullptr, std::chrono::duration_cast<std::chrono::nanoseconds>(slice));
        spins = kWaitSpins;  // keep yielding between sleeps
    }
}

template <bool kWhole, class Done, class IsMine>
[[gnu::always_inline]] inline Scheduler::OwnJoin Scheduler::joinOwn(Done&& done, IsMine&& isMine, Task& mine,
                                                                     Worker** self, const TaskSlot** slot)
{
    Worker* const w = currentWorker();
    if (self) *self = w;
    if (!w || inlineMode()) return OwnJoin::wait;
    return joinOwnOn<kWhole>(*w, done, isMine, mine, slot);
}

inline Context* Scheduler::enclosingContext() noexcept
{
    Frame* f = currentFrame();
    return f ? f->context : nullptr;
}

inline void Scheduler::notifyCompletion(const void* key)
{
    if (forked()) return;  // nobody to wake; the lists may hold stale state
    waiters_.wake(key);
}

template <class Done>
inline void Scheduler::sleepUntilDone(const void* key, Done& done, bool worker, std::chrono::nanoseconds slice)
{
    Sleeper me;
    SleepNode forKey{&me, key};
    SleepNode forWork{&me};
    SleepNode forService{&me};  // the service thread (never a worker): see requestService()
    const bool service = onServiceThread();
    waiters_.add(forKey);
    bool ready = done() || (worker && idle_.enlist(forWork, [&] { return done() || hasVisibleWork(); }));
    if (!ready && service)
        ready = serviceRequests().sleepers.enlist(forService, [&] { return done() || serviceRequested(); });
    if (!ready) {
        me.sleep(slice);
        const bool wokenForWork = worker && !idle_.delist(forWork);
        if (wokenForWork && done() && hasVisibleWork()) wakeWorker();
        if (service) serviceRequests().sleepers.delist(forService);
    }
    waiters_.remove(forKey);
}

template <bool kWhole, class Done, class IsMine>
[[gnu::always_inline]] inline Scheduler::OwnJoin Scheduler::joinOwnOn(Worker& w, Done&& done, IsMine&& isMine,
                                                                       Task& mine, const TaskSlot** slot)
{
    if constexpr (kWhole) {
        for (;;) {
            if (done()) return OwnJoin::done;
            if (!findOwnWork(w, mine)) return OwnJoin::wait;
            if (isMine(static_cast<const Task&>(mine))) return OwnJoin::mine;
            execute(mine, &w);
        }
    }
    // findOwnWork(), the task read in two parts: the rest of the one sought
    // only if the caller runs it (a spawn's record is 8 words, read and
    // written again: ~14 instructions a join). The common case inline, the
    // rest out of line (the loop and its call of execute() made the caller
    // save every register: ~8 instructions a join).
    if (done()) return OwnJoin::done;
    if (paused_.load(std::memory_order_relaxed)) return OwnJoin::wait;
    const TaskSlot* at = nullptr;
    if (!w.deque.popHead(mine, &at)) return OwnJoin::wait;
    // Sought, counted in no context (else the runtime runs it: see
    // runTakenBack()), not paused meanwhile (as keepUnlessPaused()).
    if (isMine(static_cast<const Task&>(mine)) && !mine.context() && !paused_.load(std::memory_order_seq_cst)) {
        if (slot) *slot = at;
        return OwnJoin::mine;
    }
    return joinOwnPastHead(w, done, isMine, mine, *at);
}

template <class Done, class IsMine>
[[gnu::noinline]] Scheduler::OwnJoin Scheduler::joinOwnPastHead(Worker& w, Done& done, IsMine& isMine, Task& t,
                                                                const TaskSlot& at)
{
    at.loadTail(t);  // still there: only this thread writes its slots
    if (paused_.load(std::memory_order_seq_cst)) {
        pushOwn(w, t);  // back on the deque, whole
        return OwnJoin::wait;
    }
    if (isMine(static_cast<const Task&>(t))) return OwnJoin::mine;
    execute(t, &w);
    return joinOwnOn<true>(w, done, isMine, t);
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
