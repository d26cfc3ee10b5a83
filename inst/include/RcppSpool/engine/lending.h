// The lending side of ThreadLender: a scheduler that serves its workers to
// schedulers built against other versions of these headers.
#pragma once

#include "../abi.h"

#include <cstddef>

#include "host_hooks.h"
#include "scheduler.h"
#include "task.h"
#include "thread_lender.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! Lends the workers of scheduler `s` (see ThreadLender). A borrower's
//! session is an uncounted task of `s`: it runs on a worker of `s` like any
//! task, is dropped with the rest of the queue on an interrupt, and no wait
//! for the work of `s` waits for it.
class SchedulerLender {
public:
    //! Lends the workers of `s`, and what `host` serves (nothing by default).
    explicit SchedulerLender(Scheduler& s, const ThreadLender::Host& host = ThreadLender::Host{}) noexcept
        : s_(s), table_{1, sizeof(ThreadLender), this, &lend, &interruptFlag(), host}
    {
    }
    SchedulerLender(const SchedulerLender&) = delete;
    SchedulerLender& operator=(const SchedulerLender&) = delete;

    //! The table to hand to borrowers; valid while this lender lives.
    const ThreadLender* table() const noexcept { return &table_; }

private:
    //! A borrower's unit as a task: 24 bytes, kept inline. It runs marked as
    //! lent, so that its worker is not the one chosen to stand aside for an
    //! outside thread (see Scheduler::standsAside()).
    struct Unit {
        LentRun run;
        void* arg;
        Scheduler* s;
        void operator()() const { s->runLentSession(run, arg); }
        void discard() const { run(arg, 1); }
    };
    static int lend(void* self, LentRun run, void* arg)
    {
        try {
            Scheduler& s = static_cast<SchedulerLender*>(self)->s_;
            s.submit(Task::make(Unit{run, arg, &s}, nullptr));
            return 0;
        } catch (...) {
            return 1;
        }
    }

    Scheduler& s_;
    ThreadLender table_;
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
