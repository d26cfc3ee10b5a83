// A group of work that somebody may wait for: a counter, an error, a cancel flag.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>

#include "runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Counts the unfinished pieces of one group of work (a pool's outside
//! submissions, a TaskGroup, the children of one running task, a loop), keeps
//! the first exception thrown in it and cancels the rest once one is thrown.
//!
//! A Context made by the engine for the children of a running task is
//! "owned": it counts as one unit in its parent and deletes itself once it and
//! all its work have finished (see Scheduler::finish).
class Context {
public:
    explicit Context(Context* parent = nullptr, bool owned = false) noexcept
        : parent_(parent), owned_(owned)
    {}
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    //! Registers `n` more pieces of work; call before publishing them.
    void add(std::ptrdiff_t n = 1) noexcept { pending_.fetch_add(n, std::memory_order_relaxed); }
    //! One piece finished; returns how many are left.
    std::ptrdiff_t finishOne() noexcept { return pending_.fetch_sub(1, std::memory_order_acq_rel) - 1; }
    std::ptrdiff_t pending() const noexcept { return pending_.load(std::memory_order_acquire); }
    bool done() const noexcept { return pending() == 0; }

    //! Records `e` if it is the first error, and cancels what has not started.
    void fail(std::exception_ptr e) noexcept
    {
        {
            std::lock_guard<std::mutex> lk(errorMutex_);
            if (!error_) error_ = std::move(e);
        }
        hasError_.store(true, std::memory_order_release);
        cancel();
    }
    bool hasError() const noexcept { return hasError_.load(std::memory_order_acquire); }
    //! Takes the error out (the Context is clean afterwards) and lifts the cancellation.
    std::exception_ptr takeError() noexcept
    {
        std::lock_guard<std::mutex> lk(errorMutex_);
        std::exception_ptr e = std::move(error_);
        error_ = nullptr;
        hasError_.store(false, std::memory_order_relaxed);
        cancelled_.store(false, std::memory_order_release);
        return e;
    }

    void cancel() noexcept
    {
        cancelled_.store(true, std::memory_order_release);
        cancelEpoch().fetch_add(1, std::memory_order_acq_rel);
    }
    void uncancel() noexcept { cancelled_.store(false, std::memory_order_release); }

    //! Cancelled itself or through any enclosing context. Checked before every
    //! task, so the walk up the chain (as deep as the recursion) is skipped
    //! unless some context anywhere was cancelled since this one last looked.
    [[gnu::always_inline]] bool cancelled() const noexcept
    {
        if (cancelled_.load(std::memory_order_acquire)) return true;
        if (!parent_) return false;
        const unsigned epoch = cancelEpoch().load(std::memory_order_acquire);
        if (epoch == checkedEpoch_.load(std::memory_order_relaxed)) return false;
        for (const Context* c = parent_; c; c = c->parent_)
            if (c->cancelled_.load(std::memory_order_acquire)) return true;
        checkedEpoch_.store(epoch, std::memory_order_relaxed);
        return false;
    }

    Context* parent() const noexcept { return parent_; }
    bool owned() const noexcept { return owned_; }

private:
    alignas(64) std::atomic<std::ptrdiff_t> pending_{0};
    RCPPSPOOL_HIDDEN static std::atomic<unsigned>& cancelEpoch() noexcept
    {
        // Starts at 0, as checkedEpoch_: a context created before any
        // cancellation has nothing to look for.
        static std::atomic<unsigned>* const epoch =
            runtime::state<std::atomic<unsigned>, runtime::Slot::cancelEpoch>();
        return *epoch;
    }

    std::atomic<bool> cancelled_{false};
    mutable std::atomic<unsigned> checkedEpoch_{0};
    std::atomic<bool> hasError_{false};
    Context* parent_;
    bool owned_;
    std::mutex errorMutex_;
    std::exception_ptr error_;
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
