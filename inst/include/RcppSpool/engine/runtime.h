// Where the process-wide state lives: in the one shared object that compiles
// the runtime (see client/api.h), one copy per process.
#pragma once

#include "../abi.h"

#include <type_traits>

#include "thread_local_object.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {
namespace runtime {

//! The pieces of process-wide state of the runtime: one global pool and its
//! workers, one interrupt flag, what each thread runs. (Until ABI 10 the
//! RcppSpool package served them to clients of its ABI version, which ran
//! inline copies of the engine on them; since ABI 11 clients reach the
//! runtime only through its table, table/api_table.h, and packages built
//! against older headers borrow its workers: thread_lender.h.)
enum class Slot : int {
    hostHooks,       //!< engine::HostHooks
    interruptFlag,   //!< std::atomic<bool>
    cancelEpoch,     //!< std::atomic<unsigned> (Context::cancelled()'s shortcut)
    forkGeneration,  //!< std::atomic<unsigned>
    globalPool,      //!< runtime::Pool
    serviceRequests, //!< engine::ServiceRequests (since ABI 3)
    trace,           //!< engine::trace::State (a timeline's recording)
    traceRecording,  //!< std::atomic<std::uint32_t> (nonzero while recording)
    count
};

//! The same for state of which each thread has its own.
enum class ThreadSlot : int {
    record,         //!< engine::ThreadRecord (whose worker the thread is, what it runs)
    outsideToken,   //!< char (the thread's identity among live threads)
    trace,          //!< engine::trace::detail::Holder (the thread's timeline buffer)
    count
};

//! The piece of state `S` of type T: one per shared object that compiles
//! the runtime (RcppSpool's library in R, the program in plain C++). Since
//! ABI 11 no other shared object shares it: a client reaches the runtime
//! through its table (table/api_table.h) and compiles none of this state.
template <class T, Slot S>
RCPPSPOOL_HIDDEN T* state()
{
    static T own;
    return &own;
}

//! The calling thread's piece of state `S` of type T (see state()).
template <class T, ThreadSlot S>
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline T* threadState()
{
    return threadLocalObject<T, std::integral_constant<ThreadSlot, S>>();
}

}  // namespace runtime
}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
