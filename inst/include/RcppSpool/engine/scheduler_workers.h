// Scheduler's workers: finding and stealing work, standing aside, waking, the worker loop.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <utility>

#include "parking.h"
#include "scheduler.h"
#include "task.h"
#include "work_deque.h"
#include "worker_set.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline std::ptrdiff_t Scheduler::currentWorkerIndex() noexcept
{
    const Worker* w = workerTls().worker;
    return w ? static_cast<std::ptrdiff_t>(w->index) : -1;
}

inline void Scheduler::outsideLeaves()
{
    outsideParticipants_.fetch_sub(1, std::memory_order_seq_cst);
    fenceAfterChange();
    // A sleeper that lists itself after this load sees the count already
    // down and does not sleep; the deques are scanned only if one sleeps.
    if (aside_.sleepers() > 0 && hasVisibleWork()) aside_.notifyAll();
}

inline void Scheduler::cpuRelax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

inline bool Scheduler::hasVisibleWork() const
{
    if (paused_.load(std::memory_order_seq_cst)) return false;
    if (injection_.size() > 0 || !outside_.empty()) return true;
    const std::size_t n = numWorkers();
    return mayHaveWork_.forEach(
        0, [&](std::size_t v) { return v < n && !workers_[v]->deque.empty(); }, std::memory_order_seq_cst);
}

[[gnu::always_inline]] inline void Scheduler::pushOwn(Worker& w, const Task& t)
{
    w.deque.push(t);
    advertise(w);
}

inline void Scheduler::advertise(Worker& w)
{
    if (w.advertised) return;
    w.advertised = true;
    mayHaveWork_.insert(w.index);
}

inline void Scheduler::unadvertise(Worker& w)
{
    if (!w.advertised || !w.deque.empty()) return;
    w.advertised = false;
    mayHaveWork_.erase(w.index);
}

[[gnu::always_inline]] inline bool Scheduler::keepUnlessPaused(Worker& w, const Task& t)
{
    if (!paused_.load(std::memory_order_seq_cst)) return true;
    pushOwn(w, t);
    return false;
}

inline bool Scheduler::takeWork(Worker& w, Task& out)
{
    if (paused_.load(std::memory_order_relaxed)) return false;
    if (w.deque.pop(out)) return true;
    // Outside submissions in batches (see WorkDeque::stealHalf()), as from
    // the injection queue: the rest stays stealable in w's own deque.
    if (outside_.stealHalf(out, w.deque)) {
        if (!w.deque.empty()) advertise(w);
        return true;
    }
    if (injection_.takeBatch(out, w.deque, kInjectionBatch)) {
        if (!w.deque.empty()) advertise(w);  // the rest of the batch
        return true;
    }
    const std::size_t n = numWorkers();
    if (n > 1) {
        w.rng ^= w.rng << 13;
        w.rng ^= w.rng >> 7;
        w.rng ^= w.rng << 17;
        return mayHaveWork_.forEach(w.rng, [&](std::size_t v) {
            return v != w.index && v < n && workers_[v]->deque.steal(out);
        });
    }
    return false;
}

inline std::size_t Scheduler::standingAside() const
{
    const std::size_t out = static_cast<std::size_t>(outsideParticipants_.load(std::memory_order_seq_cst));
    const std::size_t n = numWorkers();
    return std::min(out, n > 0 ? n - 1 : 0);
}

// A lent worker serves another pool's session, whose bodies may call this
// pool's loops as one of its workers: it computes, and cannot stand aside.
// Without the skip, when the session went to the last worker, the worker
// standing aside was the busy one, and the others computed on: three threads
// on two workers (test-runtime.R caught it now and then). The choice stays
// fixed otherwise: letting whichever worker looked first stand aside (tried)
// made the two swap roles between loops, and Linux then often left the
// working one runnable on the caller's core while the other core idled:
// 73-251 of 1,000 back-to-back 1e6-iteration loops ran without a worker, 0
// with the fixed choice.
inline bool Scheduler::standsAside(const Worker& w) const
{
    if (lender_) return false;
    std::size_t k = standingAside();
    if (k == 0) return false;  // no thread from outside in a loop: one load
    for (std::size_t v = numWorkers(); v-- > 0;) {
        if (workers_[v]->lent.load(std::memory_order_seq_cst)) continue;
        if (v == w.index) return true;
        if (--k == 0) return false;
    }
    return false;
}

[[gnu::always_inline]] inline bool Scheduler::keepUnlessAside(Worker& w, const Task& t)
{
    if (!standsAside(w)) return true;
    pushOwn(w, t);
    return false;
}

[[gnu::always_inline]] inline void Scheduler::wakeWorker(Waker from)
{
    // Nobody asleep (the common case in a busy pool, checked at every
    // push): nothing to do, and no call.
    if (idle_.sleepers() == 0 && aside_.sleepers() == 0 && !(lender_ && mayBorrow())) return;
    wakeSleeper(from);
}

inline void Scheduler::workerLoop(Worker& w)
{
    const WorkerTls outer = workerTls();  // a lent thread may be a worker of its lender's
    setWorkerTls(WorkerTls{this, &w});
    Task t;
    bool woke = false;  // back from sleep: see below
    // Counted in hungry_ from its start (see start()) and from the moment
    // it finds no work until it finds some (searching, asleep, or woken
    // and on its way), but not while it stands aside: see
    // callerRuns().
    HungerMark hunger{hungry_, true};
    while (!stopping_.load(std::memory_order_relaxed)) {
        if (lender_ && borrowsTooMany()) break;
        if (standsAside(w)) {
            hunger.set(false);
            // We may have been woken for work we may not take now: pass
            // the wake-up on to a worker that may.
            if (hasVisibleWork()) wakeWorker(Waker::leaves);
            // A bounded sleep: wakeWorker() cannot tell every freed
            // sleeper here (several outside threads leaving and joining),
            // and a client built against older headers does not call it.
            aside_.park([&] { return stopping_.load(std::memory_order_seq_cst) || !standsAside(w); },
                        [](int) { return std::chrono::nanoseconds(kAsideSleep); });
            woke = true;
            continue;
        }
        if (findWork(w, t)) {
            if (!keepUnlessAside(w, t)) continue;  // stands aside (above)
            // Submitters wake nobody while a worker searches; if that one
            // gave up (or stood aside) it woke one sleeper, maybe for
            // several tasks. So whoever comes back from sleep to work
            // wakes the next if more is waiting (chained, as searchers do).
            hunger.set(false);
            if (std::exchange(woke, false) && hasVisibleWork()) wakeWorker();
            execute(t, &w);
            continue;
        }
        woke = false;
        hunger.set(true);
        unadvertise(w);
        // Search briefly: back-to-back loops and tasks arrive within
        // microseconds, and a futex wake-up costs more than that. Yield
        // while spinning, so that on a machine with as many workers as
        // cores the thread that submits work gets the core. While a worker
        // searches, submitters wake nobody; a searcher that finds work
        // wakes the next sleeper if more work is waiting (chained wake-ups).
        searching_.fetch_add(1, std::memory_order_seq_cst);
        bool found = false;
        const auto spinEnd = std::chrono::steady_clock::now() + kIdleSpin;
        for (int i = 1; !found; ++i) {
            for (int k = 0; k < 16; ++k) cpuRelax();
            if (standsAside(w)) break;
            if (findWork(w, t)) {
                found = keepUnlessAside(w, t);  // (if not, it stands aside below)
                break;
            }
            if (stopping_.load(std::memory_order_relaxed)) break;
            if ((i & 7) == 0) {
                if (std::chrono::steady_clock::now() > spinEnd) break;
                std::this_thread::yield();
            }
        }
        const bool lastSearcher = searching_.fetch_sub(1, std::memory_order_seq_cst) == 1;
        if (found) {
            hunger.set(false);
            if (lastSearcher && hasVisibleWork()) wakeWorker();
            execute(t, &w);
            continue;
        }
        if (standsAside(w)) continue;  // sleeps apart (above)
        // Going to sleep: our deque goes back to its reserve buffer, and
        // the last worker to sleep frees what bursts left (see
        // releaseIdleMemory()).
        w.deque.shrink();
        if (lender_) break;  // a lent thread goes back to its lender instead
        Garbage garbage;
        idle_.park([&] { return stopping_.load(std::memory_order_seq_cst) || hasVisibleWork(); },
                   [&](int asleep) { return releaseIdleMemory(garbage, asleep); });
        woke = true;
    }
    hunger.set(false);  // before the thread is no longer a worker
    setWorkerTls(outer);
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
