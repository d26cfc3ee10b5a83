// Scheduler's members for submitting work: counting it, queueing it, taking it back.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstdint>

#include "context.h"
#include "scheduler.h"
#include "task.h"
#include "work_deque.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline Context* Scheduler::contextForNewWork()
{
    Frame* f = currentFrame();
    if (!f || f->scheduler != this) return &root_;
    if (!f->children) {
        f->counted->add(1);
        f->children = new Context(f->counted, /*owned=*/true);
        f->children->add(1);  // the running task itself
    }
    return f->children;
}

inline Context* Scheduler::contextForResultTask()
{
    Frame* f = currentFrame();
    return f && f->scheduler == this ? nullptr : &root_;
}

inline void Scheduler::submit(const Task& t) noexcept { submitFrom(currentWorker(), t); }

[[gnu::always_inline]] inline void Scheduler::submitResult(table::TaskUnit& u) noexcept
{
    // Both read at once: g++ looked the record up again after the count
    // below (an atomic increment), another call of __tls_get_addr.
    const ThreadRecord& r = threadRecord();
    const Frame* const f = r.frame;
    Worker* const w = workerIn(r);
    Context* const ctx = f && f->scheduler == this ? nullptr : &root_;
    if (ctx) ctx->add(1);
    submitFrom(w, Task::of(u, ctx));
}

[[gnu::always_inline]] inline void Scheduler::submitFrom(Worker* w, const Task& t) noexcept
{
    if (inlineMode()) {
        executeCopy(t);
        return;
    }
    bump(counters(w).pushed, w);
    try {
        if (w) {
            pushOwn(*w, t);
        } else if (ownsOutsideDeque()) {
            outside_.push(t);
        } else {
            injection_.push(t);
        }
    } catch (...) {
        // No memory for a larger queue: the task runs here and now, as in a
        // pool without workers; nothing is lost and the caller need not
        // handle a failure (the runtime's submit entry is then a plain
        // call, no handler of its own: ~12 instructions a spawn).
        executeCopy(t);
        return;
    }
    // A worker that is already looking for work will find this task; waking
    // a sleeper too would only put a thread more on the cores.
    if (searching_.load(std::memory_order_seq_cst) == 0) wakeWorker();
}

template <class Unneeded>
inline void Scheduler::withdraw(Unneeded&& unneeded)
{
    if (inlineMode()) return;
    Worker* w = currentWorker();
    WorkDeque* d = w ? &w->deque : isOutsideOwner() ? &outside_ : nullptr;
    if (!d) return;
    // Workers take from outside_ in batches: its owner takes back so.
    auto takeBack = [w, d](Task& t) { return w ? d->pop(t) : d->popBesideBatches(t); };
    Task t;
    while (takeBack(t)) {
        if (!unneeded(static_cast<const Task&>(t))) {
            // The owner's top: where it was.
            if (w)
                pushOwn(*w, t);
            else
                d->push(t);
            return;
        }
        Counters& n = counters(w);
        bump(n.started, w);
        t.discard();
        bump(n.finished, w);
    }
}

// Why the frame: in a recursion the calls queued first (the big ones, near
// the root) stay where a thief finds them and the deeper ones become plain
// calls; but a loop that spawns many calls from one frame (the root of a
// tree with 100,000 children) queues them all, as their siblings are,
// instead of keeping all but the first two on its thread, out of thieves'
// reach (uts at a fine grain on 2 threads: 0.37x sequential speed with every
// sibling kept, 1.05x with the siblings queued). Every call a worker queues
// here records its frame. Stacks of other shapes (coroutines) only make the
// choice worse, never wrong: either way the call runs once.
[[gnu::always_inline]] inline int Scheduler::callerRuns(const void* frame) const noexcept
{
    // Called at every spawn: the common answer first, from the thread's
    // own state (the fork and worker-count checks cost as much again).
    Worker* w = currentWorker();
    if (w) {
        // Stacks grow down: deeper is a lower address.
        const auto at = reinterpret_cast<std::uintptr_t>(frame);
        if (w->deque.size() >= static_cast<std::int64_t>(kLazyDepth) &&
            hungry_.load(std::memory_order_relaxed) == 0 && at < w->lastQueuedFrame)
            return 1;
        w->lastQueuedFrame = at;
    }
    return inlineMode() ? 2 : 0;
}

inline bool Scheduler::ownsOutsideDeque()
{
    const void* me = outsideToken();
    const void* owner = outsideOwner_.load(std::memory_order_relaxed);
    if (owner == me) return true;
    if (owner != nullptr) return false;
    return outsideOwner_.compare_exchange_strong(owner, me, std::memory_order_acq_rel) ||
           owner == me;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
