#' The number of cores this process may use
#'
#' The cores R and the threads of this package may use: the smallest of the
#' limits that apply to the process, named by the rule that decided it. The
#' rules are those of `parallelly::availableCores()` (version 1.34), written
#' anew in C++ (`RcppSpool::availableCores()` in the headers), so that
#' compiled code of any package gives the same answer without calling R.
#'
#' @section Rules:
#' Each rule (a "method", in this order) gives a count or does not apply:
#' \describe{
#'   \item{`system`}{the processors of the machine, as
#'     `parallel::detectCores()` counts them (or the option
#'     `parallelly.availableCores.system`).}
#'   \item{`cgroups.cpuset`}{the CPUs of the process's cgroup cpuset (v1
#'     `cpuset.cpus`; with cgroups v2 only, `cpuset.cpus.effective`).}
#'   \item{`cgroups.cpuquota`, `cgroups2.cpu.max`}{a cgroup v1 CFS quota
#'     (`cpu.cfs_quota_us / cpu.cfs_period_us`) or v2 `cpu.max`, rounded to
#'     whole cores, at least 1 (containers started with `--cpus`).}
#'   \item{`nproc`}{the CPUs in the affinity mask (`taskset`, `numactl`,
#'     batch schedulers' binding).}
#'   \item{`mc.cores`}{the option `mc.cores` (0 counts as 1), or, when it is
#'     unset, the environment variable `MC_CORES`.}
#'   \item{`BiocParallel`}{`BIOCPARALLEL_WORKER_NUMBER`.}
#'   \item{`_R_CHECK_LIMIT_CORES_`}{2 when `R CMD check` limits cores
#'     (the variable is set and not `"false"`).}
#'   \item{`Bioconductor`}{4 when `IS_BIOC_BUILD_MACHINE` or `BBS_HOME` is
#'     `"true"`.}
#'   \item{`LSF`, `PJM`, `PBS`, `SGE`, `Slurm`}{`LSB_DJOB_NUMPROC`;
#'     `PJM_VNODE_CORE` or `PJM_PROC_BY_NODE`; `PBS_NUM_PPN` or `NCPUS`;
#'     `NSLOTS`; `SLURM_CPUS_PER_TASK`, else `SLURM_CPUS_ON_NODE` (one node)
#'     or this node's count in `SLURM_TASKS_PER_NODE` (several).}
#'   \item{`fallback`}{the option `parallelly.availableCores.fallback`: used
#'     instead of the machine's own counts when no other rule applies and
#'     neither cgroups nor the affinity mask limit the process.}
#' }
#' A count of zero or less is an error. The option
#' `parallelly.availableCores.methods` chooses the rules (any other name is
#' read as an option, else an environment variable, of that name);
#' `parallelly.availableCores.min` raises the result to a minimum (the name
#' then ends in `"*"`); `parallelly.availableCores.omit` leaves that many
#' cores free (at least 1 remains). Each of these options can be given as an
#' environment variable `R_PARALLELLY_AVAILABLECORES_METHODS` (comma
#' separated), `..._FALLBACK`, `..._MIN`, `..._OMIT`, `..._SYSTEM`; the
#' `future.`-prefixed options and `R_FUTURE_` variables work as in parallelly.
#' `OMP_NUM_THREADS` and `OMP_THREAD_LIMIT` are ignored, as in parallelly.
#'
#' @section Differences from parallelly:
#' They agree on every setting of the test matrix in
#' `tests/testthat/test-cores.R` (mc.cores, MC_CORES, R CMD check, Slurm,
#' PBS, SGE, LSF, PJM, BiocParallel, Bioconductor, parallelly's fallback,
#' min, omit, methods and system options and variables, cgroup values, and
#' the affinity mask set by `taskset`), apart from the wording of error
#' messages. By design they can differ here:
#' \itemize{
#'   \item The method `custom` (an R function in the option
#'     `parallelly.availableCores.custom`) and `connections` do not apply: the
#'     C++ answer must be computable where R code cannot run.
#'   \item cgroups are found through `/proc/self/cgroup` and
#'     `/proc/self/mountinfo`, so hierarchies mounted elsewhere than
#'     `/sys/fs/cgroup` are found too, and the cgroups v2 quota is read in the
#'     process's own cgroup and its ancestors (the smallest applies), where
#'     parallelly reads only `/sys/fs/cgroup/cpu.max`. In a container both
#'     read the container's cgroup; on a host, a quota on a systemd unit or
#'     Slurm job is seen here and not by parallelly.
#'   \item With cgroups v2 only, `cpuset.cpus.effective` counts as
#'     `cgroups.cpuset` (parallelly 1.34 reads only v1 cpusets). The affinity
#'     mask follows the cpuset, so the count is the same, but the name can be
#'     `"cgroups.cpuset"` where parallelly says `"nproc"`.
#'   \item `nproc` is read from the affinity mask directly, not by running
#'     the `nproc` program (the same number: parallelly also ignores
#'     `OMP_NUM_THREADS` there).
#'   \item Environment variables are read at every call. parallelly reads
#'     `R_PARALLELLY_AVAILABLECORES_*` once, when it loads (and package
#'     parallel reads `MC_CORES` once, when it loads), so after a
#'     `Sys.setenv()` the two differ until a new session. A bad
#'     `R_PARALLELLY_AVAILABLECORES_MIN` or `..._OMIT` makes parallelly fail to
#'     load, and makes this function give an error.
#'   \item parallelly, when loaded by `R CMD check`'s own processes, sets
#'     `_R_CHECK_LIMIT_CORES_=TRUE` if it is unset; this package changes no
#'     environment variable (and `R CMD check --as-cran` sets it anyway).
#'   \item Where `/proc/cpuinfo` cannot be read, `parallel::detectCores()`
#'     gives `NA` and parallelly uses 1; here the count of configured
#'     processors is used.
#'   \item The option `parallelly.availableCores.logical` is ignored (on
#'     Linux parallelly counts the same either way).
#'   \item The count is always an integer; parallelly's is a double in most
#'     settings (its vector of counts takes a double `NA` from the CPU quota
#'     rule), so compare them with `==`, not `identical()`.
#' }
#'
#' @section C++:
#' `RcppSpool::availableCores()` computes the same answer (without the
#' name). On R's main thread it reads the options at every call; on other
#' threads R must not be called, and it returns the answer last computed on
#' the main thread (or, before there is one, one from the environment alone).
#' Where this function gives an error, it throws `std::invalid_argument`.
#'
#' @param which `"min"` (default): the number of cores, named by the rule
#'   that decided it. `"all"`: every rule that applied, in order.
#' @return An integer, named by the rule that decided it (for `"all"`, one
#'   per rule). A name ending in `"*"` was raised to
#'   `parallelly.availableCores.min`.
#' @seealso [getThreads()] for the number of threads used by default.
#' @examples
#' availableCores()
#' availableCores("all")
#'
#' # within an allotment of one core (as future gives its workers):
#' old <- options(mc.cores = 1)
#' availableCores()
#' options(old)
#' @export
availableCores <- function(which = c("min", "all")) {
  which <- match.arg(which)
  res <- cpp_available_cores()
  for (w in res$warnings) warning(w, call. = FALSE)
  if (!is.null(res$error)) {
    stop("availableCores(): ", res$error, call. = FALSE)
  }
  res[[which]]
}

#' Is this process a forked child?
#'
#' `TRUE` inside a child process created by `fork()`, such as a worker of
#' `parallel::mclapply()` or of future's `multicore` plan. Threads do not
#' survive a fork (only the forking thread is copied into the child), so a
#' thread pool that the parent used is not there in the child; this package
#' notices that by itself, and this function tells R code.
#'
#' It is `TRUE` when the process id differs from the one the package was
#' loaded in (so the package was loaded before the fork, the case that
#' matters for threads), or when package parallel, if loaded, says that it
#' forked this process.
#'
#' @return `TRUE` or `FALSE`.
#' @examples
#' isForkedChild()
#' if (.Platform$OS.type == "unix") {
#'   parallel::mclapply(1:2, function(i) isForkedChild(), mc.cores = 2)
#' }
#' @export
isForkedChild <- function() {
  if (cpp_is_forked_child()) return(TRUE)
  if (!"parallel" %in% loadedNamespaces()) return(FALSE)
  # parallel's own record of having forked this process (mcfork()); it is
  # internal to parallel, hence looked up rather than called with `:::`.
  isChild <- get0("isChild", envir = asNamespace("parallel"), inherits = FALSE)
  is.function(isChild) && isTRUE(tryCatch(isChild(), error = function(e) FALSE))
}
