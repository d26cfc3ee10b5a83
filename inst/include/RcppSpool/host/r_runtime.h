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
//! ABI version. Otherwise this shared object keeps state of its own (its own
//! pool and workers, output queue, interrupt flag), and, where RcppSpool is
//! loaded but serves another version, says so once.
inline const engine::runtime::Table* engine::runtime::findSharedTable() noexcept
{
    if (!host::isMainThread() || !host::runtime_detail::namespaceLoaded()) return nullptr;
    host::runtime_detail::GetRuntime get = nullptr;
    if (!R_ToplevelExec(host::runtime_detail::lookUp, &get) || !get) {
        REprintf("RcppSpool: the installed RcppSpool package serves no runtime to packages; "
                 "this one uses threads of its own\n");
        return nullptr;
    }
    try {
        const void* table = get(RCPPSPOOL_ABI_VERSION, fingerprint().c_str());
        if (!table)
            REprintf("RcppSpool: a package was built against RcppSpool's headers of ABI version %d (%s), which "
                     "the installed RcppSpool does not serve; it uses threads of its own\n",
                     RCPPSPOOL_ABI_VERSION, fingerprint().c_str());
        return static_cast<const Table*>(table);
    } catch (...) {
        return nullptr;
    }
}

namespace host {
namespace runtime_detail {
// Decides at load time, on R's main thread, where R's API may be used.
RCPPSPOOL_HIDDEN inline const bool runtimeChosenAtLoad = (engine::runtime::sharedTable(), true);
}  // namespace runtime_detail
}  // namespace host

#endif

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
