// Where a client finds the runtime's table (table/api_table.h), and how it
// turns the table's statuses back into exceptions.
//
//   - In R, a package other than RcppSpool asks RcppSpool's shared library
//     for it (the C-callable "RcppSpool_api"): when it is loaded, if
//     RcppSpool's namespace is loaded then (`Imports: RcppSpool`), else at
//     its first call from R's main thread, which loads RcppSpool's namespace
//     (a package with `LinkingTo` only). A first call from another thread
//     before that is an error that says what to add.
//   - RcppSpool's own shared library (RCPPSPOOL_RUNTIME_OWNER) is the
//     runtime: its calls go to the entry points directly.
//   - In plain C++ (RCPPSPOOL_STANDALONE), by default the runtime is compiled
//     inline where it is used (header-only), called directly. With
//     RCPPSPOOL_SEPARATE_RUNTIME defined for every file of the program, one
//     file defines RCPPSPOOL_IMPLEMENTATION before it includes
//     <RcppSpool.h>, and the runtime is compiled there only; the others
//     call it through its table.
#pragma once

#include "../abi.h"
#include "../version.h"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "../engine/interrupt_error.h"
#include "../table/api_table.h"

#if (defined(RCPPSPOOL_STANDALONE) && !defined(RCPPSPOOL_SEPARATE_RUNTIME)) || defined(RCPPSPOOL_RUNTIME_OWNER)
//! The runtime is compiled in this file: the public API calls its entry
//! points directly (the headers that need them include runtime/*.h).
#define RCPPSPOOL_RUNTIME_HERE 1
#endif

//! The runtime's entry point `entry` (a member of ApiTable): the function
//! itself where the runtime is compiled in this file, else the table's.
#if defined(RCPPSPOOL_RUNTIME_HERE)
#define RCPPSPOOL_API(entry) (&::RcppSpool::runtime::entry)
#else
#define RCPPSPOOL_API(entry) (::RcppSpool::client::api().entry)
#endif

#if !defined(RCPPSPOOL_STANDALONE) && !defined(RCPPSPOOL_RUNTIME_OWNER)
#include <R_ext/Rdynload.h>

#include "../host/main_thread.h"
#include "../host/r_api.h"
#include "../host/r_runtime.h"
#include "early_output.h"
#include "table_cache.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

#if defined(RCPPSPOOL_STANDALONE) && defined(RCPPSPOOL_SEPARATE_RUNTIME)

//! The runtime's table, defined in the program's one file that defines
//! RCPPSPOOL_IMPLEMENTATION (at the end of RcppSpool.h).
const table::ApiTable& separateRuntimeApi() noexcept;
//! The runtime's table.
inline const table::ApiTable& api() { return separateRuntimeApi(); }

#elif defined(RCPPSPOOL_RUNTIME_HERE)

// No table needed: RCPPSPOOL_API() calls the entry points.

#else

namespace api_detail {

//! What RcppSpool registers as "RcppSpool_api": its table if it is of
//! version `minVersion` or later, else null. This signature never changes.
using GetApi = const void* (*)(unsigned minVersion);

inline void lookUp(void* out)
{
    *static_cast<GetApi*>(out) = reinterpret_cast<GetApi>(R_GetCCallable("RcppSpool", "RcppSpool_api"));
}

//! What RcppSpool registers as "RcppSpool_version" (since 0.11.0): the
//! runtime's RCPPSPOOL_VERSION_NUMBER. This signature never changes.
using GetVersion = unsigned (*)();

inline SEXP lookUpVersion(void* out)
{
    *static_cast<GetVersion*>(out) =
        reinterpret_cast<GetVersion>(reinterpret_cast<void (*)()>(R_GetCCallable("RcppSpool", "RcppSpool_version")));
    return R_NilValue;
}

inline SEXP noVersion(SEXP, void*) { return R_NilValue; }

//! The runtime's version number, or 0 when it has none to give (a runtime
//! older than 0.11.0, whose missing C-callable is an R error, caught
//! silently). RcppSpool's namespace is loaded.
inline unsigned runtimeVersion() noexcept
{
    GetVersion get = nullptr;
    R_tryCatchError(lookUpVersion, &get, noVersion, nullptr);
    return get ? get() : 0;
}

inline void loadNamespace(void*)
{
    SEXP call = PROTECT(Rf_lang2(Rf_install("loadNamespace"), Rf_mkString("RcppSpool")));
    Rf_eval(call, R_GlobalEnv);
    UNPROTECT(1);
}

//! RcppSpool's table, asked on R's main thread; loads RcppSpool's namespace
//! first when `mayLoad`. Null if it cannot be had.
inline const table::ApiTable* find(bool mayLoad) noexcept
{
    if (!host::runtime_detail::namespaceLoaded() && (!mayLoad || !R_ToplevelExec(loadNamespace, nullptr)))
        return nullptr;
    // A runtime older than these headers is not used, even if its table
    // has every entry they know: the package asks for the version it was
    // built with, as its DESCRIPTION does (`Imports: RcppSpool (>= x)`).
    if (runtimeVersion() < static_cast<unsigned>(RCPPSPOOL_VERSION_NUMBER)) return nullptr;
    GetApi get = nullptr;
    if (!R_ToplevelExec(lookUp, &get) || !get) return nullptr;
    const auto* table = static_cast<const table::ApiTable*>(get(table::kApiVersion));
    if (!table) return nullptr;
    cache().store(table, std::memory_order_seq_cst);
    // What this package's threads wrote before (see early_output::keep()).
    if (early_output::HandOver handOver = early_output::handOverHook.load(std::memory_order_seq_cst)) handOver(*table);
    return table;
}

// At load time, on R's main thread: the table, if RcppSpool's namespace is
// loaded already (R code never runs inside dlopen()).
RCPPSPOOL_HIDDEN inline const bool foundAtLoad = (host::isMainThread() && find(false), true);

//! The installed RcppSpool's version into `out` (R's main thread): its
//! namespace's if loaded, else its DESCRIPTION's; empty if neither can be had.
inline void installedVersion(bool loaded, char* out, std::size_t size)
{
    out[0] = '\0';
    SEXP which = loaded ? Rf_install("getNamespaceVersion")
                        : Rf_lang3(Rf_install("::"), Rf_install("utils"), Rf_install("packageVersion"));
    PROTECT(which);
    SEXP inner = PROTECT(Rf_lang2(which, Rf_mkString("RcppSpool")));
    SEXP call = PROTECT(Rf_lang2(Rf_install("as.character"), inner));
    int failed = 0;
    SEXP value = R_tryEvalSilent(call, R_BaseEnv, &failed);
    if (!failed && TYPEOF(value) == STRSXP && XLENGTH(value) >= 1 && STRING_ELT(value, 0) != NA_STRING)
        std::snprintf(out, size, "%s", CHAR(STRING_ELT(value, 0)));
    UNPROTECT(3);
}

//! Why the table cannot be had (R's main thread, after find() failed),
//! thrown: the error names the version this package was built with and the
//! one installed. Formatted into buffers, out of line: every client file
//! compiles it, and as std::string concatenations it took 4 KB of code
//! in each object.
[[noreturn, gnu::noinline, gnu::cold]] inline void throwTooOld()
{
    const bool loaded = host::runtime_detail::namespaceLoaded();
    char installed[64];
    installedVersion(loaded, installed, sizeof installed);
    char why[160];
    if (loaded)
        std::snprintf(why, sizeof why, "the installed RcppSpool is %s, older than that",
                      installed[0] ? installed : "of an unknown version");
    else if (installed[0])
        std::snprintf(why, sizeof why, "the installed RcppSpool %s could not be loaded", installed);
    else
        std::snprintf(why, sizeof why, "RcppSpool is not installed or could not be loaded");
    char message[512];
    std::snprintf(message, sizeof message,
                  "RcppSpool: this package was built with RcppSpool %s (runtime table version %u), but %s; "
                  "install RcppSpool %s or later",
                  RCPPSPOOL_VERSION_STRING, static_cast<unsigned>(table::kApiVersion), why, RCPPSPOOL_VERSION_STRING);
    throw std::runtime_error(message);
}

}  // namespace api_detail

namespace api_detail {
//! api() before the table is known (out of line: once per shared object).
[[gnu::noinline, gnu::cold]] inline const table::ApiTable& firstApi()
{
    if (const table::ApiTable* t = cache().load(std::memory_order_acquire)) return *t;
    if (!host::isMainThread())
        throw std::runtime_error(
            "RcppSpool: this package first called RcppSpool's runtime (a parallel loop, defaultThreads()) from a "
            "thread other than R's main thread, before RcppSpool's namespace was loaded; add RcppSpool to Imports "
            "in the package's DESCRIPTION (and importFrom(RcppSpool, availableCores) to NAMESPACE), or call "
            "loadNamespace(\"RcppSpool\") first");
    if (const table::ApiTable* t = find(true)) return *t;
    throwTooOld();
}
}  // namespace api_detail

//! The runtime's table: RcppSpool's, found when this shared object was
//! loaded or at the first call on R's main thread. Throws
//! std::runtime_error when it cannot be had: off the main thread before
//! RcppSpool's namespace is loaded, or when the installed RcppSpool is older
//! than these headers (the error names both versions). Always inline, the
//! load only: every call of the runtime asks (as a call, 8 instructions
//! each, three times a spawn of async() in an R client).
[[gnu::always_inline]] inline const table::ApiTable& api()
{
    if (const table::ApiTable* t = api_detail::cache().load(std::memory_order_acquire)) return *t;
    return api_detail::firstApi();
}

#endif

//! Throws what `status` (not kOk) reports: the user's interrupt as
//! UserInterruptException, kInvalidArgument as std::invalid_argument,
//! kLogicError as std::logic_error, the rest as std::runtime_error, with
//! `message`.
[[noreturn]] inline void throwStatus(int status, const char* message)
{
    if (status == table::kInterrupted) std::rethrow_exception(engine::interruptError());
    if (status == table::kInvalidArgument) throw std::invalid_argument(message);
    if (status == table::kLogicError) throw std::logic_error(message);
    throw std::runtime_error(message[0] ? message : "RcppSpool: a parallel call failed");
}

//! The count an entry point such as ApiTable::defaultThreads gives, or what
//! it reports thrown.
inline std::size_t count(int (*entry)(std::size_t*, char*, std::size_t))
{
    std::size_t n = 0;
    char message[256];
    message[0] = '\0';
    const int status = entry(&n, message, sizeof message);
    if (status != table::kOk) throwStatus(status, message);
    return n;
}

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
