// How a client reaches the host's services (R's console, the user's
// interrupt, R's main thread, progress drawing): through the runtime's table
// (table/api_table.h, version 2), so that the output queue, the unfinished
// lines, the main thread's queue and the progress registry are the runtime's
// alone, compiled once and laid out as it likes.
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>

#include "../engine/interrupt_error.h"
#include "../host/stream.h"
#include "api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "../engine/host_hooks.h"
#include "../runtime/host_entries.h"
#elif !defined(RCPPSPOOL_STANDALONE)
#include "../host/main_thread.h"
#include "../host/r_guarded.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

// Where the runtime is compiled in this file or in the program's
// implementation file, RCPPSPOOL_API() reaches it. An R package other than
// RcppSpool may not have it yet (LinkingTo only, a thread of its own before
// anything loaded RcppSpool): there the services that must not throw fall
// back on what the package can do alone.
#if !defined(RCPPSPOOL_RUNTIME_HERE) && !defined(RCPPSPOOL_STANDALONE)
#define RCPPSPOOL_RUNTIME_MAY_LACK 1
namespace host_detail {
//! The table if this shared object can have it now: found already, or
//! found (loading RcppSpool's namespace) on R's main thread; else null.
inline const table::ApiTable* tableIfAny() noexcept
{
    if (const table::ApiTable* t = api_detail::cache().load(std::memory_order_acquire)) return t;
    if (!host::isMainThread()) return nullptr;
    return api_detail::find(true);
}
}  // namespace host_detail
#endif

//! Hands text to the runtime (see ApiTable::write). Never throws. Text
//! written before this shared object has the runtime waits for it, in
//! whole lines (client/early_output.h).
inline void writeText(host::Stream s, const char* text, std::size_t size, int kind) noexcept
{
    const int stream = s == host::Stream::out ? 0 : 1;
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    if (const table::ApiTable* t = host_detail::tableIfAny()) {
        early_output::handOverMine(*t);
        return t->write(stream, text, size, kind);
    }
    early_output::keep(stream, text, size, kind);
#else
    RCPPSPOOL_API(write)(stream, text, size, kind);
#endif
}

//! Finds the runtime now where this thread may (R's main thread; it loads
//! RcppSpool's namespace if need be), so that a thread started next reaches
//! it from its first line: its text, interrupts and progress. Never throws.
inline void findRuntime() noexcept
{
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    host_detail::tableIfAny();
#endif
}

//! True on the thread that a blocking call must keep responsive and report
//! the user's interrupt on: R's main thread (no such thread without R).
inline bool onServiceThread() noexcept
{
#if defined(RCPPSPOOL_STANDALONE)
    return false;
#else
    return host::isMainThread();
#endif
}

//! The runtime's interrupt flag (ApiTable::interruptFlag). Until this
//! shared object can have the runtime (an R package with LinkingTo only,
//! asked on a thread of its own before anything loaded RcppSpool), a flag
//! of its own, never raised: no loop of the runtime runs for it then.
#if defined(RCPPSPOOL_RUNTIME_HERE)
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline std::atomic<bool>& interruptFlag() noexcept
{
    return engine::interruptFlag();
}
#else
namespace host_detail {
//! The runtime's flag once interruptFlag() found it.
RCPPSPOOL_HIDDEN inline std::atomic<std::atomic<bool>*> cachedInterruptFlag{nullptr};
//! interruptFlag()'s first call: finds the flag (out of line: the inline
//! part is a load and a test, asked at every task and deferred call).
[[gnu::noinline]] RCPPSPOOL_HIDDEN inline std::atomic<bool>& findInterruptFlag() noexcept
{
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    const table::ApiTable* t = host_detail::tableIfAny();
#else
    const table::ApiTable* t = &api();
#endif
    if (t) {
        auto* f = static_cast<std::atomic<bool>*>(t->interruptFlag());
        cachedInterruptFlag.store(f, std::memory_order_release);
        return *f;
    }
    static std::atomic<bool> none{false};
    return none;
}
}  // namespace host_detail
[[gnu::always_inline]] RCPPSPOOL_HIDDEN inline std::atomic<bool>& interruptFlag() noexcept
{
    if (std::atomic<bool>* f = host_detail::cachedInterruptFlag.load(std::memory_order_acquire)) return *f;
    return host_detail::findInterruptFlag();
}
#endif
//! True once the user interrupted, until it is reported (a load).
[[gnu::always_inline]] inline bool interruptRequested() noexcept
{
    return interruptFlag().load(std::memory_order_relaxed);
}

//! True once the user interrupted (see ApiTable::interrupted); `consume`:
//! it is being reported on the main thread.
inline bool interrupted(bool consume)
{
    const int how = consume ? 1 : 0;
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    const table::ApiTable* t = host_detail::tableIfAny();
    if (!t) {
        // No runtime yet: R itself is asked, on its main thread.
        return onServiceThread() && host::pollInterrupt();
    }
    return t->interrupted(how) != 0;
#else
    return RCPPSPOOL_API(interrupted)(how) != 0;
#endif
}

//! What R's main thread does while it waits (ApiTable::serviceMainThread):
//! release output, draw progress, poll the interrupt, run main-thread calls.
inline void serviceMainThread()
{
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    if (const table::ApiTable* t = host_detail::tableIfAny()) t->serviceMainThread(0);
#else
    RCPPSPOOL_API(serviceMainThread)(0);
#endif
}

//! Hands `call` to R's main thread (see ApiTable::postMainCall). Throws if
//! the runtime cannot be had (client/api.h says why).
inline void postMainCall(table::MainCall* call) { RCPPSPOOL_API(postMainCall)(call); }

//! Registers a progress object for R's main thread to draw, or unregisters
//! it (see ApiTable::registerProgress). Never throws: without the runtime
//! an object is not drawn while its thread waits, only when it counts on
//! R's main thread.
inline void registerProgress(bool add, void* self, table::DrawFn draw) noexcept
{
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    if (const table::ApiTable* t = host_detail::tableIfAny()) t->registerProgress(add ? 1 : 0, self, draw);
#else
    RCPPSPOOL_API(registerProgress)(add ? 1 : 0, self, draw);
#endif
}


}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
