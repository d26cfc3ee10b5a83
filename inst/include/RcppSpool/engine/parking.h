// Where idle threads sleep, and how exactly the right one is woken.
#pragma once

#include "../abi.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "wake_steering.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Orders a preceding read-modify-write (or seq_cst store) before the loads
//! that follow, as both halves of the "announce, then check" handshake of
//! WaitTable need. On x86 the locked instruction of the RMW already is a
//! full barrier, so only the compiler must be kept from reordering (and
//! ThreadSanitizer, which does not model fences, sees none).
inline void fenceAfterChange() noexcept
{
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
    std::atomic_signal_fence(std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

//! One sleeping thread's bed: it sleeps until signalled or a time limit. It
//! lives on the sleeping thread's stack for one sleep, and may be listed in
//! several SleepLists at once (a worker waiting for a result also takes new
//! work), so that whichever event comes first wakes it, and only it.
class Sleeper {
public:
    //! Wakes the sleeper; for a `Waker::staysBusy`, off the waker's core
    //! (see WakeSteering).
    void signal(Waker from = Waker::leaves)
    {
        if (from == Waker::staysBusy) steering_.steerOffCallersCore();
        {
            std::lock_guard<std::mutex> lk(m_);
            signaled_ = true;
        }
        cv_.notify_one();
    }
    //! Sleeps until signalled, or for at most `limit` (max(): no limit).
    void sleep(std::chrono::nanoseconds limit)
    {
        std::unique_lock<std::mutex> lk(m_);
        if (limit == std::chrono::nanoseconds::max())
            cv_.wait(lk, [&] { return signaled_; });
        else
            cv_.wait_for(lk, limit, [&] { return signaled_; });
    }

    //! Its waker narrowed its CPU set (tests).
    bool steered() const noexcept { return steering_.narrowed(); }

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool signaled_ = false;
    // Undone (the CPU set put back) when the Sleeper goes: its nodes,
    // declared after it on the sleeper's stack, have left their lists then,
    // so no waker can touch it any more.
    WakeSteering steering_;
};

//! A sleeper's place in one SleepList (on the sleeper's stack too).
struct SleepNode {
    Sleeper* sleeper;
    const void* key = nullptr;  //!< what it waits for (WaitTable), or null
    SleepNode* prev = nullptr;
    SleepNode* next = nullptr;
    bool listed = false;        //!< guarded by the list's lock
};

//! Sleepers under one lock, newest first.
//!
//! No wake-up is lost: a sleeper lists itself (count + 1, seq_cst, under the
//! lock) and then checks its condition; a waker changes the state, fences
//! (fenceAfterChange()) and then looks at the count. One of the two always
//! sees the other. A waker that sees no sleeper pays one load and no lock.
//! A waker signals under the lock, and a sleeper leaves under the lock, so a
//! Sleeper is never touched after its thread has left every list.
class SleepList {
public:
    //! Lists `n`. Then, with the lock still held, `ready()`: if true, `n` is
    //! taken out again and true returned (the caller does not sleep).
    template <class Ready>
    bool enlist(SleepNode& n, Ready&& ready)
    {
        std::lock_guard<std::mutex> lk(m_);
        link(n);
        if (!ready()) return false;
        unlink(n);
        return true;
    }
    //! As enlist(), and asks `beforeSleep(listed)` (under the lock, `listed`
    //! counting this sleeper) how long to sleep at most; a limit <= 0 takes
    //! `n` out again. Returns the limit, or zero when ready.
    template <class Ready, class BeforeSleep>
    std::chrono::nanoseconds enlist(SleepNode& n, Ready&& ready, BeforeSleep&& beforeSleep)
    {
        std::lock_guard<std::mutex> lk(m_);
        link(n);
        std::chrono::nanoseconds limit = std::chrono::nanoseconds::zero();
        if (!ready()) limit = beforeSleep(count_.load(std::memory_order_relaxed));
        if (limit <= limit.zero()) unlink(n);
        return limit;
    }
    //! Takes `n` out; false if a waker already did (it was signalled from here).
    bool delist(SleepNode& n)
    {
        std::lock_guard<std::mutex> lk(m_);
        if (!n.listed) return false;
        unlink(n);
        return true;
    }

    //! Wakes the newest sleeper, if any; false if there was none.
    bool wakeOne(Waker from = Waker::leaves)
    {
        if (count_.load(std::memory_order_seq_cst) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        SleepNode* n = head_;
        if (n) wake(*n, from);
        return n != nullptr;
    }
    //! Wakes every sleeper (with `key`, if not null).
    void wakeAll(const void* key = nullptr)
    {
        if (count_.load(std::memory_order_seq_cst) == 0) return;
        std::lock_guard<std::mutex> lk(m_);
        for (SleepNode* n = head_; n;) {
            SleepNode* next = n->next;
            if (!key || n->key == key) wake(*n);
            n = next;
        }
    }

    //! Threads signalled so far (for tests and benchmarks).
    std::uint64_t wakeUps() const { return wakeUps_.load(std::memory_order_relaxed); }
    //! Threads listed now (seq_cst: read after a change that a sleeper checks).
    int sleepers() const { return count_.load(std::memory_order_seq_cst); }

private:
    void link(SleepNode& n)
    {
        n.prev = nullptr;
        n.next = head_;
        if (head_) head_->prev = &n;
        head_ = &n;
        n.listed = true;
        count_.fetch_add(1, std::memory_order_seq_cst);
    }
    void unlink(SleepNode& n)
    {
        (n.prev ? n.prev->next : head_) = n.next;
        if (n.next) n.next->prev = n.prev;
        n.listed = false;
        count_.fetch_sub(1, std::memory_order_relaxed);
    }
    void wake(SleepNode& n, Waker from = Waker::leaves)
    {
        unlink(n);
        n.sleeper->signal(from);
        wakeUps_.fetch_add(1, std::memory_order_relaxed);
    }

    std::mutex m_;
    SleepNode* head_ = nullptr;  // guarded by m_
    std::atomic<int> count_{0};  // listed sleepers
    std::atomic<std::uint64_t> wakeUps_{0};
};

//! A place for threads to sleep until there is something for them: any of
//! them will do (idle workers).
class Parking {
public:
    //! Sleeps until notified, unless `ready()` (checked after announcing) is true.
    template <class Ready>
    void park(Ready&& ready)
    {
        Sleeper me;
        SleepNode node{&me};
        if (list_.enlist(node, ready)) return;
        me.sleep(std::chrono::nanoseconds::max());
        list_.delist(node);
    }

    //! As park(ready), but first asks `beforeSleep(asleep)` how long to sleep
    //! at most: a std::chrono::nanoseconds, max() for no limit, zero (or
    //! less) for not at all (the caller has something to do first). It is
    //! called under the lock, `asleep` being the number of threads asleep
    //! here, this one included; while the lock is held, none of the others
    //! runs anything but its way into or out of sleep (one that is woken
    //! takes the lock before it goes on).
    template <class Ready, class BeforeSleep>
    void park(Ready&& ready, BeforeSleep&& beforeSleep)
    {
        Sleeper me;
        SleepNode node{&me};
        const auto limit = list_.enlist(node, ready, beforeSleep);
        if (limit <= limit.zero()) return;
        me.sleep(limit);
        list_.delist(node);
    }

    //! Lists `node` for a sleep that also waits for something else (see
    //! Scheduler::waitUntil()); as SleepList::enlist.
    template <class Ready>
    bool enlist(SleepNode& node, Ready&& ready) { return list_.enlist(node, ready); }
    bool delist(SleepNode& node) { return list_.delist(node); }

    //! Wakes one sleeper, if any; false if there was none.
    bool notifyOne(Waker from = Waker::leaves) { return list_.wakeOne(from); }
    //! Wakes every sleeper.
    void notifyAll() { list_.wakeAll(); }

    std::uint64_t wakeUps() const { return list_.wakeUps(); }
    //! Threads asleep here now (or on their way in or out).
    int sleepers() const { return list_.sleepers(); }

private:
    SleepList list_;
};

//! Threads waiting for particular things to finish (a loop, a future's
//! result, a group of tasks), keyed by the thing's address: a completion
//! wakes the threads waiting for it and nobody else. Keys hash to a few
//! lists, each with its own lock, as a futex table does.
class WaitTable {
public:
    //! Lists `node` (with its key). The caller then checks whether what it
    //! waits for is done before it sleeps.
    void add(SleepNode& node)
    {
        bucket(node.key).enlist(node, [] { return false; });
        fenceAfterChange();  // listed (an RMW) before the check that follows
    }
    void remove(SleepNode& node) { bucket(node.key).delist(node); }

    //! `key` is done (its state changed just before): wakes whoever waits for it.
    void wake(const void* key)
    {
        fenceAfterChange();
        bucket(key).wakeAll(key);
    }

    std::uint64_t wakeUps() const
    {
        std::uint64_t n = 0;
        for (const auto& b : buckets_) n += b.wakeUps();
        return n;
    }

private:
    static constexpr std::size_t kBuckets = 16;
    SleepList& bucket(const void* key)
    {
        return buckets_[(std::hash<const void*>()(key) >> 6) % kBuckets];
    }
    struct alignas(64) Bucket : SleepList {};
    Bucket buckets_[kBuckets];
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
