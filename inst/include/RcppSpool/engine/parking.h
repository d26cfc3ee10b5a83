// Where idle threads sleep until there is something for them.
#pragma once

#include "../abi.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! A place for threads to sleep without missing a wake-up.
//!
//! A sleeper announces itself (sleepers_ + 1, seq_cst) and then re-checks its
//! condition; a waker changes the state (seq_cst) and then looks at sleepers_.
//! One of the two always sees the other, so no wake-up is lost. A waker that
//! sees no sleeper pays one load and no lock, which keeps push() cheap while
//! workers are busy. Each notifyOne() wakes a distinct sleeper (a token), so a
//! burst of pushes does not pile system calls onto one thread still waking up.
class Parking {
public:
    //! Sleeps until notified, unless `ready()` (checked after announcing) is
    //! true. With a timeout, returns after at most `timeout` as well.
    template <class Ready>
    void park(Ready&& ready)
    {
        std::unique_lock<std::mutex> lk(m_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (ready()) {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        cv_.wait(lk, [&] { return tokens_ > 0; });
        --tokens_;
    }

    //! As park(ready), but first asks `beforeSleep(asleep)` how long to sleep
    //! at most: a std::chrono::nanoseconds, max() for no limit, zero (or
    //! less) for not at all (the caller has something to do first). It is
    //! called under the lock, `asleep` being the number of threads counted
    //! as asleep here, this one included; while the lock is held, every other
    //! one of them is inside its wait.
    template <class Ready, class BeforeSleep>
    void park(Ready&& ready, BeforeSleep&& beforeSleep)
    {
        std::unique_lock<std::mutex> lk(m_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (ready()) {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        const std::chrono::nanoseconds limit = beforeSleep(sleepers_.load(std::memory_order_relaxed));
        if (limit <= limit.zero()) {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        if (limit == std::chrono::nanoseconds::max()) {
            cv_.wait(lk, [&] { return tokens_ > 0; });
            --tokens_;
        } else if (cv_.wait_for(lk, limit, [&] { return tokens_ > 0; })) {
            --tokens_;
        } else {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);  // nobody counted us out
        }
    }

    template <class Ready, class Rep, class Per>
    void parkFor(Ready&& ready, std::chrono::duration<Rep, Per> timeout)
    {
        std::unique_lock<std::mutex> lk(m_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (ready()) {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
        if (cv_.wait_for(lk, timeout, [&] { return tokens_ > 0; })) {
            --tokens_;
        } else {
            sleepers_.fetch_sub(1, std::memory_order_relaxed);  // nobody counted us out
        }
    }

    //! Wakes one sleeper, if any.
    void notifyOne()
    {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        std::lock_guard<std::mutex> lk(m_);
        if (sleepers_.load(std::memory_order_relaxed) == 0) return;
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        ++tokens_;
        cv_.notify_one();
    }

    //! Wakes every sleeper.
    void notifyAll()
    {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        std::lock_guard<std::mutex> lk(m_);
        int n = sleepers_.exchange(0, std::memory_order_relaxed);
        if (n == 0) return;
        tokens_ += n;
        cv_.notify_all();
    }

    bool hasSleepers() const { return sleepers_.load(std::memory_order_seq_cst) > 0; }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::atomic<int> sleepers_{0};  // announced, not yet counted out by a waker
    int tokens_ = 0;                // wake-ups handed out, not yet taken (guarded by m_)
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
