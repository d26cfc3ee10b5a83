// What the engine needs from its host (R, or plain C++): nothing else.
#pragma once

#include "../abi.h"

#include <atomic>
#include <exception>

#include "interrupt_error.h"
#include "parking.h"
#include "runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! The host is the program the engine runs in. In R, one thread (R's main
//! thread) must be kept responsive while it waits: it releases buffered output,
//! draws progress and polls for user interrupts. The engine calls `service`
//! on that thread, at least every `servicePeriodMs`, whenever it waits or runs
//! loop chunks. Plain C++ needs none of that: both hooks stay null.
struct HostHooks {
    bool (*isServiceThread)() = nullptr;  //!< true on the thread that must be serviced
    void (*service)() = nullptr;          //!< release output, poll interrupts, draw progress
    void (*afterBlockingCall)() = nullptr;  //!< a blocking call on the service thread ends
};

RCPPSPOOL_HIDDEN inline HostHooks& hostHooks() noexcept
{
    static HostHooks* const hooks = runtime::state<HostHooks, runtime::Slot::hostHooks>();
    return *hooks;
}

inline bool onServiceThread() noexcept
{
    auto f = hostHooks().isServiceThread;
    return f && f();
}

//! Work that wants the service thread soon, sooner than its next periodic
//! service (a call a worker hands to R's main thread): a flag the service
//! thread checks while it waits or runs loop chunks, and where it sleeps so
//! that a request wakes it. Process-wide: the service thread may be waiting
//! in any pool.
struct ServiceRequests {
    std::atomic<bool> pending{false};
    SleepList sleepers;  //!< the service thread, while it sleeps in a wait
};
RCPPSPOOL_HIDDEN inline ServiceRequests& serviceRequests() noexcept
{
    static ServiceRequests* const r = runtime::state<ServiceRequests, runtime::Slot::serviceRequests>();
    return *r;
}
//! Asks the service thread to call `service` soon, and wakes it if it sleeps.
inline void requestService() noexcept
{
    auto& r = serviceRequests();
    r.pending.store(true, std::memory_order_seq_cst);
    fenceAfterChange();
    r.sleepers.wakeAll();
}
//! True while a request waits (cleared by the host's service when it starts).
inline bool serviceRequested() noexcept { return serviceRequests().pending.load(std::memory_order_relaxed); }

//! Set by the host when the user asked to stop. Loops stop at their next
//! chunk, queued tasks are dropped, and the waiting call throws. Inline:
//! every task that runs asks (out of line, a call of 5 instructions a spawn).
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline std::atomic<bool>& interruptFlag() noexcept
{
    // A constant-initialized static's address: no guard, no load.
    return *runtime::state<std::atomic<bool>, runtime::Slot::interruptFlag>();
}
[[gnu::always_inline]] inline bool interruptRequested() noexcept
{
    return interruptFlag().load(std::memory_order_relaxed);
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
