// Scheduler's lent workers: a lender's threads borrowed as workers while there is work.
//
// A scheduler with a lender (a runtime of another ABI version: see
// ThreadLender) starts no thread. Its workers are slots that threads of
// the lender take for a while:
//   - a session: when work is pushed and fewer sessions are under way
//     than the pool may have workers, the pool asks the lender to run a
//     session (lendWorker()); on one of the lender's threads, the session
//     takes a free slot and serves as its worker (workerLoop()) until it
//     finds no work, then gives the thread back instead of sleeping;
//   - a helper: a thread from outside the pool that waits in it (a
//     worker of the lender in a call to this package's code) takes a
//     free slot for the length of its wait and helps, as a worker waiting
//     would. Without that, a lender whose threads all wait for this pool
//     would never run the sessions the pool asked for.
// inUse_ counts the sessions asked for and not yet over. A push reads it
// after the push; a session that ends counts itself out, then looks for
// work: so no work is left without a thread. Vacant slots count as
// hungry workers (see callerRuns()): a spawn is queued for a
// thread that may come. outstanding_ counts the sessions and helpers
// that may still touch this scheduler: stopWorkers() waits for them.
// The other side, serving sessions to a borrower, is lending.h.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>

#include "scheduler.h"
#include "thread_lender.h"
#include "trace.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline void Scheduler::runLentSession(LentRun run, void* arg)
{
    // While a timeline records, a session is one task span, labelled: the
    // borrower's tasks run in its own copy of the engine, built against
    // older headers without the timeline's hooks, so this span is all of
    // them that a timeline can show (its id: the borrowing pool).
    const std::int64_t start = trace::recording() ? trace::now() : 0;
    Worker* w = currentWorker();
    if (!w || w->lent.load(std::memory_order_relaxed)) {
        run(arg, 0);
    } else {
        w->lent.store(true, std::memory_order_seq_cst);
        run(arg, 0);
        w->lent.store(false, std::memory_order_seq_cst);
        // A worker that stood aside in its place may compute again.
        if (aside_.sleepers() > 0) aside_.notifyAll();
    }
    if (start) trace::record(trace::kTask, reinterpret_cast<std::uintptr_t>(arg), start, kLentSessionLabel);
}

inline bool Scheduler::enterOutstanding()
{
    outstanding_.fetch_add(1, std::memory_order_seq_cst);
    if (!stopping_.load(std::memory_order_seq_cst)) return true;
    leaveOutstanding();
    return false;
}

inline bool Scheduler::lendWorker()
{
    if (!enterOutstanding()) return false;
    int u = inUse_.load(std::memory_order_relaxed);
    do {
        if (u >= sessionsAllowed()) {
            leaveOutstanding();
            return false;
        }
    } while (!inUse_.compare_exchange_weak(u, u + 1, std::memory_order_seq_cst));
    if (lender_->lend(lender_->self, &Scheduler::lentSession, this) == 0) return true;
    inUse_.fetch_sub(1, std::memory_order_seq_cst);
    leaveOutstanding();
    return false;
}

inline void Scheduler::lentSession(void* self, int dropped) noexcept
{
    auto* s = static_cast<Scheduler*>(self);
    // Dropped: the lender drops its queue on an interrupt (which this
    // pool's waits see too); asking again would put the session back
    // into the queue being dropped.
    const bool serve = !dropped && !s->stopping_.load(std::memory_order_seq_cst);
    if (serve) {
        LentSlot slot(*s, LentSlot::Session{});
        if (slot) s->workerLoop(*slot.worker());  // no slot free: helpers hold them all
    }
    s->inUse_.fetch_sub(1, std::memory_order_seq_cst);
    // A push that saw every session under way asked for none: look again.
    if (serve && !s->stopping_.load(std::memory_order_seq_cst) && s->hasVisibleWork()) s->wakeWorker(Waker::leaves);
    s->leaveOutstanding();  // the last touch of *s
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
