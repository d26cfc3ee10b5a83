// A Chase-Lev work-stealing deque of Tasks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "task.h"

namespace RcppSpool {
namespace engine {

//! Work-stealing deque (Chase & Lev 2005; Le et al. 2013): its owner pushes
//! and pops at the bottom (LIFO, cache-warm), thieves steal from the top
//! (FIFO, the oldest and usually largest pieces of work).
//!
//! The orderings sit on the atomic operations themselves (seq_cst where the
//! published algorithm uses a fence), because ThreadSanitizer does not model
//! standalone fences. The buffer grows without bound; old buffers are kept
//! until the deque dies, so a thief holding a stale pointer reads valid memory.
class WorkDeque {
public:
    WorkDeque() : buffer_(new Buffer(64)) { retired_.emplace_back(buffer_.load()); }
    WorkDeque(const WorkDeque&) = delete;
    WorkDeque& operator=(const WorkDeque&) = delete;

    //! Owner only. seq_cst publication: a pusher then checks for sleeping
    //! workers, and that check must not move before the publication.
    void push(const Task& task)
    {
        std::int64_t b = bottom_.load(std::memory_order_relaxed);
        std::int64_t t = top_.load(std::memory_order_acquire);
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        if (b - t >= a->capacity) a = grow(a, t, b);
        a->slot(b).store(task);
        bottom_.store(b + 1, std::memory_order_seq_cst);
    }

    //! Owner only: the most recently pushed task, if any.
    bool pop(Task& out)
    {
        std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {  // empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return false;
        }
        out = a->slot(b).load();
        if (t < b) return true;
        // Last task: race the thieves for it.
        bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_relaxed);
        return won;
    }

    //! Any thread: the oldest task, if any. May fail spuriously under contention.
    bool steal(Task& out)
    {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return false;
        Buffer* a = buffer_.load(std::memory_order_acquire);
        Task task = a->slot(t).load();
        if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                          std::memory_order_relaxed))
            return false;
        out = task;
        return true;
    }

    //! Approximate number of tasks (exact when no other thread touches it).
    std::int64_t size() const
    {
        std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        return b > t ? b - t : 0;
    }
    bool empty() const { return size() == 0; }

private:
    struct Buffer {
        explicit Buffer(std::int64_t cap) : capacity(cap), mask(cap - 1), slots(new TaskSlot[cap]) {}
        TaskSlot& slot(std::int64_t i) { return slots[i & mask]; }
        std::int64_t capacity, mask;
        std::unique_ptr<TaskSlot[]> slots;
    };

    Buffer* grow(Buffer* old, std::int64_t t, std::int64_t b)
    {
        auto* bigger = new Buffer(old->capacity * 2);
        for (std::int64_t i = t; i < b; ++i) bigger->slot(i).store(old->slot(i).load());
        retired_.emplace_back(bigger);
        buffer_.store(bigger, std::memory_order_release);
        return bigger;
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::atomic<Buffer*> buffer_;
    std::vector<std::unique_ptr<Buffer>> retired_;  // owner only; includes the live buffer
};

}  // namespace engine
}  // namespace RcppSpool
