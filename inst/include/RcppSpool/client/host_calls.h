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

#if !defined(RCPPSPOOL_RUNTIME_HERE) && !defined(RCPPSPOOL_STANDALONE)
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

//! Hands text to the runtime (see ApiTable::write). Never throws. In a
//! package with LinkingTo only, text written by a thread of its own before
//! RcppSpool's namespace is loaded goes to the process's stdout or stderr.
inline void writeText(host::Stream s, const char* text, std::size_t size, int kind) noexcept
{
    const int stream = s == host::Stream::out ? 0 : 1;
#if defined(RCPPSPOOL_RUNTIME_HERE)
    runtime::write(stream, text, size, kind);
#elif defined(RCPPSPOOL_STANDALONE)
    api().write(stream, text, size, kind);
#else
    if (const ApiTable* t = host_detail::tableIfAny()) return t->write(stream, text, size, kind);
    std::fwrite(text, 1, size, stream == 0 ? stdout : stderr);
#endif
}

//! True once the user interrupted (see ApiTable::interrupted); `consume`:
//! it is being reported on the main thread.
inline bool interrupted(bool consume)
{
#if defined(RCPPSPOOL_RUNTIME_HERE)
    return runtime::interrupted(consume ? 1 : 0) != 0;
#elif defined(RCPPSPOOL_STANDALONE)
    return api().interrupted(consume ? 1 : 0) != 0;
#else
    // This shared object's flag is the runtime's, or (a package that keeps a
    // pool of its own: see host_detail::service()) raised from it.
    const ApiTable* t = host_detail::tableIfAny();
    const bool r = (t && t->interrupted(consume ? 1 : 0) != 0) || engine::interruptRequested();
    if (consume && host::isMainThread())
        engine::interruptFlag().store(false, std::memory_order_relaxed);
    else if (r)
        engine::interruptFlag().store(true, std::memory_order_relaxed);
    return r;
#endif
}

//! Hands `call` to R's main thread (see ApiTable::postMainCall). Throws if
//! the runtime cannot be had (client/api.h says why).
inline void postMainCall(MainCall* call)
{
#if defined(RCPPSPOOL_RUNTIME_HERE)
    runtime::postMainCall(call);
#else
    api().postMainCall(call);
#endif
}

//! Registers a progress object for R's main thread to draw, or unregisters
//! it (see ApiTable::registerProgress). Never throws: without the runtime
//! an object is not drawn while its thread waits, only when it counts on
//! R's main thread.
inline void registerProgress(bool add, void* self, DrawFn draw) noexcept
{
#if defined(RCPPSPOOL_RUNTIME_HERE)
    runtime::registerProgress(add ? 1 : 0, self, draw);
#elif defined(RCPPSPOOL_STANDALONE)
    api().registerProgress(add ? 1 : 0, self, draw);
#else
    if (const ApiTable* t = add ? host_detail::tableIfAny() : api_detail::cache().load(std::memory_order_acquire))
        t->registerProgress(add ? 1 : 0, self, draw);
#endif
}

#if !defined(RCPPSPOOL_RUNTIME_HERE) && !defined(RCPPSPOOL_STANDALONE)
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
