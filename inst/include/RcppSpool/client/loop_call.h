// A parallel loop as a client hands it to the runtime: the user's body
// packaged as an opaque unit (a function pointer and its storage).
#pragma once

#include "../abi.h"

#include <atomic>
#include <cstddef>
#include <exception>

#include "../engine/range_body.h"
#include "api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "../runtime/loop_entries.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

//! A loop body and the first exception it threw. What the runtime calls,
//! run(), is this header's code: the body is inlined into its chunk loop.
template <class F>
struct LoopBody {
    F& f;
    std::atomic<bool> failed{false};
    std::exception_ptr error;  //!< written once, by the first to fail; read after the loop

    explicit LoopBody(F& body) : f(body) {}

    static int run(void* self, std::ptrdiff_t b, std::ptrdiff_t e)
    {
        auto& me = *static_cast<LoopBody*>(self);
        try {
            engine::runChunk(me.f, b, e);
            return 0;
        } catch (...) {
            if (!me.failed.exchange(true, std::memory_order_acq_rel)) me.error = std::current_exception();
            return 1;
        }
    }
};

//! Runs `f(i)` for i in [begin, end) (or `f(b, e)` per chunk: see
//! engine::isRangeBody) through the runtime's parallelFor, and rethrows the
//! first exception of `f`, or what the runtime reported.
template <class F>
void parallelFor(std::ptrdiff_t begin, std::ptrdiff_t end, F& f, std::size_t nThreads, std::size_t nBatches)
{
    LoopBody<F> body(f);
    char message[256];
    message[0] = '\0';
    const int status =
        RCPPSPOOL_API(parallelFor)(begin, end, &LoopBody<F>::run, &body, nThreads, nBatches, message, sizeof message);
    if (status == table::kOk) return;
    if (status == table::kCallbackFailed && body.error) std::rethrow_exception(body.error);
    throwStatus(status, message);
}

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
