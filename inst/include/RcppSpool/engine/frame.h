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

//! The current thread's innermost frame, or null where it runs no task.
//! The slot itself, not a pointer to it kept in another thread_local: one
//! thread-local access (in a shared object, two calls of __tls_get_addr
//! fewer at every spawn).
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline Frame*& currentFrame() noexcept
{
    return *runtime::threadState<Frame*, runtime::ThreadSlot::frame>();
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
