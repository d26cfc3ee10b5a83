#' Thread options for code migrated from RcppParallel
#'
#' RcppParallel's `setThreadOptions()` and `defaultNumThreads()`, for R code
#' of packages whose C++ moved to RcppSpool's compatibility header
#' (`#include <RcppSpool/RcppParallel.h>`, see
#' `vignette("migrating-from-rcppparallel")`). As RcppParallel's,
#' `setThreadOptions()` sets the environment variable
#' `RCPP_PARALLEL_NUM_THREADS`, which the header's `parallelFor()` and
#' `parallelReduce()` read when they are not given a thread count; `"auto"`
#' removes it, and the loops then use RcppSpool's default ([getThreads()]:
#' [setThreads()], the option `RcppSpool.threads`, or [availableCores()]).
#' Loops never use more threads than RcppSpool's global pool has workers,
#' plus the calling thread. RcppSpool's own functions ignore the variable:
#' use [setThreads()] for them.
#'
#' @param numThreads A whole number of threads (at least 1), or `"auto"`.
#' @param stackSize Accepted for compatibility and ignored: RcppSpool's
#'   workers use the system's default stack size. `"auto"` or a positive
#'   number.
#' @return `setThreadOptions()`: the previous value of
#'   `RCPP_PARALLEL_NUM_THREADS` (`NA` if unset), invisibly.
#'   `defaultNumThreads()`: the number of threads the compatibility header's
#'   loops use when given none.
#' @export
#' @examples
#' old <- setThreadOptions(numThreads = 2)
#' defaultNumThreads()
#' setThreadOptions("auto")
setThreadOptions <- function(numThreads = "auto", stackSize = "auto") {
  if (!identical(stackSize, "auto") &&
      !(is.numeric(stackSize) && length(stackSize) == 1 && !is.na(stackSize) && stackSize > 0)) {
    stop("stackSize must be \"auto\" or a positive number, not ", show_arg(stackSize), call. = FALSE)
  }
  old <- Sys.getenv("RCPP_PARALLEL_NUM_THREADS", NA_character_)
  if (identical(numThreads, "auto")) {
    Sys.unsetenv("RCPP_PARALLEL_NUM_THREADS")
  } else {
    if (!is_whole_number(numThreads, 1, 1024)) {
      stop("numThreads must be \"auto\" or a whole number from 1 to 1024, not ", show_arg(numThreads),
           call. = FALSE)
    }
    Sys.setenv(RCPP_PARALLEL_NUM_THREADS = format(as.integer(numThreads)))
  }
  invisible(old)
}

#' @rdname setThreadOptions
#' @export
defaultNumThreads <- function() {
  n <- suppressWarnings(as.integer(Sys.getenv("RCPP_PARALLEL_NUM_THREADS", "")))
  if (!is.na(n) && n > 0) n else as.integer(getThreads())
}
