// RcppSpool: R-friendly, fast work-stealing threads for C++17.
//
// Include this header (after Rcpp.h or cpp11.hpp, or alone: it needs only R's
// C API). Compile with -DRCPPSPOOL_STANDALONE for plain C++ without R.
// The API contract: ThreadPool, parallelFor/parallelForEach, push/pushReturn/
// async/wait, parallelReduce, TaskGroup, Future, Thread, Rcout/Rcerr,
// checkUserInterrupt/isInterrupted, ProgressCounter/ProgressBar,
// availableCores/defaultThreads.
#pragma once

#include "RcppSpool/output.h"  // picks the host (R or standalone) first

#include "RcppSpool/cores.h"
#include "RcppSpool/future.h"
#include "RcppSpool/interrupt.h"
#include "RcppSpool/parallel.h"
#include "RcppSpool/reduce.h"
#include "RcppSpool/task_group.h"
#include "RcppSpool/thread.h"
#include "RcppSpool/thread_pool.h"
