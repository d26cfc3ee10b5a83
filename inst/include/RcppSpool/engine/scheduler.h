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
#include "frame.h"
#include "host_hooks.h"
#include "injection_queue.h"
#include "parking.h"
#include "signal_mask.h"
#include "task.h"
#include "thread_lender.h"
#include "work_deque.h"
#include "worker_set.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

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
    ~Scheduler();

    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // ---- submitting (scheduler_submit.h) -------------------------------------

    //! The context new work submitted from this thread counts in: the running
    //! task's children if called from a task of this scheduler, else the root.
    Context* contextForNewWork();

    //! The context a task with its own result (pushReturn, async) counts in:
    //! from outside the pool the root (wait() waits for it); from inside a
    //! task none: its Future is what waits for it, and counting it would cost
    //! the running task a context of its own (a heap allocation per recursion
    //! of recursive async). Such a task checks for interrupts itself.
    Context* contextForResultTask();

    //! Queues a task (already counted in its context, if any). Runs it at once
    //! when the pool has no workers or lives in a forked child, or when its
    //! queue cannot grow (no memory). Never throws.
    void submit(const Task& t) noexcept;
    //! submit() of a client's task with its own result (pushReturn, async),
    //! counted as contextForResultTask() says: the calling thread's record
    //! read once for its frame and its worker (see ThreadRecord).
    //! Inline: the runtime's entry (ApiTable::futureSubmit) is then the one
    //! call of a spawn, through the table in R.
    [[gnu::always_inline]] void submitResult(table::TaskUnit& u) noexcept;

    //! Takes back from the top of the calling thread's own queue the tasks
    //! that `unneeded(task)` names (a loop's tickets once the loop has no
    //! chunk left) and discards them, up to the first task it keeps. Left
    //! queued, they would only wake a sleeper for nothing. A thread that
    //! queues through the injection queue owns no queue and takes nothing back.
    template <class Unneeded>
    void withdraw(Unneeded&& unneeded);

    // ---- waiting (scheduler_wait.h) -------------------------------------------

    //! Waits until `done()`, which becomes true when `key` (the address of
    //! what is waited for: a Context, a loop, a future's state) is completed
    //! with notifyCompletion(key). On a worker of this pool it runs other
    //! tasks meanwhile; on the host's service thread it services the host
    //! (which may raise an interrupt: a `done` that should end early on
    //! interrupts checks interruptRequested() itself). Returns false if
    //! `deadline` passed first.
    template <class Done>
    bool waitUntil(const void* key, Done&& done,
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
    //! waitUntilOn() until `done()` or, on the service thread, the user's
    //! interrupt (which only the service thread's waits see first).
    template <class Done>
    bool waitUntilDoneOrInterrupted(bool service, const void* key, Done&& done,
                                    std::chrono::steady_clock::time_point deadline =
                                        std::chrono::steady_clock::time_point::max());
    //! waitUntil() for a caller that already knows whether it runs on the
    //! host's service thread (`service`: onServiceThread()), which costs a
    //! call of the host's hook in R.
    template <class Done>
    bool waitUntilOn(bool service, const void* key, Done&& done,
                     std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

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
    //! `self`, if given, receives the calling thread's worker of this pool
    //! (null with OwnJoin::wait: not a worker). With kWhole false, `mine`
    //! holds only what `isMine` needs (its head: TaskSlot::loadHead()), for
    //! a caller that does not run it (its record is copied no further).
    //! `slot`, with kWhole false: where the task sought was, if it was on
    //! top (read no further; see WorkDeque::popHead()), else null.
    template <bool kWhole = true, class Done, class IsMine>
    [[gnu::always_inline]] OwnJoin joinOwn(Done&& done, IsMine&& isMine, Task& mine, Worker** self = nullptr,
                                           const TaskSlot** slot = nullptr);
    //! Runs a task joinOwn() took, on the calling worker: execute()'s body
    //! inlined into the caller (the runtime's join of a Future), one frame
    //! less in every level of a recursion that joins so (fib with one
    //! async() a call: ~7% of its time, 2 workers, ab-bench).
    [[gnu::always_inline]] void executeOwn(Task& t) { run(t, currentWorker()); }
    //! Runs a result task that joinOwn() took for its getter (work-first: a
    //! spawn nobody stole, taken back by its owner), as a plain call of the
    //! getter: no frame of its own (what it pushes counts where the
    //! getter's own work does, as for a deferred call), counted once, as
    //! taken back. A task counted in a context (pushed from outside the pool,
    //! then taken by this worker in a batch) runs as executeOwn() runs it.
    //! An error its op reports is dropped (a result task keeps its own).
    //! `self`: the calling worker, as joinOwn() gave it.
    [[gnu::always_inline]] void runTakenBack(Task& t, Worker* self) noexcept;
    //! Counts a task without a context that joinOwn() took and its getter
    //! runs itself (as runTakenBack() counts it).
    [[gnu::always_inline]] void noteTakenBack(Worker* self) noexcept { bump(counters(self).takenBack, self); }

    //! The context a blocking call made from the current thread belongs to
    //! (for cancellation), or null outside any task.
    static Context* enclosingContext() noexcept;

    //! `key` was completed (a Context, a loop, a future's state; its state
    //! changed just before): wakes the threads waiting for it in waitUntil(),
    //! nobody else.
    void notifyCompletion(const void* key);

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
    //! Workers asleep for want of work now (tests).
    int workersAsleep() const { return idle_.sleepers(); }
    //! Workers whose deques a look for work inspects now: those that pushed
    //! since they last went idle (tests; see hasVisibleWork()).
    std::size_t workersThatMayHaveWork() const { return mayHaveWork_.size(); }

    // ---- running tasks (scheduler_execute.h) ----------------------------------

    //! One piece of work counted in `c` has finished: cascade through owned
    //! contexts (a task's children) and wake waiters when something is done.
    void finish(Context* c);

    //! Runs one task on the current thread, with its bookkeeping. `t` is the
    //! caller's own copy (a task taken from a queue), run in place (why:
    //! see the definition).
    //! `self`: the calling thread's worker of this pool (currentWorker(),
    //! which the callers know), or null.
    void execute(Task& t, Worker* const self);
    //! execute()'s body, for the callers that inline it.
    [[gnu::always_inline]] void run(Task& t, Worker* const self);
    //! Runs a task as run() does, as a span of the timeline being recorded (trace.h).
    static void runRecorded(Task& t, Context* c, Worker* self) noexcept;

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
    void runWithin(Context* context, Context* counted, Body&& body) noexcept;

    // ---- control (scheduler_control.h) ----------------------------------------

    void pause() { paused_.store(true, std::memory_order_seq_cst); }
    void unpause();
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
    void resize(std::size_t n);

    //! Drops every queued task (each counts as finished, cancelled). Running
    //! tasks are not affected.
    void dropQueued();

    //! A block of `bytes` for a small object that lives about as long as a
    //! task (a future's state): from the current worker's cache when it has
    //! one (see BlockCache), else from operator new. Free with freeBlock().
    static void* allocateBlock(std::size_t bytes);
    //! Frees a block of allocateBlock(bytes), on any thread.
    static void freeBlock(void* p, std::size_t bytes) noexcept;

    //! Tasks queued since the pool started (for tests and benchmarks).
    std::size_t tasksPushed() const;

    std::size_t tasksQueued() const;
    std::size_t tasksRunning() const;

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
    //! the last call this worker queued (why: see the definition).
    //!
    //! Returns why (table::CallerRuns): 1 by the rule above on a worker, 2
    //! where every task runs on its caller, 0 to queue the call.
    [[gnu::always_inline]] int callerRuns(const void* frame) const noexcept;

    //! Workers counted hungry now (see callerRuns(); for tests).
    int hungryWorkers() const noexcept { return hungry_.load(std::memory_order_relaxed); }
    //! Sessions asked of the lender and not yet over (a borrowing pool; for tests).
    int lentSlotsInUse() const noexcept { return inUse_.load(std::memory_order_relaxed); }
    //! True when this pool borrows its threads (see "lent workers").
    bool borrowsThreads() const noexcept { return lender_ != nullptr; }

    //! The current thread's index among the workers of the pool it serves
    //! (0 to numWorkers() - 1), or -1 on a thread that is no pool's worker.
    static std::ptrdiff_t currentWorkerIndex() noexcept;

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
    void outsideLeaves();
    //! Runs `run(arg, 0)` (which does not throw: see LentRun), a session of
    //! a pool that borrows this one's workers (see SchedulerLender), marked
    //! as lent (see standsAside()) if the calling thread is one of this
    //! pool's workers and not already in a session.
    void runLentSession(LentRun run, void* arg);
    //! The label of a lent session's task span in a timeline.
    static constexpr const char* kLentSessionLabel = "older client's tasks";

    //! Work runs on the caller: no workers, or we are in a forked child.
    //! (Inline: on the path of every spawn and wait; g++ stops inlining it
    //! when the callers grow.)
    [[gnu::always_inline]] bool inlineMode() const { return numWorkers() == 0 || forked(); }
    [[gnu::always_inline]] bool forked() const
    {
        return forkCounter_->load(std::memory_order_relaxed) != generation_;
    }

    //! A spin-wait hint to the CPU (x86's pause, ARM's yield).
    static void cpuRelax() noexcept;

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
        std::uintptr_t lastQueuedFrame = 0;  // see callerRuns() (this worker's thread only)
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
    bool ownsOutsideDeque();
    bool isOutsideOwner() const noexcept { return outsideOwner_.load(std::memory_order_relaxed) == outsideToken(); }

    //! One sleep of waitUntil(): until `key` completes, `slice` passes, or,
    //! on a worker, new work arrives (the worker also sleeps among the idle
    //! workers, so that a push wakes it), or, on the host's service thread,
    //! a service request (requestService()). A worker woken for work that
    //! finds its wait over passes the wake-up on.
    template <class Done>
    void sleepUntilDone(const void* key, Done& done, bool worker, std::chrono::nanoseconds slice);

    // ---- lent workers (scheduler_lending.h, which says what they are) ---------

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
            setWorkerTls(outer_);
            s_.hungry_.fetch_add(1, std::memory_order_relaxed);  // vacant again
            w_->occupied.store(false, std::memory_order_release);
            if (!helper_) return;  // lentSession() does the rest
            // What the helper queued and did not run (fire-and-forget
            // tasks of the tasks it ran) needs a thread.
            if (s_.hasVisibleWork()) s_.wakeWorker(Waker::leaves);
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
                    setWorkerTls(WorkerTls{&s_, w_});
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
    bool enterOutstanding();
    void leaveOutstanding() { outstanding_.fetch_sub(1, std::memory_order_seq_cst); }

    //! Asks the lender for a session, if this pool may have one more.
    bool lendWorker();
    //! A session, on a thread of the lender (a LentRun).
    static void lentSession(void* self, int dropped) noexcept;

    // ---- giving back the memory of a burst (scheduler_memory.h) ---------------

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
    //! returns how long until the next is due (why that is safe: see the
    //! definition).
    std::chrono::nanoseconds releaseIdleMemory(Garbage& g, int asleep);

    //! A wait of a thread outside the pool ended. If the thread owns the
    //! outside deque and a burst left that large and now empty, back to its
    //! reserve; a sleeping worker is woken to time the release of the old
    //! buffer (it will be the last to sleep). Not in a forked child: its
    //! locks may have been held by threads that it does not have.
    void trimOutside();

    // Inline: read at every spawn (see callerRuns()); the slot
    // itself, one thread-local access (see currentFrame()).
    [[gnu::always_inline]] RCPPSPOOL_HIDDEN static WorkerTls workerTls() noexcept
    {
        const ThreadRecord& r = threadRecord();
        return {r.scheduler, static_cast<Worker*>(r.worker)};
    }
    //! Makes the calling thread `tls.worker` of `tls.scheduler` (or no worker); its frame stays.
    RCPPSPOOL_HIDDEN static void setWorkerTls(const WorkerTls& tls) noexcept
    {
        ThreadRecord& r = threadRecord();
        r.scheduler = tls.scheduler;
        r.worker = tls.worker;
    }
    [[gnu::always_inline]] Worker* currentWorker() const noexcept { return workerIn(threadRecord()); }
    //! currentWorker() from the calling thread's record `r` (read once by a
    //! caller that also needs its frame).
    [[gnu::always_inline]] Worker* workerIn(const ThreadRecord& r) const noexcept
    {
        return r.scheduler == this ? static_cast<Worker*>(r.worker) : nullptr;
    }

    //! Starts `n` workers: threads, or, with a lender, slots for its threads.
    void start(std::size_t n);
    //! Stops the workers after their running task (with a lender: waits until
    //! no session or helper can touch this any more).
    void stopWorkers();

    // ---- finding work, standing aside, the worker loop (scheduler_workers.h) --

    //! Is work queued that a worker could take? The last look of a thread
    //! before it sleeps (after it listed itself as a sleeper): it looks into
    //! the deques of the workers in mayHaveWork_ only, not into every one.
    //! A worker that pushes inserts itself there after the push and before
    //! it looks for sleepers (pushOwn(), then submit()), both sequentially
    //! consistent, as is the load here: either this look sees the insert, and
    //! the deque, or the pusher sees the sleeper and wakes it.
    bool hasVisibleWork() const;

    //! submit() on the calling thread, whose worker of this pool is `w`
    //! (null: none). Inline in both (one out-of-line copy, shared by g++
    //! between the runtime's two submit paths, looked the thread's record
    //! up again: 11 instructions a spawn in an R client).
    [[gnu::always_inline]] void submitFrom(Worker* w, const Task& t) noexcept;
    //! Pushes onto worker `w`'s own deque (called on `w`'s thread).
    [[gnu::always_inline]] void pushOwn(Worker& w, const Task& t);
    //! `w` may have queued work: puts it in mayHaveWork_ (after the push:
    //! see hasVisibleWork()). Once per busy spell, not per push.
    void advertise(Worker& w);
    //! `w` found no work and its deque is empty: out of mayHaveWork_ until
    //! it pushes again. Only `w` pushes onto its deque, so nothing is
    //! missed: the deque stays empty until `w` pushes, and then inserts.
    void unadvertise(Worker& w);

    //! A task for worker `w`, unless the pool is paused. A worker may pass
    //! the pause check just before pause() and then take a task pushed after
    //! it; the second check (seq_cst, after taking) catches that, and the task
    //! goes back to the worker's own deque.
    bool findWork(Worker& w, Task& out) { return takeWork(w, out) && keepUnlessPaused(w, out); }
    //! joinOwn() on the calling thread's worker `w` of this pool.
    template <bool kWhole = true, class Done, class IsMine>
    [[gnu::always_inline]] OwnJoin joinOwnOn(Worker& w, Done&& done, IsMine&& isMine, Task& mine,
                                             const TaskSlot** slot = nullptr);
    //! joinOwnOn<false>() past a task whose head it took (at `at`) that it
    //! cannot return as it is: the rest read, then as joinOwnOn<true>().
    template <class Done, class IsMine>
    OwnJoin joinOwnPastHead(Worker& w, Done& done, IsMine& isMine, Task& t, const TaskSlot& at);
    //! findWork() in `w`'s own deque only (inline: every join starts so).
    [[gnu::always_inline]] bool findOwnWork(Worker& w, Task& out)
    {
        return !paused_.load(std::memory_order_relaxed) && w.deque.pop(out) && keepUnlessPaused(w, out);
    }
    //! The second pause check of findWork(): false (and `t` back on `w`'s
    //! deque) if the pool was paused meanwhile.
    [[gnu::always_inline]] bool keepUnlessPaused(Worker& w, const Task& t);

    //! Own deque first (newest, cache-warm), then outside submissions, then
    //! the oldest task of a victim taken at random among the workers that
    //! may have queued work (mayHaveWork_).
    bool takeWork(Worker& w, Task& out);

    //! How many workers give their place to threads from outside (see
    //! outsideJoins()): one per outside participant, never all of them.
    std::size_t standingAside() const;
    //! Worker `w` is one of them: the last standingAside() workers by
    //! index that are not lent (a borrowing pool has no such workers: it
    //! borrows fewer threads instead). Why: see the definition.
    bool standsAside(const Worker& w) const;
    //! A worker checks again after taking a task, as findWork() checks for a
    //! pause: it may pass the check just before an outside thread joins a
    //! loop, then take that loop's ticket (queued after the join). False
    //! (and `t` back on `w`'s deque) if it must stand aside instead.
    [[gnu::always_inline]] bool keepUnlessAside(Worker& w, const Task& t);

    //! Wakes an idle worker for new work, or, if none sleeps, a worker that
    //! went to sleep standing aside and no longer has to (see outsideLeaves()).
    //! `from`: whether the caller goes on running (a submitter: the worker
    //! woken is kept off its core, see WakeSteering) or is about to sleep
    //! or leave (passing a wake-up on).
    [[gnu::always_inline]] void wakeWorker(Waker from = Waker::staysBusy);
    //! wakeWorker()'s wake-up, once somebody sleeps (out of line, so that
    //! the check inlined at every push stays small).
    [[gnu::noinline]] void wakeSleeper(Waker from)
    {
        if (idle_.notifyOne(from)) return;
        if (lender_ && lendWorker()) return;
        // More sleep aside than stand aside now: wake them all; those still
        // aside go back to sleep (passing wake-ups on to idle_ only).
        if (static_cast<std::size_t>(aside_.sleepers()) > standingAside()) aside_.notifyAll();
    }

    //! Serves as worker `w` until the pool stops, or, on a lent thread, until
    //! it finds no work (or the pool borrows more threads than it may).
    void workerLoop(Worker& w);

    //! One thread's mark in hungry_ (see callerRuns()): counted once
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
        //! Tasks run by runTakenBack(): never started nor finished, so
        //! tasksQueued() counts them as started; tasksRunning() needs nothing.
        std::atomic<std::size_t> takenBack{0};
    };
    static constexpr std::size_t kCounterSlots = 64;
    //! Where `w` counts: slot 1 + index % 63, chosen once in start() (a
    //! division at every count cost about 15% of a spawn); outside threads
    //! count in slot 0.
    Counters& counters(Worker* w) { return w ? *w->counters : counters_[0]; }
    //! One count summed over the slots.
    std::size_t total(std::atomic<std::size_t> Counters::*count) const;
    //! A worker with a slot of its own counts with a plain store; shared slots
    //! (outside threads, workers beyond the slots) need an atomic increment.
    //! Always inline: a spawn counts twice, and out of line (as g++ left it
    //! in futureJoinOwn()) each count was a call.
    [[gnu::always_inline]] static void bump(std::atomic<std::size_t>& c, Worker* w);
    Counters counters_[kCounterSlots];
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool

// The bodies of the larger members, by concept. Each of these headers
// includes this one first, so that including any of them gives the whole
// scheduler.
#include "scheduler_submit.h"
#include "scheduler_execute.h"
#include "scheduler_lending.h"
#include "scheduler_wait.h"
#include "scheduler_workers.h"
#include "scheduler_control.h"
#include "scheduler_memory.h"
