// The work-stealing scheduler: worker threads, where tasks go, how waits help.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "block_cache.h"
#include "context.h"
#include "fork_guard.h"
#include "host_hooks.h"
#include "parking.h"
#include "signal_mask.h"
#include "task.h"
#include "thread_lender.h"
#include "work_deque.h"
#include "worker_set.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

class Scheduler;

//! What the current thread is running: lets push() from inside a task count
//! the new work as that task's children, and wait() wait for exactly them.
//!
//! Every piece of work pushed from inside a task is counted, through its
//! children's context, in `counted`, and so on up to a context that somebody
//! outside waits for: the pool's root (wait()), a TaskGroup, a loop's owner.
//! That holds for tasks that are not counted themselves (loop tickets,
//! futures' tasks): they run with the `counted` of whoever started them, or
//! the root, never with nothing, or their children would be waited for by
//! nobody (RcppThread's defect 7: a nested ThreadPool::parallelFor without
//! an inner wait() still running when the outer wait() returned).
struct Frame {
    Scheduler* scheduler;
    Context* context;                  //!< what the work belongs to: cancellation, nested loops and groups
    Context* counted;                  //!< where what it pushes is counted (never null)
    Context* children;                 //!< made on the first push from this frame
    Frame* outer;                      //!< the frame this one interrupted (helping waits nest)
};

RCPPSPOOL_HIDDEN inline Frame*& currentFrame() noexcept
{
    static thread_local Frame** const frame = runtime::threadState<Frame*, runtime::ThreadSlot::frame>();
    return *frame;
}

//! A FIFO for tasks submitted from threads outside the pool. Workers take
//! several at a time into their own deque, so that the lock is rarely
//! contended and the tasks stay stealable.
//!
//! A ring buffer that doubles when full. What a burst made it grow beyond
//! kKeepCapacity is kept while the queue is in use and given back once it
//! has been empty for a while (releaseIdle(), called by the scheduler when
//! the pool is idle): bursts that follow each other closely reuse the
//! memory, and a burst does not stay resident for the rest of the session.
class InjectionQueue {
public:
    using Clock = std::chrono::steady_clock;
    //! Capacity of the first buffer, in tasks (4 KB).
    static constexpr std::size_t kReserveCapacity = 64;
    //! A buffer up to this size (64 KB) is kept for good.
    static constexpr std::size_t kKeepCapacity = 1024;

    //! Raw storage for `capacity` Tasks (a power of two); Tasks are trivially
    //! copyable, so nothing is constructed or destroyed but what is pushed.
    struct Ring {
        Task* slots = nullptr;
        std::size_t capacity = 0;
        Ring() = default;
        explicit Ring(std::size_t cap)
            : slots(static_cast<Task*>(allocateQueueMemory(cap * sizeof(Task)))), capacity(cap) {}
        Ring(Ring&& o) noexcept : slots(std::exchange(o.slots, nullptr)), capacity(std::exchange(o.capacity, 0)) {}
        Ring& operator=(Ring&& o) noexcept
        {
            std::swap(slots, o.slots);
            std::swap(capacity, o.capacity);
            return *this;
        }
        ~Ring() { freeQueueMemory(slots, capacity * sizeof(Task)); }
    };

    void push(const Task& t)
    {
        std::lock_guard<std::mutex> lk(m_);
        if (count_ == ring_.capacity) grow();
        ::new (static_cast<void*>(ring_.slots + ((head_ + count_) & (ring_.capacity - 1)))) Task(t);
        ++count_;
        size_.store(count_, std::memory_order_seq_cst);
    }
    //! Moves up to `maxBatch` tasks: the first into `first`, the rest into `deque`.
    bool takeBatch(Task& first, WorkDeque& deque, std::size_t maxBatch)
    {
        if (size_.load(std::memory_order_relaxed) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (count_ == 0) return false;
        first = popFront();
        std::size_t n = std::min(maxBatch, count_);
        for (std::size_t i = 0; i < n; ++i) deque.push(popFront());
        size_.store(count_, std::memory_order_relaxed);
        return true;
    }
    bool takeOne(Task& out)
    {
        if (size_.load(std::memory_order_relaxed) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (count_ == 0) return false;
        out = popFront();
        size_.store(count_, std::memory_order_relaxed);
        return true;
    }
    std::size_t size() const { return size_.load(std::memory_order_seq_cst); }

    //! If a burst left the buffer larger than kKeepCapacity and the queue
    //! has been empty since `cutoff` or before, moves the buffer into `out`
    //! (for the caller to free, outside the lock) and returns true; if it was
    //! emptied after `cutoff`, lowers `pending` to when. Any thread.
    bool releaseIdle(Ring& out, Clock::time_point cutoff, Clock::time_point& pending)
    {
        if (!large_.load(std::memory_order_relaxed)) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (count_ != 0 || ring_.capacity <= kKeepCapacity) return false;
        if (emptiedAt_ > cutoff) {
            if (emptiedAt_ < pending) pending = emptiedAt_;
            return false;
        }
        out = std::move(ring_);  // the next push starts again with a small buffer
        head_ = 0;
        large_.store(false, std::memory_order_relaxed);
        return true;
    }

private:
    Task popFront()
    {
        Task t = ring_.slots[head_];
        head_ = (head_ + 1) & (ring_.capacity - 1);
        if (--count_ == 0 && ring_.capacity > kKeepCapacity) emptiedAt_ = Clock::now();
        return t;
    }
    void grow()
    {
        Ring bigger(ring_.capacity ? 2 * ring_.capacity : kReserveCapacity);
        for (std::size_t i = 0; i < count_; ++i)
            ::new (static_cast<void*>(bigger.slots + i)) Task(ring_.slots[(head_ + i) & (ring_.capacity - 1)]);
        head_ = 0;
        ring_ = std::move(bigger);  // the old buffer goes with `bigger`
        if (ring_.capacity > kKeepCapacity) large_.store(true, std::memory_order_relaxed);
    }

    std::mutex m_;
    Ring ring_;                         // guarded by m_, as the three below
    std::size_t head_ = 0, count_ = 0;
    Clock::time_point emptiedAt_;       // when a large buffer was last emptied
    std::atomic<std::size_t> size_{0};
    std::atomic<bool> large_{false};    // ring_ is larger than kKeepCapacity
};

//! The scheduler behind a ThreadPool. It knows nothing of R: the host hooks
//! (host_hooks.h) tell it which thread to keep responsive.
class Scheduler {
public:
    struct Worker;  // (below: execute() takes one)
    //! A scheduler with `nWorkers` workers: threads of its own, or, with a
    //! `lender`, the lender's threads, borrowed while there is work (see
    //! "lent workers" below). The lender must outlive the scheduler.
    explicit Scheduler(std::size_t nWorkers, const ThreadLender* lender = nullptr)
        : generation_(forkGeneration()), forkCounter_(&forkGenerationCounter()), lender_(lender)
    {
        start(nWorkers);
    }

    //! Waits for running tasks, drops queued ones, stops the workers.
    ~Scheduler()
    {
        if (forked()) {
            // Our workers do not exist in this process and our locks may be
            // held by them: leak the state rather than touch it.
            for (std::size_t i = 0; i < numWorkers(); ++i)
                if (workers_[i]->thread.joinable()) workers_[i]->thread.detach();
            workers_.release();
            return;
        }
        stopWorkers();
        dropQueued();
    }

    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // ---- submitting ---------------------------------------------------------

    //! The context new work submitted from this thread counts in: the running
    //! task's children if called from a task of this scheduler, else the root.
    Context* contextForNewWork()
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

    //! The context a task with its own result (pushReturn, async) counts in:
    //! from outside the pool the root (wait() waits for it); from inside a
    //! task none: its Future is what waits for it, and counting it would cost
    //! the running task a context of its own (a heap allocation per recursion
    //! of recursive async). Such a task checks for interrupts itself.
    Context* contextForResultTask()
    {
        Frame* f = currentFrame();
        return f && f->scheduler == this ? nullptr : &root_;
    }

    //! Queues a task (already counted in its context, if any). Runs it at once
    //! when the pool has no workers or lives in a forked child.
    void submit(const Task& t)
    {
        if (inlineMode()) {
            executeCopy(t);
            return;
        }
        Worker* w = currentWorker();
        bump(counters(w).pushed, w);
        if (w) {
            pushOwn(*w, t);
        } else if (ownsOutsideDeque()) {
            outside_.push(t);
        } else {
            injection_.push(t);
        }
        // A worker that is already looking for work will find this task; waking
        // a sleeper too would only put a thread more on the cores.
        if (searching_.load(std::memory_order_seq_cst) == 0) wakeWorker();
    }

    //! Takes back from the top of the calling thread's own queue the tasks
    //! that `unneeded(task)` names (a loop's tickets once the loop has no
    //! chunk left) and discards them, up to the first task it keeps. Left
    //! queued, they would only wake a sleeper for nothing. A thread that
    //! queues through the injection queue owns no queue and takes nothing back.
    template <class Unneeded>
    void withdraw(Unneeded&& unneeded)
    {
        if (inlineMode()) return;
        Worker* w = currentWorker();
        WorkDeque* d = w ? &w->deque : isOutsideOwner() ? &outside_ : nullptr;
        if (!d) return;
        Task t;
        while (d->pop(t)) {
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

    // ---- waiting --------------------------------------------------------------

    //! Waits until `done()`, which becomes true when `key` (the address of
    //! what is waited for: a Context, a loop, a future's state) is completed
    //! with notifyCompletion(key). On a worker of this pool it runs other
    //! tasks meanwhile; on the host's service thread it services the host
    //! (which may raise an interrupt: a `done` that should end early on
    //! interrupts checks interruptRequested() itself). Returns false if
    //! `deadline` passed first.
    template <class Done>
    bool waitUntil(const void* key, Done&& done,
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max())
    {
        if (done()) return true;
        return waitUntilOn(isServiceThread(), key, done, deadline);
    }
    //! waitUntilOn() until `done()` or, on the service thread, the user's
    //! interrupt (which only the service thread's waits see first). Two
    //! instantiations, so that other threads' waits (a recursion's joins)
    //! check `done()` alone, inlined: the combined condition was an
    //! out-of-line call at every look (TaskGroup: 471 -> 451 instructions
    //! per spawn in fib).
    template <class Done>
    bool waitUntilDoneOrInterrupted(bool service, const void* key, Done&& done,
                                    std::chrono::steady_clock::time_point deadline =
                                        std::chrono::steady_clock::time_point::max())
    {
        if (service) return waitUntilOn(true, key, [&] { return done() || interruptRequested(); }, deadline);
        return waitUntilOn(false, key, done, deadline);
    }
    //! waitUntil() for a caller that already knows whether it runs on the
    //! host's service thread (`service`: onServiceThread()), which costs a
    //! call of the host's hook in R.
    template <class Done>
    bool waitUntilOn(bool service, const void* key, Done&& done,
                     std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max())
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
        // A borrower's thread from outside (a worker of the lender, waiting
        // in a call to this package's code) helps as a worker would: the
        // lender's threads may all be waiting so, with nobody left to serve
        // the sessions this pool asked for (see LentSlot).
        LentSlot helper(*this, !w && lender_ && !service && !inlined);
        if (helper) w = helper.worker();
        // Only the service thread needs the clock (recursive waits are hot).
        auto lastService = service ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        // A worker that waits and finds no work is hungry as an idle one is
        // (see prefersCallerRuns()): counted after kHungrySpins failed
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
            if (lender_ && !w && hasVisibleWork()) wakeWorker();
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

    //! How joinOwn() ended.
    enum class OwnJoin {
        done,  //!< `done()` became true
        mine,  //!< it took the task sought (not run)
        wait   //!< the caller must wait: its deque ran out (a thief took
               //!< what it waits for), or it is not a worker of this pool
    };
    //! The common case of a join in a recursion: on a worker of this pool,
    //! what it waits for is on top of its own deque. Runs the tasks there, as
    //! a helping wait does, until `done()`, or until it takes the task that
    //! `isMine(task)` names, which it leaves in `mine`, not run (run it with
    //! executeOwn()). No clock, no host, no hunger mark: a caller that gets
    //! OwnJoin::wait sets up a full wait (waitUntil()).
    template <class Done, class IsMine>
    [[gnu::always_inline]] OwnJoin joinOwn(Done&& done, IsMine&& isMine, Task& mine)
    {
        Worker* const w = currentWorker();
        if (!w || inlineMode()) return OwnJoin::wait;
        return joinOwnOn(*w, done, isMine, mine);
    }
    //! Runs a task joinOwn() took, on the calling worker.
    void executeOwn(Task& t) { execute(t, currentWorker()); }

    //! The context a blocking call made from the current thread belongs to
    //! (for cancellation), or null outside any task.
    static Context* enclosingContext() noexcept
    {
        Frame* f = currentFrame();
        return f ? f->context : nullptr;
    }

    //! `key` was completed (a Context, a loop, a future's state; its state
    //! changed just before): wakes the threads waiting for it in waitUntil(),
    //! nobody else.
    void notifyCompletion(const void* key)
    {
        if (forked()) return;  // nobody to wake; the lists may hold stale state
        waiters_.wake(key);
    }

    //! Threads woken so far (tests and benchmarks): for new work (and
    //! workers let back in after standing aside), and for completions;
    //! `ofWorkersAside` is the part of `forWork` that went to workers asleep
    //! standing aside (see outsideJoins()).
    struct WakeUps {
        std::uint64_t forWork, forCompletion, ofWorkersAside;
    };
    WakeUps wakeUps() const { return {idle_.wakeUps() + aside_.wakeUps(), waiters_.wakeUps(), aside_.wakeUps()}; }
    //! Workers asleep standing aside now (tests).
    int workersAsleepAside() const { return aside_.sleepers(); }
    //! Workers whose deques a look for work inspects now: those that pushed
    //! since they last went idle (tests; see hasVisibleWork()).
    std::size_t workersThatMayHaveWork() const { return mayHaveWork_.size(); }

    //! One piece of work counted in `c` has finished: cascade through owned
    //! contexts (a task's children) and wake waiters when something is done.
    void finish(Context* c)
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

    //! Runs one task on the current thread, with its bookkeeping. `t` is the
    //! caller's own copy (a task taken from a queue), run in place. A copy
    //! here cost a fifth of fib(30)'s time with a TaskGroup task per call on
    //! 2 workers (31 ms; 24.5 ms without it): a queue writes a Task as eight
    //! 8-byte words (see TaskSlot), g++ copied it in 16-byte loads, and the
    //! CPU cannot forward narrower stores to a wider load: each load waited
    //! for the stores to reach the cache.
    //! `self`: the calling thread's worker of this pool (currentWorker(),
    //! which the callers know), or null.
    void execute(Task& t, Worker* const self)
    {
        Context* const c = t.context();
        Counters& n = counters(self);
        bump(n.started, self);
        if (c && (c->cancelled() || interruptRequested())) {
            t.discard();
        } else {
            Frame frame{this, c, c ? c : &root_, nullptr, currentFrame()};
            currentFrame() = &frame;
            try {
                t.run();
            } catch (...) {
                if (c) c->fail(std::current_exception());
            }
            currentFrame() = frame.outer;
            if (frame.children) finish(frame.children);
        }
        bump(n.finished, self);
        finish(c);
    }

    //! execute() of a copy of `t` (submit() without workers). Out of line: a
    //! copy inlined into submit() made every push dearer (72 -> 77
    //! instructions per push from outside the pool, callgrind).
    [[gnu::noinline]] void executeCopy(const Task& t)
    {
        Task own = t;
        execute(own, currentWorker());
    }

    //! Runs `body` (which must not throw) on this thread as part of the work
    //! of `context`, with what it pushes counted in `counted` (see Frame):
    //! how a loop's tickets run its iterations as the loop's starter would.
    template <class Body>
    void runWithin(Context* context, Context* counted, Body&& body) noexcept
    {
        Frame frame{this, context, counted, nullptr, currentFrame()};
        currentFrame() = &frame;
        body();
        currentFrame() = frame.outer;
        if (frame.children) finish(frame.children);
    }

    // ---- control --------------------------------------------------------------

    void pause() { paused_.store(true, std::memory_order_seq_cst); }
    void unpause()
    {
        paused_.store(false, std::memory_order_seq_cst);
        idle_.notifyAll();
    }
    bool isPaused() const { return paused_.load(std::memory_order_relaxed); }

    //! How long queue memory that a burst took is kept for the next burst
    //! once the pool is idle (kReleaseDelay unless changed, e.g. by a test).
    std::chrono::nanoseconds releaseDelay() const
    {
        return std::chrono::nanoseconds(releaseDelayNs_.load(std::memory_order_relaxed));
    }
    void setReleaseDelay(std::chrono::nanoseconds d) { releaseDelayNs_.store(d.count(), std::memory_order_relaxed); }

    std::size_t numWorkers() const { return workerCount_.load(std::memory_order_relaxed); }
    //! How many threads can work on one loop: the workers plus the caller.
    std::size_t concurrency() const { return inlineMode() ? 1 : numWorkers() + 1; }

    //! Stops all workers (after their running task), keeps queued work, then
    //! starts `n` workers. Not callable from one of this pool's own tasks.
    void resize(std::size_t n)
    {
        if (currentWorker()) throw std::logic_error("RcppSpool: a pool cannot be resized from one of its own tasks");
        if (forked()) return;
        std::lock_guard<std::mutex> lk(resizeMutex_);
        stopWorkers();
        // Move what the old workers had queued to the injection queue.
        for (std::size_t i = 0; i < numWorkers(); ++i) {
            Task t;
            while (workers_[i]->deque.pop(t)) injection_.push(t);
        }
        start(n);
    }

    //! Drops every queued task (each counts as finished, cancelled). Running
    //! tasks are not affected.
    void dropQueued()
    {
        // Steals from outside the pool: no deque buffer is freed meanwhile
        // (see releaseIdleMemory()).
        std::lock_guard<std::mutex> draining(drainMutex_);
        Task t;
        Counters& n = counters(nullptr);
        auto drop = [&](Task& x) {
            n.started.fetch_add(1, std::memory_order_relaxed);
            x.discard();
            n.finished.fetch_add(1, std::memory_order_relaxed);
            finish(x.context());
        };
        while (injection_.takeOne(t)) drop(t);
        while (outside_.steal(t)) drop(t);
        // Worker deques can only be stolen from outside their owner; stealing
        // is safe from any thread.
        for (std::size_t i = 0; i < numWorkers(); ++i)
            while (workers_[i]->deque.steal(t)) drop(t);
    }

    //! A block of `bytes` for a small object that lives about as long as a
    //! task (a future's state): from the current worker's cache when it has
    //! one (see BlockCache), else from operator new. Free with freeBlock().
    static void* allocateBlock(std::size_t bytes)
    {
        if (Worker* w = workerTls().worker)
            if (void* p = w->blocks.take(bytes)) return p;
        return ::operator new(BlockCache::rounded(bytes));
    }
    //! Frees a block of allocateBlock(bytes), on any thread.
    static void freeBlock(void* p, std::size_t bytes) noexcept
    {
        if (Worker* w = workerTls().worker)
            if (w->blocks.give(p, bytes)) return;
        ::operator delete(p);
    }

    //! Tasks queued since the pool started (for tests and benchmarks).
    std::size_t tasksPushed() const
    {
        std::size_t p = 0;
        for (const auto& c : counters_) p += c.pushed.load(std::memory_order_relaxed);
        return p;
    }

    std::size_t tasksQueued() const
    {
        std::size_t p = 0, s = 0;
        for (const auto& c : counters_) {
            s += c.started.load(std::memory_order_relaxed);
            p += c.pushed.load(std::memory_order_relaxed);
        }
        return p > s ? p - s : 0;
    }
    std::size_t tasksRunning() const
    {
        std::size_t s = 0, f = 0;
        for (const auto& c : counters_) {
            f += c.finished.load(std::memory_order_relaxed);
            s += c.started.load(std::memory_order_relaxed);
        }
        return s > f ? s - f : 0;
    }

    Context& root() { return root_; }

    //! Whether a call that may run either way (async with both launch
    //! policies) made on this thread now is better run by its caller than
    //! queued: the thread is a worker of this pool that already has
    //! kLazyDepth tasks of its own queued, and no worker is hungry (none
    //! searches for work, sleeps for want of it, is on its way back from
    //! sleep, or waits for a result without finding work to help with). A
    //! hungry worker thus always gets the next spawn, so a recursion spreads
    //! while most of its calls stay plain calls. Without workers (or in a
    //! forked child) work runs on the caller anyway.
    //!
    //! `frame`: an address in the spawning function's stack frame. A call is
    //! kept on its caller only when it comes from deeper in the stack than
    //! the last call this worker queued: in a recursion the calls queued
    //! first (the big ones, near the root) stay where a thief finds them and
    //! the deeper ones become plain calls; but a loop that spawns many calls
    //! from one frame (the root of a tree with 100,000 children) queues them
    //! all, as their siblings are, instead of keeping all but the first two
    //! on its thread, out of thieves' reach (uts at a fine grain on 2
    //! threads: 0.37x sequential speed with every sibling kept, 1.05x with
    //! the siblings queued). Every call a worker queues here records its
    //! frame. Stacks of other shapes (coroutines) only make the choice worse,
    //! never wrong: either way the call runs once.
    [[gnu::always_inline]] bool prefersCallerRuns(const void* frame) const noexcept
    {
        // Called at every spawn: the common answer first, from the thread's
        // own state (the fork and worker-count checks cost as much again).
        Worker* w = currentWorker();
        if (w) {
            // Stacks grow down: deeper is a lower address.
            const auto at = reinterpret_cast<std::uintptr_t>(frame);
            if (w->deque.size() >= static_cast<std::int64_t>(kLazyDepth) &&
                hungry_.load(std::memory_order_relaxed) == 0 && at < w->lastQueuedFrame)
                return true;
            w->lastQueuedFrame = at;
        }
        return inlineMode();
    }

    //! Workers counted hungry now (see prefersCallerRuns(); for tests).
    int hungryWorkers() const noexcept { return hungry_.load(std::memory_order_relaxed); }
    //! Sessions asked of the lender and not yet over (a borrowing pool; for tests).
    int lentSlotsInUse() const noexcept { return inUse_.load(std::memory_order_relaxed); }
    //! True when this pool borrows its threads (see "lent workers").
    bool borrowsThreads() const noexcept { return lender_ != nullptr; }

    //! The current thread's index among the workers of the pool it serves
    //! (0 to numWorkers() - 1), or -1 on a thread that is no pool's worker.
    static std::ptrdiff_t currentWorkerIndex() noexcept
    {
        const Worker* w = workerTls().worker;
        return w ? static_cast<std::ptrdiff_t>(w->index) : -1;
    }

    //! True when this thread is one of this scheduler's workers.
    bool isOwnWorker() const { return currentWorker() != nullptr; }
    //! True on the host's service thread (R's main thread), which is never
    //! one of the pool's workers: a worker (a recursion's join) does not ask
    //! the host, which in R is a call of its hook.
    bool isServiceThread() const { return !isOwnWorker() && onServiceThread(); }

    //! A thread from outside the pool takes part in one of its loops (R's
    //! main thread in a blocking parallelFor, the body of a loop that calls
    //! another package's loop): while it does, a worker stands aside (takes
    //! no new task), so that no more threads compute than the pool has
    //! workers, as a thread that joins a TBB arena takes one of its slots.
    //! Which workers stand aside: the last ones by index, skipping workers
    //! lent to another pool's session (see standsAside()). Worker 0 stands
    //! aside only for a lent worker, so queued work always has a thread.
    //! Workers that stand aside sleep apart (aside_), so that a wake-up
    //! meant for work never goes to a thread that may not take it.
    void outsideJoins() { outsideParticipants_.fetch_add(1, std::memory_order_seq_cst); }
    //! The outside thread is done. The workers that stood aside for it stay
    //! asleep unless work is queued: waking them after every loop would put
    //! a thread more on the cores just as the caller goes on (on 2 cores that
    //! cost ~30 us at each end of a short loop). Work queued later wakes them
    //! (wakeWorker()).
    void outsideLeaves()
    {
        outsideParticipants_.fetch_sub(1, std::memory_order_seq_cst);
        fenceAfterChange();
        // A sleeper that lists itself after this load sees the count already
        // down and does not sleep; the deques are scanned only if one sleeps.
        if (aside_.sleepers() > 0 && hasVisibleWork()) aside_.notifyAll();
    }
    //! Runs `run(arg, 0)` (which does not throw: see LentRun), a session of
    //! a pool that borrows this one's workers (see SchedulerLender), marked
    //! as lent (see standsAside()) if the calling thread is one of this
    //! pool's workers and not already in a session.
    void runLentSession(LentRun run, void* arg)
    {
        Worker* w = currentWorker();
        if (!w || w->lent.load(std::memory_order_relaxed)) return run(arg, 0);
        w->lent.store(true, std::memory_order_seq_cst);
        run(arg, 0);
        w->lent.store(false, std::memory_order_seq_cst);
        // A worker that stood aside in its place may compute again.
        if (aside_.sleepers() > 0) aside_.notifyAll();
    }

    //! Work runs on the caller: no workers, or we are in a forked child.
    //! (Inline: on the path of every spawn and wait; g++ stops inlining it
    //! when the callers grow.)
    [[gnu::always_inline]] bool inlineMode() const { return numWorkers() == 0 || forked(); }
    [[gnu::always_inline]] bool forked() const
    {
        return forkCounter_->load(std::memory_order_relaxed) != generation_;
    }

    static void cpuRelax() noexcept
    {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield" ::: "memory");
#endif
    }

    //! How often the host's service thread is serviced while it waits or works.
    static constexpr std::chrono::milliseconds kServicePeriod{10};

private:
    struct Counters;

public:
    //! One worker thread, its deque and its steal order.
    struct Worker {
        WorkDeque deque;
        std::thread thread;
        std::size_t index = 0;
        std::uint64_t rng = 0;
        BlockCache blocks;  // touched by this worker's thread only
        bool advertised = false;  // in mayHaveWork_ (this worker's thread only)
        Counters* counters = nullptr;  // its task counts (see counters())
        std::uintptr_t lastQueuedFrame = 0;  // see prefersCallerRuns() (this worker's thread only)
        std::atomic<bool> occupied{false};  // a lent slot taken by a thread (see LentSlot)
        //! Serving a session of a pool that borrows this one's workers (see
        //! runLentSession()). Its own line: other workers read it while they
        //! search, and the deque's indexes above are written at every push.
        alignas(64) std::atomic<bool> lent{false};
    };
    //! Whose worker the current thread is (per-thread runtime state).
    struct WorkerTls {
        const Scheduler* scheduler = nullptr;
        Worker* worker = nullptr;
    };

private:

    //! The outside deque belongs to the first outside thread that submits (in
    //! R: the main thread) for as long as that thread lives; its pushes then
    //! need no lock. Other outside threads use the injection queue. A thread
    //! is identified by the address of a thread_local, which is unique among
    //! live threads.
    RCPPSPOOL_HIDDEN static const void* outsideToken() noexcept
    {
        static thread_local const char* const token = runtime::threadState<char, runtime::ThreadSlot::outsideToken>();
        return token;
    }
    bool ownsOutsideDeque()
    {
        const void* me = outsideToken();
        const void* owner = outsideOwner_.load(std::memory_order_relaxed);
        if (owner == me) return true;
        if (owner != nullptr) return false;
        return outsideOwner_.compare_exchange_strong(owner, me, std::memory_order_acq_rel) ||
               owner == me;
    }
    bool isOutsideOwner() const noexcept { return outsideOwner_.load(std::memory_order_relaxed) == outsideToken(); }

    //! One sleep of waitUntil(): until `key` completes, `slice` passes, or,
    //! on a worker, new work arrives (the worker also sleeps among the idle
    //! workers, so that a push wakes it), or, on the host's service thread,
    //! a service request (requestService()). A worker woken for work that
    //! finds its wait over passes the wake-up on.
    template <class Done>
    void sleepUntilDone(const void* key, Done& done, bool worker, std::chrono::nanoseconds slice)
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

    // ---- lent workers ---------------------------------------------------------
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
    // hungry workers (see prefersCallerRuns()): a spawn is queued for a
    // thread that may come. outstanding_ counts the sessions and helpers
    // that may still touch this scheduler: stopWorkers() waits for them.

    //! A slot taken by the current thread for as long as this lives.
    class LentSlot {
    public:
        //! A helper (if `want`): takes a free slot, if there is one.
        LentSlot(Scheduler& s, bool want) : s_(s)
        {
            if (want) help();  // (out of line: waits are hot, and seldom borrow)
        }
        //! A session the lender runs (counted by lendWorker()).
        struct Session {};
        LentSlot(Scheduler& s, Session) : s_(s) { take(); }
        ~LentSlot()
        {
            if (w_) leave();
        }
        LentSlot(const LentSlot&) = delete;
        LentSlot& operator=(const LentSlot&) = delete;

        //! True if a slot was taken: its mark in hungry_ passes to its thread.
        explicit operator bool() const noexcept { return w_ != nullptr; }
        Worker* worker() const noexcept { return w_; }

    private:
        [[gnu::noinline]] void help()
        {
            if (!s_.enterOutstanding()) return;
            take();
            if (!w_) s_.leaveOutstanding();
            helper_ = w_ != nullptr;
        }
        [[gnu::noinline]] void leave()
        {
            workerTls() = outer_;
            s_.hungry_.fetch_add(1, std::memory_order_relaxed);  // vacant again
            w_->occupied.store(false, std::memory_order_release);
            if (!helper_) return;  // lentSession() does the rest
            // What the helper queued and did not run (fire-and-forget
            // tasks of the tasks it ran) needs a thread.
            if (s_.hasVisibleWork()) s_.wakeWorker();
            s_.leaveOutstanding();  // the last touch of the scheduler
        }
        void take()
        {
            for (std::size_t i = 0; i < s_.numWorkers(); ++i) {
                Worker* w = s_.workers_[i].get();
                if (!w->occupied.load(std::memory_order_relaxed) &&
                    !w->occupied.exchange(true, std::memory_order_acquire)) {
                    w_ = w;
                    outer_ = workerTls();
                    workerTls() = WorkerTls{&s_, w_};
                    return;
                }
            }
        }
        Scheduler& s_;
        Worker* w_ = nullptr;
        bool helper_ = false;
        WorkerTls outer_{};
    };

    //! How many sessions the pool may have: one per worker, less one per
    //! thread from outside in one of its loops (see outsideJoins()).
    int sessionsAllowed() const { return static_cast<int>(numWorkers() - standingAside()); }
    //! May this pool ask for one more session now?
    bool mayBorrow() const
    {
        return !stopping_.load(std::memory_order_relaxed) && inUse_.load(std::memory_order_seq_cst) < sessionsAllowed();
    }
    //! Does it have more than it may (a thread from outside joined a loop)?
    bool borrowsTooMany() const { return inUse_.load(std::memory_order_relaxed) > sessionsAllowed(); }

    //! Counts the calling thread (or the session it asks for) among those
    //! that may touch this scheduler, unless it is stopping. After the count:
    //! either stopWorkers() sees it, or we see the stop.
    bool enterOutstanding()
    {
        outstanding_.fetch_add(1, std::memory_order_seq_cst);
        if (!stopping_.load(std::memory_order_seq_cst)) return true;
        leaveOutstanding();
        return false;
    }
    void leaveOutstanding() { outstanding_.fetch_sub(1, std::memory_order_seq_cst); }

    //! Asks the lender for a session, if this pool may have one more.
    bool lendWorker()
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
    //! A session, on a thread of the lender (a LentRun).
    static void lentSession(void* self, int dropped) noexcept
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
        if (serve && !s->stopping_.load(std::memory_order_seq_cst) && s->hasVisibleWork()) s->wakeWorker();
        s->leaveOutstanding();  // the last touch of *s
    }

    // ---- giving back the memory of a burst --------------------------------------
    // Queues grow with a burst of tasks. At an idle moment, a deque found
    // empty goes back to its small reserve buffer and retires the large one:
    // a worker's deque when its worker goes to sleep, the outside deque when
    // its owner's wait ends (trimOutside()). A retired buffer is not freed at
    // once: a thief may still read it, and the next burst reuses it. Once a
    // retired buffer has not been reused for kReleaseDelay, the last worker
    // to fall asleep frees it, and the injection queue's large buffer if that
    // has been empty as long (releaseIdleMemory()). None of it is on the path
    // of a push, pop or steal.

    //! What releaseIdleMemory() took, freed by its caller outside the locks.
    struct Garbage {
        WorkDeque::Retired buffers;
        InjectionQueue::Ring ring;
    };

    //! Called by a worker about to sleep, under idle_'s lock, with `asleep`
    //! the number of workers asleep, itself included. Returns how long it
    //! may sleep: without limit unless it is the last to sleep and some
    //! memory waits to be freed. Then it takes into `g` what has waited for
    //! kReleaseDelay (and returns zero: free it, then sleep again), or
    //! returns how long until the next is due.
    //!
    //! Why retired deque buffers may be freed then: the thieves are the
    //! workers and dropQueued(). Every worker is asleep, so none is inside a
    //! steal; one that wakes takes idle_'s lock after us, so it sees each
    //! deque's buffer as it was when we took the retired ones (a buffer we
    //! take is not in use). dropQueued() holds drainMutex_: if it runs, we
    //! take nothing (and look again soon); if it starts later, it sees the
    //! buffers in use as well.
    std::chrono::nanoseconds releaseIdleMemory(Garbage& g, int asleep)
    {
        const auto forever = std::chrono::nanoseconds::max();
        const std::size_t n = numWorkers();
        if (asleep < 0 || static_cast<std::size_t>(asleep) != n) return forever;
        std::unique_lock<std::mutex> noDrain(drainMutex_, std::try_to_lock);
        if (!noDrain) return std::chrono::milliseconds(10);
        const auto delay = releaseDelay();
        const auto now = std::chrono::steady_clock::now();
        const auto cutoff = now - delay;
        auto pending = std::chrono::steady_clock::time_point::max();
        bool took = injection_.releaseIdle(g.ring, cutoff, pending);
        took = outside_.takeRetired(g.buffers, cutoff, pending) || took;
        for (std::size_t i = 0; i < n; ++i) took = workers_[i]->deque.takeRetired(g.buffers, cutoff, pending) || took;
        if (took) return std::chrono::nanoseconds::zero();
        if (pending == std::chrono::steady_clock::time_point::max()) return forever;
        return std::chrono::duration_cast<std::chrono::nanoseconds>(pending + delay - now) +
               std::chrono::milliseconds(1);
    }

    //! A wait of a thread outside the pool ended. If the thread owns the
    //! outside deque and a burst left that large and now empty, back to its
    //! reserve; a sleeping worker is woken to time the release of the old
    //! buffer (it will be the last to sleep). Not in a forked child: its
    //! locks may have been held by threads that it does not have.
    void trimOutside()
    {
        if (!isOutsideOwner() || forked() || !outside_.shrink()) return;
        idle_.notifyOne();
    }

    // Inline: read at every spawn (see prefersCallerRuns()).
    [[gnu::always_inline]] RCPPSPOOL_HIDDEN static WorkerTls& workerTls() noexcept
    {
        static thread_local WorkerTls* const tls = runtime::threadState<WorkerTls, runtime::ThreadSlot::worker>();
        return *tls;
    }
    [[gnu::always_inline]] Worker* currentWorker() const noexcept
    {
        auto& tls = workerTls();
        return tls.scheduler == this ? tls.worker : nullptr;
    }

    void start(std::size_t n)
    {
        stopping_.store(false, std::memory_order_seq_cst);
        mayHaveWork_.reset(n);
        workers_.reset(new std::unique_ptr<Worker>[n]);
        workerCount_.store(n, std::memory_order_seq_cst);
        // A worker is hungry from the start: until its thread runs (which
        // can take milliseconds on a busy machine) a spawn must not be
        // deferred for want of a hungry worker (its HungerMark adopts this).
        hungry_.fetch_add(static_cast<int>(n), std::memory_order_relaxed);
        for (std::size_t i = 0; i < n; ++i) {
            workers_[i].reset(new Worker);
            workers_[i]->index = i;
            workers_[i]->rng = 0x9E3779B97F4A7C15ull * (i + 1);
            workers_[i]->counters = &counters_[1 + i % (kCounterSlots - 1)];
        }
        if (lender_) return;  // its threads come when work does (lendWorker())
        AsyncSignalsBlocked inherited;  // by the workers: the process's signals go to R's threads
        for (std::size_t i = 0; i < n; ++i) {
            try {
                workers_[i]->thread = std::thread([this, i] { workerLoop(*workers_[i]); });
            } catch (...) {
                hungry_.fetch_sub(static_cast<int>(n - i), std::memory_order_relaxed);  // never ran
                throw;
            }
        }
    }

    void stopWorkers()
    {
        stopping_.store(true, std::memory_order_seq_cst);
        idle_.notifyAll();
        aside_.notifyAll();
        if (lender_) {
            // Sessions leave at once when stopping; sessions the lender has
            // not run yet are run (and leave) or dropped by it. Nothing may
            // touch the workers once this returns.
            while (outstanding_.load(std::memory_order_seq_cst) != 0) {
                idle_.notifyAll();
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            // Every slot is vacant again and holds the mark of a hungry worker.
            hungry_.fetch_sub(static_cast<int>(numWorkers()), std::memory_order_relaxed);
            return;
        }
        for (std::size_t i = 0; i < numWorkers(); ++i)
            if (workers_[i]->thread.joinable()) workers_[i]->thread.join();
    }

    //! Is work queued that a worker could take? The last look of a thread
    //! before it sleeps (after it listed itself as a sleeper): it looks into
    //! the deques of the workers in mayHaveWork_ only, not into every one.
    //! A worker that pushes inserts itself there after the push and before
    //! it looks for sleepers (pushOwn(), then submit()), both sequentially
    //! consistent, as is the load here: either this look sees the insert, and
    //! the deque, or the pusher sees the sleeper and wakes it.
    bool hasVisibleWork() const
    {
        if (paused_.load(std::memory_order_seq_cst)) return false;
        if (injection_.size() > 0 || !outside_.empty()) return true;
        const std::size_t n = numWorkers();
        return mayHaveWork_.forEach(
            0, [&](std::size_t v) { return v < n && !workers_[v]->deque.empty(); }, std::memory_order_seq_cst);
    }

    //! Pushes onto worker `w`'s own deque (called on `w`'s thread).
    [[gnu::always_inline]] void pushOwn(Worker& w, const Task& t)
    {
        w.deque.push(t);
        advertise(w);
    }
    //! `w` may have queued work: puts it in mayHaveWork_ (after the push:
    //! see hasVisibleWork()). Once per busy spell, not per push.
    void advertise(Worker& w)
    {
        if (w.advertised) return;
        w.advertised = true;
        mayHaveWork_.insert(w.index);
    }
    //! `w` found no work and its deque is empty: out of mayHaveWork_ until
    //! it pushes again. Only `w` pushes onto its deque, so nothing is
    //! missed: the deque stays empty until `w` pushes, and then inserts.
    void unadvertise(Worker& w)
    {
        if (!w.advertised || !w.deque.empty()) return;
        w.advertised = false;
        mayHaveWork_.erase(w.index);
    }

    //! A task for worker `w`, unless the pool is paused. A worker may pass
    //! the pause check just before pause() and then take a task pushed after
    //! it; the second check (seq_cst, after taking) catches that, and the task
    //! goes back to the worker's own deque.
    bool findWork(Worker& w, Task& out) { return takeWork(w, out) && keepUnlessPaused(w, out); }
    //! joinOwn() on the calling thread's worker `w` of this pool.
    template <class Done, class IsMine>
    [[gnu::always_inline]] OwnJoin joinOwnOn(Worker& w, Done&& done, IsMine&& isMine, Task& mine)
    {
        for (;;) {
            if (done()) return OwnJoin::done;
            if (!findOwnWork(w, mine)) return OwnJoin::wait;
            if (isMine(static_cast<const Task&>(mine))) return OwnJoin::mine;
            execute(mine, &w);
        }
    }
    //! findWork() in `w`'s own deque only (inline: every join starts so).
    [[gnu::always_inline]] bool findOwnWork(Worker& w, Task& out)
    {
        return !paused_.load(std::memory_order_relaxed) && w.deque.pop(out) && keepUnlessPaused(w, out);
    }
    //! The second pause check of findWork(): false (and `t` back on `w`'s
    //! deque) if the pool was paused meanwhile.
    [[gnu::always_inline]] bool keepUnlessPaused(Worker& w, const Task& t)
    {
        if (!paused_.load(std::memory_order_seq_cst)) return true;
        pushOwn(w, t);
        return false;
    }

    //! Own deque first (newest, cache-warm), then outside submissions, then
    //! the oldest task of a victim taken at random among the workers that
    //! may have queued work (mayHaveWork_).
    bool takeWork(Worker& w, Task& out)
    {
        if (paused_.load(std::memory_order_relaxed)) return false;
        if (w.deque.pop(out)) return true;
        if (outside_.steal(out)) return true;
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

    //! How many workers give their place to threads from outside (see
    //! outsideJoins()): one per outside participant, never all of them.
    std::size_t standingAside() const
    {
        const std::size_t out = static_cast<std::size_t>(outsideParticipants_.load(std::memory_order_seq_cst));
        const std::size_t n = numWorkers();
        return std::min(out, n > 0 ? n - 1 : 0);
    }
    //! Worker `w` is one of them: the last standingAside() workers by
    //! index that are not lent (a borrowing pool has no such workers: it
    //! borrows fewer threads instead).
    //!
    //! A lent worker serves another pool's session, whose bodies may call
    //! this pool's loops as one of its workers: it computes, and cannot
    //! stand aside. Without the skip, when the session went to the last
    //! worker, the worker standing aside was the busy one, and the others
    //! computed on: three threads on two workers (test-runtime.R caught it
    //! now and then). The choice stays fixed otherwise: letting whichever
    //! worker looked first stand aside (tried) made the two swap roles
    //! between loops, and Linux then often left the working one runnable on
    //! the caller's core while the other core idled: 73-251 of 1,000
    //! back-to-back 1e6-iteration loops ran without a worker, 0 with the
    //! fixed choice.
    bool standsAside(const Worker& w) const
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
    //! A worker checks again after taking a task, as findWork() checks for a
    //! pause: it may pass the check just before an outside thread joins a
    //! loop, then take that loop's ticket (queued after the join). False
    //! (and `t` back on `w`'s deque) if it must stand aside instead.
    [[gnu::always_inline]] bool keepUnlessAside(Worker& w, const Task& t)
    {
        if (!standsAside(w)) return true;
        pushOwn(w, t);
        return false;
    }

    //! Wakes an idle worker for new work, or, if none sleeps, a worker that
    //! went to sleep standing aside and no longer has to (see outsideLeaves()).
    [[gnu::always_inline]] void wakeWorker()
    {
        // Nobody asleep (the common case in a busy pool, checked at every
        // push): nothing to do, and no call.
        if (idle_.sleepers() == 0 && aside_.sleepers() == 0 && !(lender_ && mayBorrow())) return;
        wakeSleeper();
    }
    [[gnu::noinline]] void wakeSleeper()
    {
        if (idle_.notifyOne()) return;
        if (lender_ && lendWorker()) return;
        // More sleep aside than stand aside now: wake them all; those still
        // aside go back to sleep (passing wake-ups on to idle_ only).
        if (static_cast<std::size_t>(aside_.sleepers()) > standingAside()) aside_.notifyAll();
    }

    //! Serves as worker `w` until the pool stops, or, on a lent thread, until
    //! it finds no work (or the pool borrows more threads than it may).
    void workerLoop(Worker& w)
    {
        const WorkerTls outer = workerTls();  // a lent thread may be a worker of its lender's
        workerTls() = WorkerTls{this, &w};
        Task t;
        bool woke = false;  // back from sleep: see below
        // Counted in hungry_ from its start (see start()) and from the moment
        // it finds no work until it finds some (searching, asleep, or woken
        // and on its way), but not while it stands aside: see
        // prefersCallerRuns().
        HungerMark hunger{hungry_, true};
        while (!stopping_.load(std::memory_order_relaxed)) {
            if (lender_ && borrowsTooMany()) break;
            if (standsAside(w)) {
                hunger.set(false);
                // We may have been woken for work we may not take now: pass
                // the wake-up on to a worker that may.
                if (hasVisibleWork()) wakeWorker();
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
        workerTls() = outer;
    }

    //! One thread's mark in hungry_ (see prefersCallerRuns()): counted once
    //! while set, and taken out on every way out.
    struct HungerMark {
        std::atomic<int>& count;
        bool on = false;  //!< true: adopts a mark already counted
        void set(bool now)
        {
            if (now == on) return;
            on = now;
            count.fetch_add(now ? 1 : -1, std::memory_order_relaxed);
        }
        ~HungerMark() { set(false); }
    };

    static constexpr std::chrono::microseconds kIdleSpin{50};
    //! The longest a worker sleeps standing aside before it looks again.
    static constexpr std::chrono::milliseconds kAsideSleep{10};
    static constexpr int kWaitSpins = 1 << 10;
    static constexpr int kHungrySpins = 64;
    static constexpr int kWaitYields = 64;
    static constexpr std::size_t kInjectionBatch = 32;
    // Tried 2, 8 and 32 on the fine-grained suite (bench_tasks --grain fine):
    // 2 was best (geometric-mean speedups 0.47, 0.44, 0.31).
    static constexpr std::size_t kLazyDepth = 2;
    static constexpr std::chrono::milliseconds kParkSlice{20};
    //! How long the pool must be idle before a burst's memory is freed:
    //! bursts that come closer than this reuse it. Regrowing the buffers of a
    //! burst of 1e6 tasks costs at most some tens of ms of page faults, small
    //! against an idle time of half a second.
    static constexpr std::chrono::milliseconds kReleaseDelay{500};
    std::atomic<std::int64_t> releaseDelayNs_{std::chrono::nanoseconds(kReleaseDelay).count()};

    Context root_;
    const unsigned generation_;
    // currentForkGeneration()'s counter, found once (the function's static
    // guard cost ~20 instructions per spawn once g++ stopped inlining it).
    std::atomic<unsigned>* const forkCounter_;
    const ThreadLender* const lender_;    // see "lent workers"
    std::atomic<int> inUse_{0};          // sessions asked for and not yet over (see "lent workers")
    std::atomic<int> outstanding_{0};    // sessions and helpers that may still touch this (see enterOutstanding())
    std::unique_ptr<std::unique_ptr<Worker>[]> workers_;
    std::atomic<std::size_t> workerCount_{0};
    InjectionQueue injection_;
    WorkerSet mayHaveWork_;  // workers that pushed since they last went idle (see hasVisibleWork())
    WorkDeque outside_;                        // see ownsOutsideDeque()
    std::atomic<const void*> outsideOwner_{nullptr};
    std::mutex drainMutex_;                    // held by dropQueued() (see releaseIdleMemory())
    Parking idle_;  // workers without work (and workers waiting while helping)
    Parking aside_; // workers standing aside for an outside participant (see outsideJoins())
    WaitTable waiters_;  // threads waiting for something to finish (see waitUntil())
    std::atomic<bool> stopping_{false};
    alignas(64) std::atomic<int> searching_{0};  // workers spinning for work (see workerLoop)
    std::atomic<int> hungry_{0};  // workers without work (see workerLoop, waitUntil)
    std::atomic<bool> paused_{false};
    std::atomic<int> outsideParticipants_{0};  // see outsideJoins()
    std::mutex resizeMutex_;
    // Task counts, one set per worker (and one for outside threads), so that
    // counting does not make every task touch a shared cache line.
    struct alignas(64) Counters {
        std::atomic<std::size_t> pushed{0}, started{0}, finished{0};
    };
    static constexpr std::size_t kCounterSlots = 64;
    //! Where `w` counts: slot 1 + index % 63, chosen once in start() (a
    //! division at every count cost about 15% of a spawn); outside threads
    //! count in slot 0.
    Counters& counters(Worker* w) { return w ? *w->counters : counters_[0]; }
    //! A worker with a slot of its own counts with a plain store; shared slots
    //! (outside threads, workers beyond the slots) need an atomic increment.
    static void bump(std::atomic<std::size_t>& c, Worker* w)
    {
        if (w && w->index < kCounterSlots - 1)
            c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        else
            c.fetch_add(1, std::memory_order_relaxed);
    }
    Counters counters_[kCounterSlots];
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
