// Scheduler's control: starting, stopping, resizing and pausing the workers; dropping work.
#pragma once

#include "../abi.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "scheduler.h"
#include "signal_mask.h"
#include "task.h"
#include "work_deque.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

inline Scheduler::~Scheduler()
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

inline void Scheduler::unpause()
{
    paused_.store(false, std::memory_order_seq_cst);
    idle_.notifyAll();
}

inline void Scheduler::resize(std::size_t n)
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

inline void Scheduler::dropQueued()
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

inline void Scheduler::start(std::size_t n)
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

inline void Scheduler::stopWorkers()
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

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
