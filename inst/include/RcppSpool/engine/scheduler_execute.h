// Scheduler's members for running a task: its frame, the end of its context, the counts.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <exception>

#include "context.h"
#include "host_hooks.h"
#include "scheduler.h"
#include "task.h"
#include "trace.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline void Scheduler::finish(Context* c)
{
    while (c) {
        // Read before the decrement: once the count is zero, a waiter may
        // return and destroy a Context that is not owned by the engine.
        const bool owned = c->owned();
        Context* parent = c->parent();
        const std::ptrdiff_t left = c->finishOne();
        if (left != 0) {
            // A task that waits for its own children (ThreadPool::wait()
            // in a task) waits until only it is left.
            if (left == 1 && owned) notifyCompletion(c);
            return;
        }
        if (!owned) {
            notifyCompletion(c);
            return;
        }
        if (c->hasError() && parent) parent->fail(c->takeError());
        delete c;
        c = parent;
    }
}

// `t` is run in place: a copy here cost a fifth of fib(30)'s time with a
// TaskGroup task per call on 2 workers (31 ms; 24.5 ms without it): a queue
// writes a Task as eight 8-byte words (see TaskSlot), g++ copied it in
// 16-byte loads, and the CPU cannot forward narrower stores to a wider load:
// each load waited for the stores to reach the cache.
RCPPSPOOL_NO_STACK_PROTECTOR inline void Scheduler::execute(Task& t, Worker* const self) { run(t, self); }

[[gnu::always_inline]] inline void Scheduler::run(Task& t, Worker* const self)
{
    Context* const c = t.context();
    Counters& n = counters(self);
    bump(n.started, self);
    if (c && (c->cancelled() || interruptRequested())) {
        t.discard();
    } else {
        // The thread's frame slot, looked up once (each lookup is a
        // thread_local's guard and load).
        Frame*& current = *currentFrameSlot();
        Frame frame{this, c, c ? c : &root_, nullptr, current};
        current = &frame;
        // While a timeline records, out of line: here a load and a branch
        // (callgrind, fib: +3.4 instructions a spawn; +6.2 with the start
        // time read here and kept across the call).
        if (trace::recording()) {
            runRecorded(t, c, self);
        } else {
            try {
                t.run();
            } catch (...) {
                if (c) c->fail(std::current_exception());
            }
        }
        current = frame.outer;
        if (frame.children) finish(frame.children);
    }
    bump(n.finished, self);
    finish(c);
}

[[gnu::always_inline]] inline void Scheduler::runTakenBack(Task& t, Worker* const self) noexcept
{
    if (t.context()) {
        run(t, self);
        return;
    }
    // One count instead of run()'s two, no frame, no timeline span (a task
    // without a context is none: see runRecorded()).
    bump(counters(self).takenBack, self);
    try {
        t.run();
    } catch (...) {
    }
}

// run()'s task while a timeline records: the task as a span. Its id is the
// group or pool it counts in (the first context that is not a running
// task's children). A loop's ticket (no context) is no span (its chunks
// are), but says which worker the thread is. A task deeper than
// trace::kRecordedTaskDepth in tasks on this thread is counted in its
// recorded ancestor's span.
[[gnu::noinline, gnu::cold]] inline void Scheduler::runRecorded(Task& t, Context* c, Worker* self) noexcept
{
    const int worker = self ? static_cast<int>(self->index) : -1;
    // Before the task: a loop's ticket runs until the loop ends, and the
    // recording may stop as it ends (timeline() around the loop); noted
    // after it, the thread was named "thread 2", not "worker 1", in the
    // demo's figure.
    if (!c) {
        trace::noteWorker(worker);
        try {
            t.run();
        } catch (...) {
        }
        return;
    }
    // Deeper than kRecordedTaskDepth, counted only: no clock, no event.
    trace::detail::TaskNesting& n = trace::detail::taskNesting();
    const bool spanned = n.depth < trace::kRecordedTaskDepth;
    const std::uint32_t before = n.unrecorded;
    const std::int64_t start = spanned ? trace::now() : 0;
    ++n.depth;
    try {
        t.run();
    } catch (...) {
        c->fail(std::current_exception());
    }
    --n.depth;
    if (!spanned) {
        ++n.unrecorded;
        return;
    }
    // The unrecorded tasks it ran are its own, not also its recorded ancestor's.
    const std::uint32_t below = n.unrecorded - before;
    n.unrecorded = before;
    while (c->owned() && c->parent()) c = c->parent();
    trace::record(trace::kTask, reinterpret_cast<std::uintptr_t>(c), start, nullptr, worker, 1 + below);
}

template <class Body>
inline void Scheduler::runWithin(Context* context, Context* counted, Body&& body) noexcept
{
    Frame*& current = *currentFrameSlot();
    Frame frame{this, context, counted, nullptr, current};
    current = &frame;
    body();
    current = frame.outer;
    if (frame.children) finish(frame.children);
}

inline std::size_t Scheduler::total(std::atomic<std::size_t> Counters::*count) const
{
    std::size_t n = 0;
    for (const auto& c : counters_) n += (c.*count).load(std::memory_order_relaxed);
    return n;
}

inline std::size_t Scheduler::tasksPushed() const { return total(&Counters::pushed); }

// The count that grows later (a task is pushed before it starts, and starts
// before it finishes) is read first, so the order of the reads never makes
// the difference negative.
inline std::size_t Scheduler::tasksQueued() const
{
    const std::size_t s = total(&Counters::started) + total(&Counters::takenBack);
    const std::size_t p = total(&Counters::pushed);
    return p > s ? p - s : 0;
}

inline std::size_t Scheduler::tasksRunning() const
{
    const std::size_t f = total(&Counters::finished);
    const std::size_t s = total(&Counters::started);
    return s > f ? s - f : 0;
}

[[gnu::always_inline]] inline void Scheduler::bump(std::atomic<std::size_t>& c, Worker* w)
{
    if (w && w->index < kCounterSlots - 1)
        c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    else
        c.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
