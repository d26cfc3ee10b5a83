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
    using DeliverLines = void (*)(void* self, int stream, const char* text, std::size_t n);
    using ReleaseOutput = void (*)(void* self, int holdOut, int holdErr);

    //! Lends the workers of `s`; the host's output queue, if given, takes
    //! the lines of the borrowers' threads (see ThreadLender).
    explicit SchedulerLender(Scheduler& s, DeliverLines deliver = nullptr, ReleaseOutput release = nullptr) noexcept
        : s_(s), table_{1, sizeof(ThreadLender), this, &threads, &lend, &interruptFlag(), deliver, release}
    {
    }
    SchedulerLender(const SchedulerLender&) = delete;
    SchedulerLender& operator=(const SchedulerLender&) = delete;

    //! The table to hand to borrowers; valid while this lender lives.
    const ThreadLender* table() const noexcept { return &table_; }

private:
    //! A borrower's unit as a task: 16 bytes, kept inline.
    struct Unit {
        LentRun run;
        void* arg;
        void operator()() const { run(arg, 0); }
        void discard() const { run(arg, 1); }
    };
    static std::size_t threads(void* self) { return static_cast<SchedulerLender*>(self)->s_.numWorkers(); }
    static int lend(void* self, LentRun run, void* arg)
    {
        try {
            static_cast<SchedulerLender*>(self)->s_.submit(Task::make(Unit{run, arg}, nullptr));
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
