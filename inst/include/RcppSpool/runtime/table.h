// The table of entry points this runtime serves to clients (RcppSpool's
// shared library in R, the RCPPSPOOL_IMPLEMENTATION file in plain C++).
#pragma once

#include "../abi.h"

#include "../table/api_table.h"
#include "host_entries.h"
#include "loop_entries.h"
#include "task_entries.h"
#include "thread_counts.h"
#include "trace_entries.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace runtime {

//! The table this runtime serves: every entry of kApiVersion.
RCPPSPOOL_HIDDEN inline const table::ApiTable& apiTable() noexcept
{
    static const table::ApiTable table{table::kApiVersion, sizeof(table::ApiTable), &parallelFor, &availableCores,
                                        &defaultThreads, &write, &interrupted, &serviceMainThread,
                                        &postMainCall, &registerProgress,
                                        // version 3
                                        &poolCreate, &poolDestroy, &globalPool, &poolControl, &submit, &poolWait,
                                        &poolParallelFor, &prefersCallerRuns, &futureCompleted, &futureJoinOwn,
                                        &futureWait, &futureAbandon, &groupWait, &groupCancel, &groupCancelled,
                                        &groupClose, &currentWorkerIndex, &endBlockingCall,
                                        &interruptFlag, &lastMessage,
                                        // version 4
                                        &traceZoneBegin, &traceZoneEnd,
                                        // version 5
                                        &futureSubmit, &futureTakeBack};
    return table;
}

}  // namespace runtime
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
