// Calls that other threads hand to the host's main thread (R's): a queue.
#pragma once

#include "../abi.h"

#include <atomic>
#include <mutex>

#include "../table/api_table.h"
#include "../engine/fork_guard.h"
#include "../engine/host_hooks.h"
#include "../engine/runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! One call waiting for the main thread: a C struct of the table's
//! (table/api_table.h), since the call's code is in the shared object of
//! the package that made it and the queue is the runtime's.
using MainCall = table::MainCall;

//! The calls made and not yet taken by the main thread, first in first out
//! (so a thread's calls run in the order it made them). Process-wide (one
//! runtime): whichever package's code services the main thread runs them.
class MainCallQueue {
public:
    //! Queues `c` and asks the main thread to come for it.
    void post(MainCall* c)
    {
        c->forkGeneration = engine::forkGeneration();
        c->next = nullptr;
        {
            std::lock_guard<std::mutex> lk(m_);
            (tail_ ? tail_->next : head_) = c;
            tail_ = c;
            size_.fetch_add(1, std::memory_order_relaxed);
        }
        engine::requestService();
    }
    //! The oldest call, or null. The main thread takes one at a time, so a
    //! call that waits in RcppSpool (and so is serviced) runs the later ones.
    MainCall* take()
    {
        if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
        std::lock_guard<std::mutex> lk(m_);
        for (;;) {
            MainCall* c = head_;
            if (!c) return nullptr;
            head_ = c->next;
            if (!head_) tail_ = nullptr;
            size_.fetch_sub(1, std::memory_order_relaxed);
            // A call queued by a thread of the parent before fork(): that
            // thread does not exist here, nor does anyone wait for it.
            if (c->forkGeneration == engine::currentForkGeneration()) return c;
        }
    }
    std::size_t size() const { return size_.load(std::memory_order_relaxed); }

private:
    std::mutex m_;
    MainCall* head_ = nullptr;  // guarded by m_
    MainCall* tail_ = nullptr;
    std::atomic<std::size_t> size_{0};
};

RCPPSPOOL_HIDDEN inline MainCallQueue& mainCalls()
{
    static MainCallQueue q;
    return q;
}

//! Hands `c` to the main thread (the runtime's queue).
inline void postToMainThread(MainCall* c) { mainCalls().post(c); }

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
