#' The number of threads used by default
#'
#' Pools and parallel loops that are not given a number of threads use
#' `getThreads()` threads: the value given to `setThreads()`, else the
#' option `RcppSpool.threads`, else the environment variable
#' `RCPPSPOOL_NUM_THREADS`, else 1 in a forked child (see below), else
#' [availableCores()]. This holds for the
#' compiled code of every package that uses the headers of this one
#' (`RcppSpool::defaultThreads()` in C++), whether or not it loads this
#' package.
#'
#' Allowed values are whole numbers from 0 to 1024: 0 means no worker threads
#' (everything runs on the calling thread), 1 means one thread in all (the
#' calling one). More threads than cores are allowed (for threads that mostly
#' wait). `NULL` means automatic.
#'
#' In a child created by `fork()` after the package was loaded (a worker of
#' `parallel::mclapply()`, of future's `multicore` plan or of
#' `parallel::makeForkCluster()`), the automatic value is 1: the children are
#' the parallelism, and `availableCores()` threads in each of them would
#' oversubscribe the machine. A pool that existed before the fork (such as
#' the global pool, once any parallel loop ran) runs everything on the
#' calling thread in the child whatever the setting, because its threads do
#' not exist there. See `vignette("cores-forks-clusters")`.
#'
#' A bad value given to `setThreads()` or set in the option is an error
#' naming the value; so is a bad option value when the count is next used (by
#' `getThreads()`, or by compiled code, which throws `std::invalid_argument`).
#' A bad value of the environment variable gives one warning and is ignored.
#'
#' @section Where the value is kept:
#' `setThreads()` keeps its value in the R option `RcppSpool.setThreads`
#' rather than only in a C++ variable. Packages that compile RcppSpool's
#' headers, have `Imports: RcppSpool` and were built against headers of the
#' ABI version the installed RcppSpool serves share one runtime, RcppSpool's
#' (one global pool, one setting); any other code (a package built against
#' another version, one with `LinkingTo` only, standalone C++) keeps its own
#' copy of every C++ variable (a package of another version still runs its
#' pool on RcppSpool's worker threads: its count bounds how many of them it
#' borrows at once). All of them read R's options (on R's main
#' thread; other threads use the value last read there), so `setThreads()`
#' applies in every package, in forked children, and after
#' `options(RcppSpool.threads = )` (which it takes precedence over).
#' It does not reach new R processes, such as PSOCK workers; use the
#' environment variable for those.
#'
#' @param n The number of threads: a whole number from 0 to 1024, or `NULL`
#'   to go back to automatic.
#' @return `getThreads()`: an integer. `setThreads()`: the value it replaces
#'   (`NULL` for automatic), invisibly.
#' @seealso [availableCores()].
#' @examples
#' getThreads()
#' old <- setThreads(2)
#' getThreads()
#' setThreads(old)
#'
#' # options work too, below setThreads():
#' op <- options(RcppSpool.threads = 1)
#' getThreads()
#' options(op)
#' @export
getThreads <- function() {
  res <- cpp_default_threads()
  for (w in res$warnings) warning(w, call. = FALSE)
  if (!is.null(res$error)) stop("getThreads(): ", res$error, call. = FALSE)
  res$count
}

#' @rdname getThreads
#' @export
setThreads <- function(n) {
  old <- getOption("RcppSpool.setThreads")
  if (!is.null(n)) {
    res <- cpp_check_threads(n)
    if (!is.null(res$error)) stop(res$error, call. = FALSE)
    n <- res$value
  }
  options(RcppSpool.setThreads = n)
  # Refreshes the value that this package's own threads see off the main
  # thread (other packages refresh theirs when their code next runs on it).
  # A bad option or variable now in charge is reported when the count is
  # used, as always; a warning about the variable is given here, once.
  res <- cpp_default_threads()
  for (w in res$warnings) warning(w, call. = FALSE)
  invisible(old)
}
