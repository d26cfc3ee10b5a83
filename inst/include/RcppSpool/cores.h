// How many cores this process may use, and how many threads to use by
// default: the runtime's answers (runtime/thread_counts.h), through its table.
#pragma once

#include "abi.h"

#include <cstddef>

#include "client/api.h"
#if defined(RCPPSPOOL_RUNTIME_HERE)
#include "runtime/thread_counts.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! The number of cores this process may use: the minimum over the limits
//! that apply (the machine, cgroups v1/v2 cpusets and CPU quotas, the
//! affinity mask, the option `mc.cores` or variable MC_CORES, batch
//! schedulers' variables, R CMD check's _R_CHECK_LIMIT_CORES_, parallelly's
//! options...), by the rules of parallelly::availableCores(); the same as the
//! R function availableCores(). At least 1.
//!
//! Throws std::invalid_argument where the R function gives an error: when a
//! setting is invalid (a core count of zero or less, e.g.
//! SLURM_CPUS_PER_TASK=0, or a bad `parallelly.availableCores.min`). Rcpp and
//! cpp11 turn that into an R error.
//!
//! In R, RcppSpool's runtime answers (a package with `LinkingTo` only loads
//! RcppSpool's namespace at its first call on R's main thread: see
//! client/api.h).
inline std::size_t availableCores() { return client::count(RCPPSPOOL_API(availableCores)); }

//! The number of threads a pool or loop uses when no count is given: the
//! value of setThreads() (kept in the R option `RcppSpool.setThreads`), else
//! the option `RcppSpool.threads`, else the environment variable
//! RCPPSPOOL_NUM_THREADS, else 1 in a forked child (mclapply's children
//! share the cores already: a pool per child would oversubscribe them), else
//! availableCores(). From 0 (no worker threads:
//! everything runs on the calling thread) to 1024; the same as the R function
//! getThreads().
//!
//! Throws std::invalid_argument when an option holds a bad value (not a
//! whole number from 0 to 1024), as getThreads() gives an error. A bad
//! environment variable gives one warning and is ignored.
inline std::size_t defaultThreads() { return client::count(RCPPSPOOL_API(defaultThreads)); }

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
