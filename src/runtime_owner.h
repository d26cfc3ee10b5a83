// The process's one runtime. This package's shared library owns the state
// that every package built against RcppSpool's headers shares (the global
// pool and its workers, the output queue, the interrupt flag, thread
// settings, what each thread runs) and serves it, as a table of function
// pointers, through R's registered C-callables: a client of the same ABI
// version (and standard library) finds it when it is loaded
// (inst/include/RcppSpool/host/r_runtime.h) and uses this state instead of
// its own. The package is compiled with RCPPSPOOL_RUNTIME_OWNER (Makevars),
// so that the state below is this library's own.
#pragma once

#include "r_values.h"

#include <RcppSpool/engine/lending.h>
#include <RcppSpool/runtime/table.h>

#include <R_ext/Rdynload.h>

#include <cstring>

namespace {

namespace rs = RcppSpool;
namespace rt = RcppSpool::engine::runtime;

void* state(int slot)
{
    switch (static_cast<rt::Slot>(slot)) {
    case rt::Slot::hostHooks: return &rs::engine::hostHooks();
    case rt::Slot::interruptFlag: return &rs::engine::interruptFlag();
    case rt::Slot::cancelEpoch: return rt::state<std::atomic<unsigned>, rt::Slot::cancelEpoch>();
    case rt::Slot::forkGeneration: return &rs::engine::forkGenerationCounter();
    case rt::Slot::globalPool: return &rs::ThreadPool::globalInstance();
    case rt::Slot::serviceRequests: return &rs::engine::serviceRequests();
    case rt::Slot::count: break;
    }
    return nullptr;
}

void* threadState(int slot)
{
    switch (static_cast<rt::ThreadSlot>(slot)) {
    case rt::ThreadSlot::frame: return &rs::engine::currentFrame();
    case rt::ThreadSlot::worker: return rt::threadState<rs::engine::Scheduler::WorkerTls, rt::ThreadSlot::worker>();
    case rt::ThreadSlot::outsideToken: return rt::threadState<char, rt::ThreadSlot::outsideToken>();
    case rt::ThreadSlot::count: break;
    }
    return nullptr;
}

const rt::Table runtimeTable{RCPPSPOOL_ABI_VERSION, sizeof(rt::Table), &state, &threadState};

}  // namespace

//! The C-callable "RcppSpool_runtime": the table for a client of ABI version
//! `abiVersion` whose standard library gives `fingerprint`, or null if this
//! runtime does not serve it (the client then keeps state of its own).
extern "C" const void* RcppSpool_runtime(unsigned abiVersion, const char* fingerprint)
{
    if (abiVersion != RCPPSPOOL_ABI_VERSION || !fingerprint) return nullptr;
    static const std::string mine = rt::fingerprint();
    return mine == fingerprint ? &runtimeTable : nullptr;
}

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
    static rs::engine::SchedulerLender lender(rs::ThreadPool::globalInstance().scheduler(), lentHostServices());
    return lender.table()->version >= minVersion ? lender.table() : nullptr;
}

//! The C-callable "RcppSpool_api": the runtime's entry points for clients
//! (inst/include/RcppSpool/client/api_table.h), if this runtime's table is
//! of version `minVersion` or later, else null. This signature never changes.
extern "C" const void* RcppSpool_api(unsigned minVersion)
{
    const rs::client::ApiTable& table = rs::runtime::apiTable();
    return table.version >= minVersion ? &table : nullptr;
}

namespace {

//! Serves the runtime to the packages loaded after this one.
void registerRuntime()
{
    R_RegisterCCallable("RcppSpool", "RcppSpool_api", reinterpret_cast<DL_FUNC>(&RcppSpool_api));
    R_RegisterCCallable("RcppSpool", "RcppSpool_runtime", reinterpret_cast<DL_FUNC>(&RcppSpool_runtime));
    R_RegisterCCallable("RcppSpool", "RcppSpool_lender", reinterpret_cast<DL_FUNC>(&RcppSpool_lender));
}

//! Whether a package's code uses the shared runtime (TRUE here: this is it).
SEXP runtimeInfo()
{
    return native::callFromR([] {
        return native::namedList({"abi", "fingerprint", "pool"}, [](std::size_t i) {
            switch (i) {
            case 0: return Rf_ScalarInteger(RCPPSPOOL_ABI_VERSION);
            case 1: return native::strings({rt::fingerprint()});
            default:
                return native::strings(
                    {std::to_string(reinterpret_cast<std::uintptr_t>(&rs::ThreadPool::globalInstance()))});
            }
        });
    });
}

}  // namespace
