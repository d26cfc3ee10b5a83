// How a shared object in R finds the process's one runtime: the RcppSpool
// package registers it as a C-callable; clients of the same ABI use it.
#pragma once

#include "../abi.h"

#include "r_api.h"

#include <R_ext/Rdynload.h>

#include "../engine/runtime.h"
#include "main_thread.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

#if defined(RCPPSPOOL_RUNTIME_OWNER)

//! The RcppSpool package itself (src/, compiled with RCPPSPOOL_RUNTIME_OWNER)
//! owns the runtime: its state is its own, and it serves it to the others
//! (src/runtime_owner.h).
inline const engine::runtime::Table* engine::runtime::findSharedTable() noexcept { return nullptr; }
//! It lends its workers; it borrows none.
inline const engine::ThreadLender* engine::runtime::findThreadLender() noexcept { return nullptr; }

#else

namespace host {
namespace runtime_detail {

//! What RcppSpool registers with R_RegisterCCallable("RcppSpool",
//! "RcppSpool_runtime", ...): given an ABI version and fingerprint, its table,
//! or null if it does not serve them. This signature never changes.
using GetRuntime = const void* (*)(unsigned abiVersion, const char* fingerprint);

inline void lookUp(void* out)
{
    *static_cast<GetRuntime*>(out) = reinterpret_cast<GetRuntime>(R_GetCCallable("RcppSpool", "RcppSpool_runtime"));
}

//! What RcppSpool (from ABI version 6 on) registers as "RcppSpool_lender": its
//! workers, lent through a ThreadLender of version `minVersion` or later,
//! or null. This signature never changes.
using GetLender = const void* (*)(unsigned minVersion);

inline void lookUpLender(void* out)
{
    *static_cast<GetLender*>(out) = reinterpret_cast<GetLender>(R_GetCCallable("RcppSpool", "RcppSpool_lender"));
}

//! Is RcppSpool's namespace loaded? Then asking for its C-callable is a
//! plain lookup, which R allows while it loads this shared object.
inline bool namespaceLoaded()
{
    return Rf_findVarInFrame(R_NamespaceRegistry, Rf_install("RcppSpool")) != R_UnboundValue;
}

}  // namespace runtime_detail
}  // namespace host

//! The shared runtime, when this shared object is loaded by R's main thread
//! while RcppSpool's namespace is loaded (a package with `Imports:
//! RcppSpool`, sourceCpp() with `Rcpp::depends(RcppSpool)`, or anything
//! loaded after library(RcppSpool)) and the installed RcppSpool serves this
//! ABI version (and standard library). Otherwise see findThreadLender().
inline const engine::runtime::Table* engine::runtime::findSharedTable() noexcept
{
    if (!host::isMainThread() || !host::runtime_detail::namespaceLoaded()) return nullptr;
    host::runtime_detail::GetRuntime get = nullptr;
    if (!R_ToplevelExec(host::runtime_detail::lookUp, &get) || !get) return nullptr;
    try {
        return static_cast<const Table*>(get(RCPPSPOOL_ABI_VERSION, fingerprint().c_str()));
    } catch (...) {
        return nullptr;
    }
}

//! Where RcppSpool is loaded but cannot share its state with this shared
//! object (it serves another ABI version), its workers: this shared object
//! then keeps the rest of its state (output queue, settings, what each
//! thread runs) but starts no thread, and its global pool borrows
//! RcppSpool's workers (see engine/thread_lender.h); it shares RcppSpool's
//! interrupt flag. Where RcppSpool lends nothing either (a version before
//! lending), this shared object keeps a pool of its own and says so once.
inline const engine::ThreadLender* engine::runtime::findThreadLender() noexcept
{
    if (!host::isMainThread() || !host::runtime_detail::namespaceLoaded()) return nullptr;
    const engine::ThreadLender* lender = nullptr;
    host::runtime_detail::GetLender get = nullptr;
    if (R_ToplevelExec(host::runtime_detail::lookUpLender, &get) && get)
        lender = static_cast<const engine::ThreadLender*>(get(1));
    if (!lender)
        REprintf("RcppSpool: a package was built against RcppSpool's headers of ABI version %d (%s), which "
                 "the installed RcppSpool neither serves nor lends its workers to; it uses threads of its own\n",
                 RCPPSPOOL_ABI_VERSION, fingerprint().c_str());
    return lender;
}

namespace host {
namespace runtime_detail {
// Decides at load time, on R's main thread, where R's API may be used.
RCPPSPOOL_HIDDEN inline const bool runtimeChosenAtLoad = (engine::runtime::threadLender(), true);
}  // namespace runtime_detail
}  // namespace host

#endif

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
