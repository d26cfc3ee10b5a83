// RcppSpool: R-friendly, fast work-stealing threads for C++17.
//
// Include this header (after Rcpp.h or cpp11.hpp, or alone: it needs only R's
// C API). Compile with -DRCPPSPOOL_STANDALONE for plain C++ without R.
// The API contract: ThreadPool, parallelFor/parallelForEach, push/pushReturn/
// async/wait, parallelReduce, TaskGroup, Future, Thread, Rcout/Rcerr,
// checkUserInterrupt/isInterrupted, ProgressCounter/ProgressBar,
// PerThread/thisThreadIndex, onMainThread, Rng/rngSeed (random streams per index),
// availableCores/defaultThreads.
#pragma once

#if __cplusplus < 201703L
#error "RcppSpool needs C++17: CXX_STD = CXX17 in src/Makevars, cpp11::cpp_source(cxx_std = \"CXX17\"), or -std=c++17"
#endif

#include "RcppSpool/output.h"  // picks the host (R or standalone) first
#include "RcppSpool/version.h"  // RCPPSPOOL_VERSION_STRING: the package version of these headers

#include "RcppSpool/cores.h"
#include "RcppSpool/deferrable_future.h"
#include "RcppSpool/future.h"
#include "RcppSpool/interrupt.h"
#include "RcppSpool/on_main_thread.h"
#include "RcppSpool/parallel.h"
#include "RcppSpool/per_thread.h"
#include "RcppSpool/progress.h"
#include "RcppSpool/random.h"
#include "RcppSpool/rcppthread_names.h"
#include "RcppSpool/reduce.h"
#include "RcppSpool/rmatrix.h"
#include "RcppSpool/task_future.h"
#include "RcppSpool/task_group.h"
#include "RcppSpool/thread.h"
#include "RcppSpool/thread_pool.h"
#include "RcppSpool/timeline.h"
#include "RcppSpool/trace_zone.h"

// Last: RCPPSPOOL_OVERRIDE_COUT/CERR/THREAD (and RcppThread's RCPPTHREAD_OVERRIDE_*).
#include "RcppSpool/overrides.h"

// Plain C++ with the runtime compiled once: the file that defines
// RCPPSPOOL_IMPLEMENTATION compiles it, and its table (client/api.h).
#if defined(RCPPSPOOL_STANDALONE) && defined(RCPPSPOOL_SEPARATE_RUNTIME) && defined(RCPPSPOOL_IMPLEMENTATION)
#include "RcppSpool/runtime/table.h"
const RcppSpool::table::ApiTable& RcppSpool::client::separateRuntimeApi() noexcept
{
    return RcppSpool::runtime::apiTable();
}
#endif
