// The process's one runtime. This package's shared library owns the state
// of the process (the global pool and its workers, the output queue, the
// interrupt flag, thread settings, what each thread runs) and serves the
// runtime's entry points, as a versioned table of function pointers, through
// R's registered C-callables: clients built against these headers call it
// (inst/include/RcppSpool/client/api.h); packages built against headers
// before ABI 11 borrow its workers (RcppSpool_lender). The package is
// compiled with RCPPSPOOL_RUNTIME_OWNER (Makevars): the runtime is compiled
// here, once.
#pragma once

#include "r_values.h"

#include <RcppSpool/engine/lending.h>
#include <RcppSpool/runtime/table.h>

#include <R_ext/Rdynload.h>

#include <cstring>

namespace {

namespace rs = RcppSpool;

}  // namespace

//! The C-callable "RcppSpool_runtime": until ABI 10, the process-wide state
//! for clients of this runtime's ABI version, which ran inline copies of the
//! engine on it. Since ABI 11 clients use the table of "RcppSpool_api"
//! instead, and no client shares state: the answer is always null. Kept
//! registered for clients built against older headers, which ask it first
//! and then borrow the workers (RcppSpool_lender).
extern "C" const void* RcppSpool_runtime(unsigned, const char*) { return nullptr; }

namespace {

//! A borrower's call for the main thread, in this library's queue.
struct LentMainCall final : rs::host::MainCall {
    rs::engine::LentRun call;
    void* arg;
    LentMainCall(rs::engine::LentRun c, void* a) : call(c), arg(a)
    {
        run = [](rs::host::MainCall* m) { finish(m, 0); };
        cancel = [](rs::host::MainCall* m) { finish(m, 1); };
    }
    static void finish(rs::host::MainCall* m, int dropped)
    {
        auto* self = static_cast<LentMainCall*>(m);
        const rs::engine::LentRun c = self->call;
        void* a = self->arg;
        delete self;
        c(a, dropped);
    }
};

//! What this library serves borrowers besides its workers: its output queue
//! and its queue of calls for R's main thread, so that whichever package's
//! wait comes first on the main thread serves them.
rs::engine::ThreadLender::Host lentHostServices()
{
    rs::engine::ThreadLender::Host h{};
    h.deliverLines = [](void*, int stream, const char* text, std::size_t n) {
        rs::host::deliverLines(stream == 0 ? rs::host::Stream::out : rs::host::Stream::err, std::string(text, n));
    };
    h.releaseOutput = [](void*, int holdOut, int holdErr) { rs::host::releaseOutput(holdOut != 0, holdErr != 0); };
    h.postMainCall = [](void*, rs::engine::LentRun run, void* arg) {
        rs::host::mainCalls().post(new LentMainCall(run, arg));
    };
    h.runMainCalls = [](void*) { rs::host::runMainCalls(); };
    return h;
}

}  // namespace

//! The C-callable "RcppSpool_lender": for a package built against headers
//! of another ABI version (which cannot share the state above), the workers
//! of the global pool, lent through a ThreadLender table of version
//! `minVersion` or later (null if this runtime has none). This signature
//! never changes.
extern "C" const void* RcppSpool_lender(unsigned minVersion)
{
    static rs::engine::SchedulerLender lender(rs::runtime::Pool::global().scheduler(), lentHostServices());
    return lender.table()->version >= minVersion ? lender.table() : nullptr;
}

//! The C-callable "RcppSpool_api": the runtime's entry points for clients
//! (inst/include/RcppSpool/table/api_table.h), if this runtime's table is
//! of version `minVersion` or later, else null. This signature never changes.
extern "C" const void* RcppSpool_api(unsigned minVersion)
{
    const rs::table::ApiTable& table = rs::runtime::apiTable();
    return table.version >= minVersion ? &table : nullptr;
}

//! The C-callable "RcppSpool_version": this runtime's version
//! (RCPPSPOOL_VERSION_NUMBER, RcppSpool/version.h). A client built against
//! headers of version x uses the runtime only if it is x or later
//! (client/api.h). Since 0.11.0; this signature never changes.
extern "C" unsigned RcppSpool_version()
{
    return RCPPSPOOL_VERSION_NUMBER;
}

namespace {

//! Serves the runtime to the packages loaded after this one.
void registerRuntime()
{
    R_RegisterCCallable("RcppSpool", "RcppSpool_api", reinterpret_cast<DL_FUNC>(&RcppSpool_api));
    R_RegisterCCallable("RcppSpool", "RcppSpool_runtime", reinterpret_cast<DL_FUNC>(&RcppSpool_runtime));
    R_RegisterCCallable("RcppSpool", "RcppSpool_lender", reinterpret_cast<DL_FUNC>(&RcppSpool_lender));
    R_RegisterCCallable("RcppSpool", "RcppSpool_version", reinterpret_cast<DL_FUNC>(&RcppSpool_version));
}

//! What this runtime is: its ABI version, its table's version, its global pool.
SEXP runtimeInfo()
{
    return native::callFromR([] {
        return native::namedList({"abi", "api", "pool"}, [](std::size_t i) {
            switch (i) {
            case 0: return Rf_ScalarInteger(RCPPSPOOL_ABI_VERSION);
            case 1: return Rf_ScalarInteger(static_cast<int>(rs::table::kApiVersion));
            default:
                return native::strings(
                    {std::to_string(reinterpret_cast<std::uintptr_t>(&rs::runtime::Pool::global()))});
            }
        });
    });
}

//! The global pool as the runtime sees it (creating it if it was not yet
//! used): its workers, whether it was created before a fork (then
//! everything runs inline on the caller), and the fork generation. For the
//! fork tests.
SEXP globalPoolState()
{
    return native::callFromR([] {
        rs::engine::Scheduler& s = rs::runtime::Pool::global().scheduler();
        return native::namedList({"workers", "forked", "inline", "concurrency", "generation"}, [&](std::size_t i) {
            switch (i) {
            case 0: return Rf_ScalarInteger(static_cast<int>(s.numWorkers()));
            case 1: return Rf_ScalarLogical(s.forked());
            case 2: return Rf_ScalarLogical(s.inlineMode());
            case 3: return Rf_ScalarInteger(static_cast<int>(s.concurrency()));
            default: return Rf_ScalarInteger(static_cast<int>(rs::engine::forkGeneration()));
            }
        });
    });
}

}  // namespace
