# The .Call() entry points of the package's compiled side (src/RcppSpool.cpp,
# which registers them). Internal: the exported functions check their input
# first.

testGlobal <- function() {
  .Call(`_RcppSpool_testGlobal`)
}

cpp_available_cores <- function() {
  .Call(`_RcppSpool_cpp_available_cores`)
}

cpp_default_threads <- function() {
  .Call(`_RcppSpool_cpp_default_threads`)
}

cpp_check_threads <- function(n) {
  .Call(`_RcppSpool_cpp_check_threads`, n)
}

cpp_default_threads_api <- function() {
  .Call(`_RcppSpool_cpp_default_threads_api`)
}

cpp_available_cores_api <- function() {
  .Call(`_RcppSpool_cpp_available_cores_api`)
}

cpp_is_forked_child <- function() {
  .Call(`_RcppSpool_cpp_is_forked_child`)
}

.spool_kendall <- function(x, pairwise, nThreads) {
  .Call(`_RcppSpool_spoolKendall`, x, pairwise, nThreads)
}

.spool_runtime_info <- function() {
  .Call(`_RcppSpool_runtimeInfo`)
}


.spool_global_pool_state <- function() {
  .Call(`_RcppSpool_globalPoolState`)
}

# The output matrix of issue 36 (src/output_cells.h) run by RcppSpool's own
# code; tests/testthat/test-output-matrix.R calls it.
.spool_output_cells <- function(services, kind, label, writers, lines) {
  .Call(`_RcppSpool_outputCells`, services, kind, label, writers, lines)
}

cpp_timeline_start <- function(events) {
  .Call(`_RcppSpool_timelineStart`, events)
}

cpp_timeline_running <- function() {
  .Call(`_RcppSpool_timelineRunning`)
}

cpp_timeline_stop <- function() {
  .Call(`_RcppSpool_timelineStop`)
}

cpp_timeline_write <- function(spans, threads, dropped, path) {
  .Call(`_RcppSpool_timelineWrite`, spans, threads, dropped, path)
}
