// The runtime's parallel loop, as clients call it (client/loop_call.h).
#pragma once

#include "../abi.h"

#include <cstddef>

#include "../table/api_table.h"
#include "../cores.h"
#include "../engine/loop.h"
#include "status.h"
#include "task_entries.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

//! ApiTable::parallelFor.
inline int parallelFor(std::ptrdiff_t begin, std::ptrdiff_t end, table::RangeFn body, void* self,
                       std::size_t nThreads, std::size_t nBatches, char* message, std::size_t messageSize)
{
    return guarded(message, messageSize, [&] {
        auto chunk = [body, self](std::ptrdiff_t b, std::ptrdiff_t e) {
            if (body(self, b, e) != 0) throw CallbackFailed{};
        };
        const std::size_t n = nThreads == table::kAutoThreads ? ::RcppSpool::defaultThreads() : nThreads;
        engine::blockingFor(Pool::global().scheduler(), begin, end, chunk, n, nBatches);
    });
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
