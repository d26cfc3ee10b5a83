// The runtime's pool: a scheduler, and what a ThreadPool's calls do with it.
// Clients hold it as an opaque handle (table/api_table.h) and never see
// its layout.
#pragma once

#include "../abi.h"

#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "../engine/loop.h"
#include "../engine/scheduler.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

//! A pool of workers: ThreadPool's state, behind its handle.
class Pool {
public:
    //! A pool of `nWorkers` workers (0 to 1024; 0 runs every task inline on
    //! the caller).
    explicit Pool(std::size_t nWorkers) : sched_(checkCount(nWorkers)) {}
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    //! The process-wide pool of the free functions (parallelFor, async, ...):
    //! defaultThreads() workers at first use (task_entries.h).
    RCPPSPOOL_HIDDEN static Pool& global();

    engine::Scheduler& scheduler() noexcept { return sched_; }

    //! Throws std::invalid_argument unless 0 <= n <= 1024.
    static std::size_t checkCount(std::size_t n)
    {
        if (n > 1024) throw std::invalid_argument("RcppSpool: a pool has 0 to 1024 workers, not " + std::to_string(n));
        return n;
    }

    //! Before new work: after join(), brings the workers back.
    void checkUsable()
    {
        if (joinedWorkers_ != 0) sched_.resize(std::exchange(joinedWorkers_, 0));
    }
    //! True after join() until checkUsable() brings the workers back.
    bool stoppedByJoin() const noexcept { return joinedWorkers_ != 0; }

    //! ThreadPool::setNumThreads().
    void setNumThreads(std::size_t n)
    {
        sched_.resize(checkCount(n));
        joinedWorkers_ = 0;
    }

    //! ThreadPool::join() after its wait(): the workers stop (after their
    //! running tasks) until new work brings them back.
    void stopWorkers()
    {
        if (joinedWorkers_ == 0) joinedWorkers_ = sched_.numWorkers();
        sched_.resize(0);
    }

    //! ThreadPool::wait() until `deadline`: false if it passed first. Throws
    //! the first error of the work waited for, or the user's interrupt.
    bool wait(std::chrono::steady_clock::time_point deadline)
    {
        engine::Scheduler& s = sched_;
        if (s.forked()) {
            // In a forked child everything ran inline; counts inherited from
            // the parent will never drop.
            engine::endBlockingCall(s.root().hasError() ? s.root().takeError() : nullptr);
            return true;
        }
        engine::Frame* f = engine::currentFrame();
        if (f && f->scheduler == &s) {
            // Inside one of our tasks: wait for what this task pushed, not for itself.
            engine::Context* c = f->children;
            if (!c) return true;
            if (!s.waitUntil(c, [c] { return c->pending() <= 1; }, deadline)) return false;
            if (c->hasError()) std::rethrow_exception(c->takeError());
            return true;
        }
        engine::Context& root = s.root();
        const bool service = engine::onServiceThread();
        bool finished = s.waitUntilDoneOrInterrupted(service, &root, [&] { return root.done(); }, deadline);
        if (service && engine::interruptRequested()) {
            s.dropQueued();
            s.waitUntil(&root, [&] { return root.done(); });
            root.takeError();  // superseded by the interrupt
            engine::endBlockingCall(nullptr);  // throws the interrupt
        }
        if (!finished) {
            engine::endBlockingCall(nullptr);
            return false;
        }
        engine::endBlockingCall(root.hasError() ? root.takeError() : nullptr);
        return true;
    }

private:
    engine::Scheduler sched_;
    std::size_t joinedWorkers_ = 0;  // workers to restart after join(), if any
};

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
