// How a client reaches the host's services (R's console, the user's
// interrupt, R's main thread, progress drawing): through the runtime's table
// (client/api_table.h, version 2), so that the output queue, the unfinished
// lines, the main thread's queue and the progress registry are the runtime's
// alone, compiled once and laid out as it likes.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdio>

#include "../engine/host_hooks.h"
#include "../host/stream.h"
#include "api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
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
inline const ApiTable* tableIfAny() noexcept
{
    if (const ApiTable* t = api_detail::cache().load(std::memory_order_acquire)) return t;
    if (!host::isMainThread()) return nullptr;
    return api_detail::find(true);
}
}  // namespace host_detail
#endif

//! Hands text to the runtime (see ApiTable::write). Never throws. Without
//! the runtime the text goes to the process's stdout or stderr.
inline void writeText(host::Stream s, const char* text, std::size_t size, int kind) noexcept
{
    const int stream = s == host::Stream::out ? 0 : 1;
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    if (const ApiTable* t = host_detail::tableIfAny()) return t->write(stream, text, size, kind);
    std::fwrite(text, 1, size, stream == 0 ? stdout : stderr);
#else
    RCPPSPOOL_API(write)(stream, text, size, kind);
#endif
}

//! True once the user interrupted (see ApiTable::interrupted); `consume`:
//! it is being reported on the main thread.
inline bool interrupted(bool consume)
{
    const int how = consume ? 1 : 0;
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    const ApiTable* t = host_detail::tableIfAny();
    const bool asked = t && t->interrupted(how) != 0;
#else
    const bool asked = RCPPSPOOL_API(interrupted)(how) != 0;
#endif
    // This shared object's flag is the runtime's, or (a package that keeps a
    // pool of its own: see host_detail::service()) raised from it.
    const bool r = asked || engine::interruptRequested();
    if (consume && engine::onServiceThread())
        engine::interruptFlag().store(false, std::memory_order_relaxed);
    else if (r)
        engine::interruptFlag().store(true, std::memory_order_relaxed);
    return r;
}

//! Hands `call` to R's main thread (see ApiTable::postMainCall). Throws if
//! the runtime cannot be had (client/api.h says why).
inline void postMainCall(MainCall* call) { RCPPSPOOL_API(postMainCall)(call); }

//! Registers a progress object for R's main thread to draw, or unregisters
//! it (see ApiTable::registerProgress). Never throws: without the runtime
//! an object is not drawn while its thread waits, only when it counts on
//! R's main thread.
inline void registerProgress(bool add, void* self, DrawFn draw) noexcept
{
#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
    if (const ApiTable* t = host_detail::tableIfAny()) t->registerProgress(add ? 1 : 0, self, draw);
#else
    RCPPSPOOL_API(registerProgress)(add ? 1 : 0, self, draw);
#endif
}

#if defined(RCPPSPOOL_RUNTIME_MAY_LACK)
namespace host_detail {

// A package that shares the runtime's state uses the runtime's own host
// hooks. One that does not (its headers are of another ABI version, and it
// borrows the runtime's workers; or it has LinkingTo only and was loaded
// before RcppSpool) keeps a pool of its own whose waits on R's main thread
// call these: the runtime's service, through the table, and this shared
// object's interrupt flag raised from the runtime's.

inline void service()
{
    if (const ApiTable* t = tableIfAny()) {
        if (t->interrupted(0)) engine::interruptFlag().store(true, std::memory_order_relaxed);
    } else if (host::pollInterrupt()) {
        engine::interruptFlag().store(true, std::memory_order_relaxed);
    }
}

inline void afterBlockingCall()
{
    const ApiTable* t = tableIfAny();
    if (!t) return;
    t->serviceMainThread(1);
    // The call ends with the interrupt (engine::endBlockingCall()): the
    // runtime's flag, if it is not this one, is reported too.
    if (engine::interruptRequested() && !engine::runtime::threadLender()) t->interrupted(1);
}

RCPPSPOOL_HIDDEN inline const bool hooksInstalled = [] {
    if (engine::runtime::sharedTable()) return true;
    auto& h = engine::hostHooks();
    h.isServiceThread = &host::isMainThread;
    h.service = &service;
    h.afterBlockingCall = &afterBlockingCall;
    return true;
}();

}  // namespace host_detail
#endif

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
