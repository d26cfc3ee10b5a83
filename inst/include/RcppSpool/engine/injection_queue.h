// The injection queue: the FIFO of tasks submitted from threads outside the pool.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <new>
#include <utility>

#include "task.h"
#include "work_deque.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

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

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
