// Threads lent across versions: how a scheduler built against one version of
// these headers runs its work on the workers of a runtime built against
// another, without either knowing the other's layouts.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! A unit of work that crosses the boundary: a function and its argument,
//! nothing else. `run(arg, 0)` runs it; `run(arg, 1)` tells it that it was
//! dropped unrun (its lender stopped or was interrupted). Exactly one of the
//! two happens; `run` must not throw.
using LentRun = void (*)(void* arg, int dropped);

//! A runtime that lends its worker threads: a plain C table whose layout
//! never changes, whatever version of the headers built either side (new
//! entries go at the end, announced by `version` and `size`). The RcppSpool
//! package serves one (src/runtime_owner.h) to packages built against
//! headers of another ABI version: instead of starting threads of their
//! own, their global pool borrows the RcppSpool package's workers, one
//! scheduling session at a time (see Scheduler's lent workers). So the
//! process keeps one set of workers, and no more threads compute than it
//! has, whatever versions its packages were built against.
//!
//! A borrower checks `version` (the entries it needs exist from that version
//! on) and reads no entry beyond `size`; a later lender appends entries and
//! raises both, and serves its table to borrowers of every version.
struct ThreadLender {
    std::uint32_t version;  //!< 1
    std::uint32_t size;     //!< sizeof(ThreadLender) of the lender
    void* self;             //!< the lender's own state, passed back below
    //! Queues `run(arg, 0)` to run once on one of the lender's threads, soon.
    //! Returns 0, or nonzero if it could not be queued (then `run` is never
    //! called). Any thread.
    int (*lend)(void* self, LentRun run, void* arg);
    //! The lender's interrupt flag: a lock-free std::atomic<bool> (one byte,
    //! 0 or 1, in every C++ standard library), so that Ctrl-C stops the work
    //! of every package, whichever package's wait saw it.
    void* interruptFlag;
    //! What the lender's host serves besides its workers: its output queue
    //! and its queue of calls for the main thread. Each entry may be null.
    struct Host {
        //! Queues `n` bytes of complete lines for stream 0 (out) or 1 (err),
        //! written by a thread that may not write itself (in R: any thread
        //! but the main thread), in the lender's one output queue.
        void (*deliverLines)(void* self, int stream, const char* text, std::size_t n);
        //! On the thread that writes (R's main thread): writes what the
        //! lender's queue holds, except on a stream marked `hold` (its
        //! current line is unfinished).
        void (*releaseOutput)(void* self, int holdOut, int holdErr);
        //! Queues `run(arg, 0)` for the host's main thread (R's), in the
        //! order of the lender's own such calls, to run at its next service
        //! point in whichever package it waits; `run(arg, 1)` instead if an
        //! interrupt cancels it. Any thread.
        void (*postMainCall)(void* self, LentRun run, void* arg);
        //! On the main thread: runs (or, after an interrupt, cancels) the
        //! calls queued so far.
        void (*runMainCalls)(void* self);
    } host;
};

static_assert(sizeof(std::atomic<bool>) == 1 && std::atomic<bool>::is_always_lock_free,
              "the interrupt flag crosses libraries as one byte");

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
