// The runtime's table as this shared object found it (client/api.h).
#pragma once

#include "../abi.h"

#include <atomic>

#include "../table/api_table.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {
namespace api_detail {

//! The table, once found (process-wide for this shared object); null until then.
RCPPSPOOL_HIDDEN inline std::atomic<const table::ApiTable*>& cache() noexcept
{
    static std::atomic<const table::ApiTable*> table{nullptr};
    return table;
}

}  // namespace api_detail
}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
