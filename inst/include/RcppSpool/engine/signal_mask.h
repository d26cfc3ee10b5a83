// Threads that the library starts take no signals meant for the process.
#pragma once

#include "../abi.h"

#if !defined(_WIN32)
#include <pthread.h>
#include <signal.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! While it lives, the calling thread blocks the asynchronous signals, so
//! that the threads it starts meanwhile inherit that mask; the destructor
//! puts the caller's mask back.
//!
//! Why: the kernel delivers a signal sent to the process (SIGCHLD when a
//! child exits, SIGINT from the terminal, SIGPIPE, SIGUSR1) to any thread
//! that does not block it, and to another thread than the main one whenever
//! the main thread has one pending already. R's handlers for them are
//! written for R's main thread: parallel's SIGCHLD handler, run on a worker
//! while the main thread removed a child from the same list, crashed R in
//! `mclapply()`/future's `multicore` (seen once in a `make test` run: a
//! segfault in rmChild() while R collected four futures). Faults that a thread causes itself
//! (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) stay unblocked: they go
//! to the faulting thread whatever its mask, and blocked they would kill the
//! process without a handler. SIGABRT too (abort() unblocks it anyway).
class AsyncSignalsBlocked {
public:
    AsyncSignalsBlocked() noexcept
    {
#if !defined(_WIN32)
        sigset_t all;
        sigfillset(&all);
        for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT}) sigdelset(&all, s);
        changed_ = pthread_sigmask(SIG_BLOCK, &all, &saved_) == 0;
#endif
    }
    ~AsyncSignalsBlocked()
    {
#if !defined(_WIN32)
        if (changed_) pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
#endif
    }
    AsyncSignalsBlocked(const AsyncSignalsBlocked&) = delete;
    AsyncSignalsBlocked& operator=(const AsyncSignalsBlocked&) = delete;

private:
#if !defined(_WIN32)
    sigset_t saved_;
    bool changed_ = false;
#endif
};

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
