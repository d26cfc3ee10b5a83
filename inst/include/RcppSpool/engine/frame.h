// Frame: what the current thread is running, for counting new work and for cancellation.
#pragma once

#include "../abi.h"

#include "context.h"
#include "runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

class Scheduler;

//! What the current thread is running: lets push() from inside a task count
//! the new work as that task's children, and wait() wait for exactly them.
//!
//! Every piece of work pushed from inside a task is counted, through its
//! children's context, in `counted`, and so on up to a context that somebody
//! outside waits for: the pool's root (wait()), a TaskGroup, a loop's owner.
//! That holds for tasks that are not counted themselves (loop tickets,
//! futures' tasks): they run with the `counted` of whoever started them, or
//! the root, never with nothing, or their children would be waited for by
//! nobody (RcppThread's defect 7: a nested ThreadPool::parallelFor without
//! an inner wait() still running when the outer wait() returned).
struct Frame {
    Scheduler* scheduler;
    Context* context;                  //!< what the work belongs to: cancellation, nested loops and groups
    Context* counted;                  //!< where what it pushes is counted (never null)
    Context* children;                 //!< made on the first push from this frame
    Frame* outer;                      //!< the frame this one interrupted (helping waits nest)
};

//! The calling thread's place in the engine: whose worker it is, and what
//! it runs. One thread-local record, not one for each: in a shared object
//! (RcppSpool's library in R) every thread-local access is a call of
//! __tls_get_addr (11 instructions), and a spawn asks for both (an async()
//! in an R client: 2 such calls fewer a spawn).
struct ThreadRecord {
    const Scheduler* scheduler = nullptr;  //!< the pool whose worker the thread is, or null
    void* worker = nullptr;                //!< that pool's Scheduler::Worker (see Scheduler::workerTls())
    Frame* frame = nullptr;                //!< the innermost frame, or null where it runs no task
};

//! The calling thread's record (the thread-local itself).
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline ThreadRecord& threadRecord() noexcept
{
    return *runtime::threadState<ThreadRecord, runtime::ThreadSlot::record>();
}

//! The current thread's innermost frame, or null where it runs no task.
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline Frame*& currentFrame() noexcept { return threadRecord().frame; }

//! The address of the current thread's frame slot, for a caller that sets
//! it around a call: g++ computed a thread-local's address again after
//! the call rather than keep it (in a shared object, a second call of
//! __tls_get_addr, 11 instructions, at every task); the empty asm hides
//! where the address came from, so it is kept.
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline Frame** currentFrameSlot() noexcept
{
    Frame** slot = &currentFrame();
#if defined(__GNUC__)
    asm("" : "+r"(slot));
#endif
    return slot;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
