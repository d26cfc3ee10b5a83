// The work-stealing scheduler: worker threads, where tasks go, how waits help.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "context.h"
#include "fork_guard.h"
#include "host_hooks.h"
#include "parking.h"
#include "task.h"
#include "work_deque.h"

namespace RcppSpool {
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

inline Frame*& currentFrame() noexcept
{
    static thread_local Frame* frame = nullptr;
    return frame;
}

//! A FIFO for tasks submitted from threads outside the pool. Workers take
//! several at a time into their own deque, so that the lock is rarely
//! contended and the tasks stay stealable.
class InjectionQueue {
public:
    void push(const Task& t)
    {
        std::lock_guard<std::mutex> lk(m_);
        q_.push_back(t);
        size_.store(q_.size(), std::memory_order_seq_cst);
    }
    //! Moves up to `maxBatch` tasks: the first into `first`, the rest into `deque`.
    bool takeBatch(Task& first, WorkDeque& deque, std::size_t maxBatch)
    {
        if (size_.load(std::memory_order_relaxed) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (q_.empty()) return false;
        first = q_.front();
        q_.pop_front();
        std::size_t n = std::min(maxBatch, q_.size());
        for (std::size_t i = 0; i < n; ++i) {
            deque.push(q_.front());
            q_.pop_front();
        }
        size_.store(q_.size(), std::memory_order_relaxed);
        return true;
    }
    bool takeOne(Task& out)
    {
        if (size_.load(std::memory_order_relaxed) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (q_.empty()) return false;
        out = q_.front();
        q_.pop_front();
        size_.store(q_.size(), std::memory_order_relaxed);
        return true;
    }
    std::size_t size() const { return size_.load(std::memory_order_seq_cst); }

private:
    std::mutex m_;
    std::deque<Task> q_;
    std::atomic<std::size_t> size_{0};
};

//! The scheduler behind a ThreadPool. It knows nothing of R: the host hooks
//! (host_hooks.h) tell it which thread to keep responsive.
class Scheduler {
public:
    explicit Scheduler(std::size_t nWorkers) : generation_(forkGeneration()) { start(nWorkers); }

    //! Waits for running tasks, drops queued ones, stops the workers.
    ~Scheduler()
    {
        if (forked()) {
            // Our workers do not exist in this process and our locks may be
            // held by them: leak the state rather than touch it.
            for (std::size_t i = 0; i < numWorkers(); ++i) workers_[i]->thread.detach();
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
            execute(t);
            return;
        }
        Worker* w = currentWorker();
        bump(counters(w).pushed, w);
        if (w) {
            w->deque.push(t);
        } else if (ownsOutsideDeque()) {
            outside_.push(t);
        } else {
            injection_.push(t);
        }
        // A worker that is already looking for work will find this task; waking
        // a sleeper too would only put a thread more on the cores.
        if (searching_.load(std::memory_order_seq_cst) == 0) idle_.notifyOne();
    }

    // ---- waiting --------------------------------------------------------------

    //! Waits until `done()`. On a worker of this pool it runs other tasks
    //! meanwhile; on the host's service thread it services the host (which may
    //! raise an interrupt: a `done` that should end early on interrupts checks
    //! interruptRequested() itself). Returns false if `deadline` passed first.
    template <class Done>
    bool waitUntil(Done&& done,
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max())
    {
        if (done()) return true;
        const bool service = onServiceThread();
        const bool bounded = deadline != std::chrono::steady_clock::time_point::max();
        Worker* w = inlineMode() ? nullptr : currentWorker();
        // Only the service thread needs the clock (recursive waits are hot).
        auto lastService = service ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
        for (int spins = 0;; ++spins) {
            if (done()) return true;
            if (w) {
                Task t;
                if (findWork(*w, t)) {
                    execute(t);
                    spins = 0;
                    continue;
                }
            }
            if (service || bounded) {
                auto now = std::chrono::steady_clock::now();
                if (bounded && now >= deadline) return done();
                if (service && now - lastService >= kServicePeriod) {
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
            // Sleep until something finishes (or, on a worker, new work arrives).
            auto until = std::chrono::steady_clock::now() + kParkSlice;
            if (bounded) until = std::min(until, deadline);
            auto slice = until - std::chrono::steady_clock::now();
            if (service) slice = std::min<decltype(slice)>(slice, kServicePeriod);
            if (slice > slice.zero()) {
                Parking& p = w ? idle_ : done_;
                p.parkFor([&] { return done() || (w && hasVisibleWork()); }, slice);
            }
            spins = kWaitSpins;  // keep yielding between parks
        }
    }

    //! The context a blocking call made from the current thread belongs to
    //! (for cancellation), or null outside any task.
    static Context* enclosingContext() noexcept
    {
        Frame* f = currentFrame();
        return f ? f->context : nullptr;
    }

    //! Called after a Context or a result became ready: wakes whoever waits.
    void notifyCompletion()
    {
        if (forked()) return;  // nobody to wake; the parkings may hold stale state
        done_.notifyAll();
        idle_.notifyAll();
    }

    //! One piece of work counted in `c` has finished: cascade through owned
    //! contexts (a task's children) and wake waiters when something is done.
    void finish(Context* c)
    {
        while (c) {
            // Read before the decrement: once the count is zero, a waiter may
            // return and destroy a Context that is not owned by the engine.
            const bool owned = c->owned();
            Context* parent = c->parent();
            if (!c->finishOne()) return;
            if (!owned) {
                notifyCompletion();
                return;
            }
            if (c->hasError() && parent) parent->fail(c->takeError());
            delete c;
            c = parent;
        }
    }

    //! Runs one task on the current thread, with its bookkeeping.
    void execute(const Task& task)
    {
        Task t = task;
        Context* const c = t.context();
        Worker* const self = currentWorker();
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

    //! True when new work from this thread would only queue behind a lot of
    //! waiting work: its own deque (on a worker) or the shared queue is long.
    bool callerIsSaturated() const
    {
        if (inlineMode()) return true;
        Worker* w = currentWorker();
        if (w) return w->deque.size() >= static_cast<std::int64_t>(kSaturation);
        return injection_.size() + static_cast<std::size_t>(outside_.size()) >= kSaturation * numWorkers();
    }

    //! True when this thread is one of this scheduler's workers.
    bool isOwnWorker() const { return currentWorker() != nullptr; }
    //! Work runs on the caller: no workers, or we are in a forked child.
    bool inlineMode() const { return numWorkers() == 0 || forked(); }
    bool forked() const { return currentForkGeneration() != generation_; }

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
    struct Worker {
        WorkDeque deque;
        std::thread thread;
        std::size_t index = 0;
        std::uint64_t rng = 0;
    };

    //! The outside deque belongs to the first outside thread that submits (in
    //! R: the main thread) for as long as that thread lives; its pushes then
    //! need no lock. Other outside threads use the injection queue. A thread
    //! is identified by the address of a thread_local, which is unique among
    //! live threads.
    bool ownsOutsideDeque()
    {
        static thread_local char token;
        const void* me = &token;
        const void* owner = outsideOwner_.load(std::memory_order_relaxed);
        if (owner == me) return true;
        if (owner != nullptr) return false;
        return outsideOwner_.compare_exchange_strong(owner, me, std::memory_order_acq_rel) ||
               owner == me;
    }

    struct WorkerTls {
        const Scheduler* scheduler = nullptr;
        Worker* worker = nullptr;
    };
    static WorkerTls& workerTls() noexcept
    {
        static thread_local WorkerTls tls;
        return tls;
    }
    Worker* currentWorker() const noexcept
    {
        auto& tls = workerTls();
        return tls.scheduler == this ? tls.worker : nullptr;
    }

    void start(std::size_t n)
    {
        stopping_.store(false, std::memory_order_seq_cst);
        workers_.reset(new std::unique_ptr<Worker>[n]);
        workerCount_.store(n, std::memory_order_seq_cst);
        for (std::size_t i = 0; i < n; ++i) {
            workers_[i].reset(new Worker);
            workers_[i]->index = i;
            workers_[i]->rng = 0x9E3779B97F4A7C15ull * (i + 1);
        }
        for (std::size_t i = 0; i < n; ++i)
            workers_[i]->thread = std::thread([this, i] { workerLoop(*workers_[i]); });
    }

    void stopWorkers()
    {
        stopping_.store(true, std::memory_order_seq_cst);
        idle_.notifyAll();
        for (std::size_t i = 0; i < numWorkers(); ++i)
            if (workers_[i]->thread.joinable()) workers_[i]->thread.join();
    }

    bool hasVisibleWork() const
    {
        if (paused_.load(std::memory_order_seq_cst)) return false;
        if (injection_.size() > 0 || !outside_.empty()) return true;
        for (std::size_t i = 0, n = numWorkers(); i < n; ++i)
            if (!workers_[i]->deque.empty()) return true;
        return false;
    }

    //! A task for worker `w`, unless the pool is paused. A worker may pass
    //! the pause check just before pause() and then take a task pushed after
    //! it; the second check (seq_cst, after taking) catches that, and the task
    //! goes back to the worker's own deque.
    bool findWork(Worker& w, Task& out)
    {
        if (!takeWork(w, out)) return false;
        if (paused_.load(std::memory_order_seq_cst)) {
            w.deque.push(out);
            return false;
        }
        return true;
    }

    //! Own deque first (newest, cache-warm), then outside submissions, then a
    //! random victim's oldest task.
    bool takeWork(Worker& w, Task& out)
    {
        if (paused_.load(std::memory_order_relaxed)) return false;
        if (w.deque.pop(out)) return true;
        if (outside_.steal(out)) return true;
        if (injection_.takeBatch(out, w.deque, kInjectionBatch)) return true;
        const std::size_t n = numWorkers();
        if (n > 1) {
            w.rng ^= w.rng << 13;
            w.rng ^= w.rng >> 7;
            w.rng ^= w.rng << 17;
            std::size_t start = static_cast<std::size_t>(w.rng % n);
            for (std::size_t k = 0; k < n; ++k) {
                std::size_t v = (start + k) % n;
                if (v != w.index && workers_[v]->deque.steal(out)) return true;
            }
        }
        return false;
    }

    void workerLoop(Worker& w)
    {
        workerTls() = WorkerTls{this, &w};
        Task t;
        while (!stopping_.load(std::memory_order_relaxed)) {
            if (findWork(w, t)) {
                execute(t);
                continue;
            }
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
                found = findWork(w, t);
                if (found || stopping_.load(std::memory_order_relaxed)) break;
                if ((i & 7) == 0) {
                    if (std::chrono::steady_clock::now() > spinEnd) break;
                    std::this_thread::yield();
                }
            }
            const bool lastSearcher = searching_.fetch_sub(1, std::memory_order_seq_cst) == 1;
            if (found) {
                if (lastSearcher && hasVisibleWork()) idle_.notifyOne();
                execute(t);
                continue;
            }
            idle_.park([&] { return stopping_.load(std::memory_order_seq_cst) || hasVisibleWork(); });
        }
        workerTls() = WorkerTls{};
    }

    static constexpr std::chrono::microseconds kIdleSpin{50};
    static constexpr int kWaitSpins = 1 << 10;
    static constexpr int kWaitYields = 64;
    static constexpr std::size_t kInjectionBatch = 32;
    static constexpr std::size_t kSaturation = 64;
    static constexpr std::chrono::milliseconds kParkSlice{20};

    Context root_;
    const unsigned generation_;
    std::unique_ptr<std::unique_ptr<Worker>[]> workers_;
    std::atomic<std::size_t> workerCount_{0};
    InjectionQueue injection_;
    WorkDeque outside_;                        // see ownsOutsideDeque()
    std::atomic<const void*> outsideOwner_{nullptr};
    Parking idle_;  // workers without work (and workers waiting while helping)
    Parking done_;  // threads outside the pool waiting for something to finish
    std::atomic<bool> stopping_{false};
    alignas(64) std::atomic<int> searching_{0};  // workers spinning for work (see workerLoop)
    std::atomic<bool> paused_{false};
    std::mutex resizeMutex_;
    // Task counts, one set per worker (and one for outside threads), so that
    // counting does not make every task touch a shared cache line.
    struct alignas(64) Counters {
        std::atomic<std::size_t> pushed{0}, started{0}, finished{0};
    };
    static constexpr std::size_t kCounterSlots = 64;
    Counters& counters(Worker* w) { return counters_[w ? 1 + w->index % (kCounterSlots - 1) : 0]; }
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
}  // namespace RcppSpool
