// A Chase-Lev work-stealing deque of Tasks.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

#include "task.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Memory for the task queues' buffers (raw, aligned for a Task). Large
//! blocks come straight from the OS where we can ask it (mmap), so that
//! freeing one gives it back at once: glibc's malloc, after a large block is
//! freed, serves blocks up to that size (up to 32 MB) from its heap, and
//! keeps them resident after they are freed. Elsewhere large blocks of the
//! system allocator are given back when freed (Windows' heap does).
constexpr std::size_t kQueueMapBytes = std::size_t(256) << 10;

inline void* allocateQueueMemory(std::size_t bytes)
{
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
    if (bytes >= kQueueMapBytes) {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        return p;
    }
#endif
    return ::operator new(bytes);
}

//! Frees what allocateQueueMemory(bytes) returned (null: nothing).
inline void freeQueueMemory(void* p, std::size_t bytes) noexcept
{
    if (!p) return;
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
    if (bytes >= kQueueMapBytes) {
        ::munmap(p, bytes);
        return;
    }
#endif
    (void)bytes;
    ::operator delete(p);
}

//! Work-stealing deque (Chase & Lev 2005; Le et al. 2013): its owner pushes
//! and pops at the bottom (LIFO, cache-warm), thieves steal from the top
//! (FIFO, the oldest and usually largest pieces of work).
//!
//! The orderings sit on the atomic operations themselves (seq_cst where the
//! published algorithm uses a fence), because ThreadSanitizer does not model
//! standalone fences.
//!
//! Memory: the deque starts on a small reserve buffer that it keeps for life.
//! A burst grows it (doubling); once its owner finds it empty at an idle
//! moment, shrink() goes back to the reserve, so a burst of a million tasks
//! does not stay resident for the rest of the session. Neither costs push,
//! pop or steal anything. A buffer that is left (by growing or shrinking) is
//! *retired*, not freed: a thief may have loaded its address just before and
//! still read a slot of it. Until it is freed, the next burst reuses it
//! (bursts that follow each other closely do not pay for fresh memory again).
//! Retired buffers are freed by whoever takes them with takeRetired(), which
//! is allowed only once no thread can still hold such an address: the
//! scheduler does it when every thread that steals from this deque has been
//! asleep for a while (see Scheduler::releaseIdleMemory()).
class WorkDeque {
public:
    struct Buffer {
        explicit Buffer(std::int64_t cap)
            : capacity(cap), mask(cap - 1), slots(static_cast<TaskSlot*>(allocateQueueMemory(bytes())))
        {
            std::uninitialized_default_construct_n(slots, cap);  // nothing to do in C++17
        }
        ~Buffer() { freeQueueMemory(slots, bytes()); }  // TaskSlot: trivially destructible
        Buffer(const Buffer&) = delete;
        Buffer& operator=(const Buffer&) = delete;
        TaskSlot& slot(std::int64_t i) { return slots[i & mask]; }
        std::size_t bytes() const { return static_cast<std::size_t>(capacity) * sizeof(TaskSlot); }
        const std::int64_t capacity, mask;
        TaskSlot* const slots;
    };
    //! Buffers no longer in use, to be freed when no thief can read them.
    using Retired = std::vector<std::unique_ptr<Buffer>>;
    using Clock = std::chrono::steady_clock;

    //! Slots of the reserve buffer (4 KB), kept for the deque's life.
    static constexpr std::int64_t kReserveCapacity = 64;
    //! shrink() leaves a buffer of up to this many slots (64 KB) in place.
    static constexpr std::int64_t kKeepCapacity = 1024;

    WorkDeque() : reserve_(kReserveCapacity), buffer_(&reserve_) {}
    WorkDeque(const WorkDeque&) = delete;
    WorkDeque& operator=(const WorkDeque&) = delete;

    //! Owner only. seq_cst publication: a pusher then checks for sleeping
    //! workers, and that check must not move before the publication.
    //! The capacity check reads the top the owner saw last (a lower bound:
    //! the top only grows), and the top itself only when that says full:
    //! thieves write the top at every steal, so reading it at every push
    //! moved its cache line to the pusher and back (a burst of pushes from
    //! outside the pool that workers steal as it comes).
    [[gnu::always_inline]] void push(const Task& task)
    {
        std::int64_t b = bottom_.load(std::memory_order_relaxed);
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        if (b - topSeen_ >= a->capacity) a = makeRoom(a, b);
        a->slot(b).store(task);
        bottom_.store(b + 1, std::memory_order_seq_cst);
    }

    //! Owner only: how many more tasks fit before the buffer must grow.
    std::int64_t room() const
    {
        return buffer_.load(std::memory_order_relaxed)->capacity -
               (bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_acquire));
    }

    //! Owner only: pushes `n` tasks, published at once.
    void pushAll(const Task* tasks, std::int64_t n)
    {
        std::int64_t b = bottom_.load(std::memory_order_relaxed);
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        if (b + n - 1 - topSeen_ >= a->capacity) a = makeRoom(a, b, n);
        for (std::int64_t i = 0; i < n; ++i) a->slot(b + i).store(tasks[i]);
        bottom_.store(b + n, std::memory_order_seq_cst);
    }

    //! Owner only: the most recently pushed task, if any.
    [[gnu::always_inline]] bool pop(Task& out) { return popBottom<1>(out); }

    //! Owner only: pop(), reading only the head of the task (TaskSlot::
    //! loadHead(): enough to tell which it is) into `out`; `*at` is its
    //! slot, whose loadTail() gives the rest until the owner pushes again
    //! (only the owner writes slots). A join that finds the task it seeks
    //! needs no more.
    [[gnu::always_inline]] bool popHead(Task& out, const TaskSlot** at) { return popBottom<1, true>(out, at); }

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

    //! The most tasks stealHalf() takes at once. P1 (10^6 pushes from
    //! outside, 2 workers), time over oneTBB's: 1.25 with one a steal, 0.67
    //! with 8, 0.56 with 16, 0.47-0.53 with 32.
    static constexpr std::int64_t kMaxStealBatch = 32;

    //! Any thread: about half of the tasks, oldest first, at most
    //! kMaxStealBatch: the oldest into `first`, the others pushed onto
    //! `into` (the caller's own deque). One compare-exchange of the top for
    //! them all, where steal() makes one a task: a thread that queues a
    //! burst from outside the pool then meets its thieves once a batch, not
    //! once a task. May fail spuriously under contention.
    //!
    //! Only for a deque whose owner takes tasks back with popBesideBatches(),
    //! never pop(): pop() takes the bottom task without a compare-exchange
    //! when at least one task is above it, which a thief that read an older
    //! bottom and takes several at once may also take.
    bool stealHalf(Task& first, WorkDeque& into)
    {
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        if (t >= b) return false;
        // No more than `into` holds without growing: once the top moved,
        // nothing may fail (a failed allocation would lose the tasks taken).
        const std::int64_t k = std::min({kMaxStealBatch, std::max<std::int64_t>(1, (b - t) / 2), 1 + into.room()});
        Buffer* a = buffer_.load(std::memory_order_acquire);
        // Raw storage: only the k tasks read are made (Tasks are trivially copyable).
        alignas(Task) unsigned char raw[kMaxStealBatch * sizeof(Task)];
        Task* taken = reinterpret_cast<Task*>(raw);
        for (std::int64_t i = 0; i < k; ++i) ::new (static_cast<void*>(taken + i)) Task(a->slot(t + i).load());
        if (!top_.compare_exchange_strong(t, t + k, std::memory_order_seq_cst, std::memory_order_relaxed))
            return false;
        first = taken[0];
        if (k > 1) into.pushAll(taken + 1, k - 1);
        return true;
    }

    //! Owner only, for a deque that thieves take from with stealHalf(): the
    //! most recently pushed task, if no thief can reach it; else (a few
    //! tasks left) the oldest, taken as a thief takes it.
    //!
    //! Why the bottom task is safe when at least kMaxStealBatch tasks lie
    //! above it (top t read after the bottom was lowered to b): a thief that
    //! read the lowered bottom takes at most half of [top, b), never b; one
    //! that read the bottom before it was lowered read the top before that
    //! too, so its top is at most t, and its compare-exchange, if it comes
    //! later, succeeds only from t itself: it takes [t, t + kMaxStealBatch)
    //! at most, below b.
    bool popBesideBatches(Task& out) { return popBottom<kMaxStealBatch>(out); }

    //! Approximate number of tasks (exact when no other thread touches it).
    std::int64_t size() const
    {
        std::int64_t b = bottom_.load(std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        return b > t ? b - t : 0;
    }
    bool empty() const { return size() == 0; }

    //! Owner only (or whoever stands in for it: no push may run meanwhile).
    //! If the deque is empty and a burst made its buffer larger than
    //! kKeepCapacity, goes back to the reserve buffer and retires the large
    //! one. True if it did. Costs one load when there is nothing to do.
    //!
    //! Why a thief holding the old buffer cannot take a task from it: its
    //! steal read top == t and bottom > t, so the task at t was there; for
    //! the owner to see the deque empty afterwards, that task must have been
    //! taken, which moved top past t, so the thief's compare-exchange fails
    //! and what it read is dropped. Tasks pushed after the shrink are
    //! published (bottom, seq_cst) after the new buffer, so a thief that sees
    //! them sees the new buffer too. The reserve buffer is never freed, so
    //! reusing it is safe in the same way.
    //!
    //! Reusing a retired buffer in grow() is safe for the same reason: grow()
    //! takes one only if it is at least twice as large as the buffer in use,
    //! so the deque has shrunk since that one was retired: it was empty.
    bool shrink()
    {
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        if (a->capacity <= kKeepCapacity) return false;
        std::int64_t b = bottom_.load(std::memory_order_relaxed);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (b > t) return false;  // not empty (only the owner adds tasks)
        buffer_.store(&reserve_, std::memory_order_seq_cst);
        retire(std::move(live_));
        return true;
    }

    //! True if some buffer waits to be freed.
    bool hasRetired() const { return hasRetired_.load(std::memory_order_seq_cst); }

    //! Moves the retired buffers into `out` if the last one was retired at
    //! `cutoff` or before; else lowers `pending` to when that was. True if
    //! it took any. Only once no thief can still read them (see the class
    //! comment). Any thread.
    bool takeRetired(Retired& out, Clock::time_point cutoff, Clock::time_point& pending)
    {
        if (!hasRetired()) return false;
        std::lock_guard<std::mutex> lk(retiredMutex_);
        if (retired_.empty()) return false;
        if (retiredAt_ > cutoff) {
            if (retiredAt_ < pending) pending = retiredAt_;
            return false;
        }
        for (auto& r : retired_) out.push_back(std::move(r));
        retired_.clear();
        hasRetired_.store(false, std::memory_order_relaxed);
        return true;
    }

    //! Slots of the buffer in use (owner's view).
    std::int64_t capacity() const { return buffer_.load(std::memory_order_relaxed)->capacity; }

private:
    //! The owner's pop, for thieves that take up to `kReach` tasks at once
    //! (1: steal(); kMaxStealBatch: stealHalf()): the bottom task without a
    //! compare-exchange when at least kReach tasks lie above it, the last
    //! task raced for as in Chase-Lev, else (fewer than kReach left, only
    //! when kReach > 1) the oldest, taken as a thief takes it.
    //! kHead: only the head is read, its slot in `*at` (see popHead()).
    template <std::int64_t kReach, bool kHead = false>
    [[gnu::always_inline]] bool popBottom(Task& out, const TaskSlot** at = nullptr)
    {

        std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
        Buffer* a = buffer_.load(std::memory_order_relaxed);
        bottom_.store(b, std::memory_order_seq_cst);
        std::int64_t t = top_.load(std::memory_order_seq_cst);
        if (t > b) {  // empty
            bottom_.store(b + 1, std::memory_order_relaxed);
            return false;
        }
        if (b - t >= kReach) {
            take<kHead>(a->slot(b), out, at);
            return true;
        }
        if (t == b) {  // the last task: race the thieves for it
            take<kHead>(a->slot(b), out, at);
            const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                          std::memory_order_relaxed);
            bottom_.store(b + 1, std::memory_order_relaxed);
            return won;
        }
        bottom_.store(b + 1, std::memory_order_seq_cst);
        while (t <= b) {  // a few tasks left: race the thieves for the oldest
            Task task = a->slot(t).load();
            if (top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
                out = task;
                return true;
            }
        }
        return false;
    }

    //! popBottom()'s read of the slot it took.
    template <bool kHead>
    [[gnu::always_inline]] static void take(const TaskSlot& slot, Task& out, const TaskSlot** at)
    {
        if constexpr (kHead) {
            slot.loadHead(out);
            *at = &slot;
        } else {
            out = slot.load();
        }
    }

    //! push() found the buffer full by the top it saw last: looks at the
    //! top again, and grows the buffer if room for `n` more is still lacking.
    [[gnu::noinline]] Buffer* makeRoom(Buffer* a, std::int64_t b, std::int64_t n = 1)
    {
        topSeen_ = top_.load(std::memory_order_acquire);
        while (b + n - 1 - topSeen_ >= a->capacity) a = grow(a, topSeen_, b);
        return a;
    }

    Buffer* grow(Buffer* old, std::int64_t t, std::int64_t b)
    {
        std::unique_ptr<Buffer> bigger = reuse(old->capacity * 2);
        if (!bigger) bigger.reset(new Buffer(old->capacity * 2));
        // Tasks [t, b) keep their indices: any power-of-two capacity above b - t holds them.
        for (std::int64_t i = t; i < b; ++i) bigger->slot(i).store(old->slot(i).load());
        Buffer* a = bigger.get();
        buffer_.store(a, std::memory_order_release);
        std::unique_ptr<Buffer> previous = std::exchange(live_, std::move(bigger));
        if (previous) retire(std::move(previous));  // the reserve buffer is kept, not retired
        return a;
    }

    //! The largest retired buffer, if it has at least `capacity` slots: a
    //! burst after a pause goes straight back to the buffer of the last one,
    //! whose pages are still resident, without copying its way up again.
    std::unique_ptr<Buffer> reuse(std::int64_t capacity)
    {
        if (!hasRetired()) return nullptr;
        std::lock_guard<std::mutex> lk(retiredMutex_);
        auto best = retired_.end();
        for (auto r = retired_.begin(); r != retired_.end(); ++r)
            if ((*r)->capacity >= capacity && (best == retired_.end() || (*r)->capacity > (*best)->capacity)) best = r;
        if (best == retired_.end()) return nullptr;
        std::unique_ptr<Buffer> found = std::move(*best);
        *best = std::move(retired_.back());
        retired_.pop_back();
        if (retired_.empty()) hasRetired_.store(false, std::memory_order_relaxed);
        return found;
    }

    void retire(std::unique_ptr<Buffer> buffer)
    {
        const auto now = Clock::now();
        std::lock_guard<std::mutex> lk(retiredMutex_);
        retired_.push_back(std::move(buffer));
        retiredAt_ = now;
        hasRetired_.store(true, std::memory_order_seq_cst);
    }

    alignas(64) std::atomic<std::int64_t> top_{0};
    alignas(64) std::atomic<std::int64_t> bottom_{0};
    std::int64_t topSeen_ = 0;          // owner only: the top when push() last read it (see push())
    Buffer reserve_;                    // the buffer we start with and go back to
    std::atomic<Buffer*> buffer_;       // reserve_ or live_
    std::unique_ptr<Buffer> live_;      // owner only: the grown buffer in use, if any
    std::mutex retiredMutex_;           // guards retired_ and retiredAt_ (owner retires, a collector frees)
    Retired retired_;
    Clock::time_point retiredAt_;       // when the last buffer was retired
    std::atomic<bool> hasRetired_{false};
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
