// Parallel loops over index ranges, split adaptively ("lazy binary splitting").
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "context.h"
#include "host_hooks.h"
#include "scheduler.h"

namespace RcppSpool {
namespace engine {

//! The shared state of one parallel loop over [begin, end).
//!
//! Whoever runs part of the loop (a "participant") walks its range in chunks.
//! Before each chunk it checks two things: whether the loop was cancelled (an
//! exception, the user's interrupt, an enclosing cancellation), and whether the
//! loop has no unclaimed piece left; if so it splits the rest of its range in
//! half and offers the upper half (and, if a participant may still join, a
//! ticket task tells the pool there is a piece to take). One piece is thus
//! always ready for the next participant that runs out of work, which takes it
//! at once instead of waiting for a busy one to reach its next chunk (with
//! iterations of milliseconds that wait cost 10% of an unbalanced loop). A
//! loop is split about as often as participants run out of work, not a fixed
//! number of times, and uneven iterations balance. At most maxParticipants
//! threads run the loop at a time.
//!
//! Chunks start at one iteration and double while a chunk takes less than
//! ~20 us, so checks cost nothing for cheap bodies while expensive bodies are
//! still cancelled between single iterations.
class LoopBase {
public:
    struct Range {
        std::ptrdiff_t begin, end;
    };

    LoopBase(Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t maxParticipants,
             std::size_t nBatches, Context* parentContext)
        : sched_(s),
          ctx_(parentContext),
          remaining_(end - begin),
          maxParticipants_(static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(maxParticipants, 1 << 20)))),
          minPiece_(nBatches == 0 ? 1 : std::max<std::ptrdiff_t>(1, (end - begin + static_cast<std::ptrdiff_t>(nBatches) - 1) / static_cast<std::ptrdiff_t>(nBatches)))
    {}
    virtual ~LoopBase() = default;

    //! Joins the loop, if fewer than maxParticipants run it, and runs pieces
    //! until none is left to claim.
    void participate()
    {
        while (admit()) {
            Range r;
            while (claim(r)) processAdmitted(r.begin, r.end);
            active_.fetch_sub(1, std::memory_order_seq_cst);
            // A piece offered while the loop was full has no ticket of its own
            // (see offer()): whoever leaves last takes it.
            if (unclaimed_.load(std::memory_order_seq_cst) == 0) return;
        }
    }

    //! Runs [begin, end) on this thread (which must not be running part of
    //! this loop already), offering halves to other threads.
    void process(std::ptrdiff_t b, std::ptrdiff_t e)
    {
        active_.fetch_add(1, std::memory_order_seq_cst);
        processAdmitted(b, e);
        active_.fetch_sub(1, std::memory_order_seq_cst);
    }

private:
    //! Takes a participant's place, if one is free.
    bool admit()
    {
        int a = active_.load(std::memory_order_seq_cst);
        do {
            if (a >= maxParticipants_) return false;
        } while (!active_.compare_exchange_weak(a, a + 1, std::memory_order_seq_cst));
        return true;
    }

    void processAdmitted(std::ptrdiff_t b, std::ptrdiff_t e)
    {
        const bool service = onServiceThread();
        std::ptrdiff_t grain = 1;
        auto lastService = std::chrono::steady_clock::now();
        while (b < e) {
            if (stopRequested()) {
                complete(e - b);
                break;
            }
            if (maxParticipants_ > 1 && e - b >= 2 * minPiece_ &&
                unclaimed_.load(std::memory_order_relaxed) == 0) {
                std::ptrdiff_t mid = b + std::max(minPiece_, (e - b) / 2);
                offer(Range{mid, e});
                e = mid;
            }
            const std::ptrdiff_t n = std::min(grain, e - b);
            const auto t0 = std::chrono::steady_clock::now();
            try {
                runRange(b, b + n);
            } catch (...) {
                ctx_.fail(std::current_exception());
            }
            b += n;
            complete(n);
            const auto t1 = std::chrono::steady_clock::now();
            if (t1 - t0 < std::chrono::microseconds(20) && grain < (std::ptrdiff_t(1) << 40)) grain *= 2;
            if (service && t1 - lastService >= Scheduler::kServicePeriod) {
                hostHooks().service();
                lastService = std::chrono::steady_clock::now();
            }
        }
    }

public:
    bool done() const { return remaining_.load(std::memory_order_acquire) == 0; }
    bool hasUnclaimed() const { return unclaimed_.load(std::memory_order_acquire) > 0; }
    bool stopRequested() const { return interruptRequested() || ctx_.cancelled(); }
    Context& context() { return ctx_; }

    void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release()
    {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

    //! Hands the whole range to the pool (for loops whose caller does not take part).
    void offerAll(std::ptrdiff_t begin, std::ptrdiff_t end) { offer(Range{begin, end}); }

protected:
    virtual void runRange(std::ptrdiff_t b, std::ptrdiff_t e) = 0;
    //! Called once, by whoever finishes the last iteration.
    virtual void onComplete() { sched_.notifyCompletion(); }

    Scheduler& sched_;

private:
    //! The task that brings a thread into the loop. Trivially copyable, so it
    //! travels inline; discarding it (pool destroyed) releases the loop.
    struct Ticket {
        LoopBase* loop;
        void operator()() const
        {
            loop->participate();
            loop->release();
        }
        void discard() const { loop->release(); }
    };

    void offer(Range r)
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            pieces_.push_back(r);
        }
        unclaimed_.fetch_add(1, std::memory_order_seq_cst);
        // A ticket only if another thread may join: with the loop full, the
        // piece waits for the first participant to run out of work (waking a
        // worker that could not join would only cost a futex call).
        if (active_.load(std::memory_order_seq_cst) >= maxParticipants_) return;
        retain();
        sched_.submit(Task::make(Ticket{this}, nullptr));
    }

    bool claim(Range& r)
    {
        if (unclaimed_.load(std::memory_order_acquire) == 0) return false;
        std::lock_guard<std::mutex> lk(m_);
        if (pieces_.empty()) return false;
        r = pieces_.back();
        pieces_.pop_back();
        unclaimed_.fetch_sub(1, std::memory_order_relaxed);
        return true;
    }

    void complete(std::ptrdiff_t n)
    {
        if (n > 0 && remaining_.fetch_sub(n, std::memory_order_acq_rel) == n) onComplete();
    }

    Context ctx_;  // errors and cancellation of this loop (child of the caller's)
    std::atomic<int> refs_{1};
    std::atomic<std::ptrdiff_t> remaining_;
    alignas(64) std::atomic<int> unclaimed_{0};
    std::atomic<int> active_{0};
    const int maxParticipants_;
    const std::ptrdiff_t minPiece_;
    std::mutex m_;
    std::vector<Range> pieces_;
};

//! A loop calling `f(i)` for each index.
template <class F>
class IndexLoop : public LoopBase {
public:
    template <class G>
    IndexLoop(G&& f, Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t maxParticipants,
              std::size_t nBatches, Context* parent)
        : LoopBase(s, begin, end, maxParticipants, nBatches, parent), f_(std::forward<G>(f))
    {}

protected:
    void runRange(std::ptrdiff_t b, std::ptrdiff_t e) override
    {
        for (std::ptrdiff_t i = b; i < e; ++i) f_(i);
    }

private:
    F f_;
};

//! A loop that nobody blocks on (ThreadPool::parallelFor): it counts as one
//! unit in the context of whoever started it and reports its error there.
template <class F>
class DetachedLoop final : public IndexLoop<F> {
public:
    template <class G>
    DetachedLoop(G&& f, Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t nBatches, Context* owner)
        : IndexLoop<F>(std::forward<G>(f), s, begin, end, s.inlineMode() ? 1 : s.numWorkers(), nBatches, owner),
          owner_(owner)
    {}

protected:
    void onComplete() override
    {
        if (this->context().hasError()) owner_->fail(this->context().takeError());
        this->sched_.finish(owner_);
    }

private:
    Context* owner_;
};

//! Ends a blocking call: on the host's service thread, lets the host finish
//! (release output) and turns a pending interrupt into UserInterruptException,
//! clearing it; otherwise rethrows `error`, if any.
inline void endBlockingCall(std::exception_ptr error)
{
    if (onServiceThread()) {
        if (auto after = hostHooks().afterBlockingCall) after();
        if (interruptRequested()) {
            interruptFlag().store(false, std::memory_order_relaxed);
            std::rethrow_exception(interruptError());
        }
    }
    if (error) std::rethrow_exception(error);
}

//! Runs `f(i)` for i in [begin, end) on the calling thread and up to
//! `nThreads - 1` workers of `s`, and returns when all iterations are done.
//! Rethrows the first exception of `f`; throws UserInterruptException when
//! the host reported an interrupt.
template <class F>
void blockingFor(Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, F& f, std::size_t nThreads,
                 std::size_t nBatches)
{
    if (end <= begin) return endBlockingCall(nullptr);
    const std::size_t participants = std::max<std::size_t>(1, std::min(nThreads, s.concurrency()));
    auto* loop = new IndexLoop<F&>(f, s, begin, end, participants, nBatches, Scheduler::enclosingContext());
    struct Releaser {
        LoopBase* l;
        ~Releaser() { l->release(); }
    } releaser{loop};
    loop->process(begin, end);
    for (;;) {
        loop->participate();
        if (loop->done()) break;
        s.waitUntil([&] { return loop->done() || loop->hasUnclaimed(); });
    }
    endBlockingCall(loop->context().hasError() ? loop->context().takeError() : nullptr);
    if (interruptRequested()) std::rethrow_exception(interruptError());  // cut short on a nested level
}

}  // namespace engine
}  // namespace RcppSpool
