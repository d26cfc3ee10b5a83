#' Number of cores, as RcppThread's detectCores()
#'
#' RcppThread's `detectCores()` returned the number of hardware threads.
#' RcppSpool's returns [availableCores()]: the cores this process may use
#' (affinity, cgroups, `mc.cores`, schedulers, CRAN's limits), which is what
#' code asking this question wants. Kept so migrated R code runs unchanged.
#'
#' @return An integer, named by the rule that decided it.
#' @export
#' @examples
#' detectCores()
detectCores <- function() availableCores()

# RcppThread's own test suite (tests/testthat/tests.R of its source) starts
# with RcppThread:::testGlobal() (src/rcppthread_entries.h) and runs only if
# RcppThread:::hasAtomicSupport(), which compiles a program with std::atomic.
# RcppSpool needs C++17, whose atomics every supported compiler has.
hasAtomicSupport <- function() TRUE
