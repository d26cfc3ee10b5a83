# Nested parallelism and scaling out: the default thread count in future's
# workers and in PSOCK clusters, explicit settings there, the example of
# vignette("cores-forks-clusters") that goes beyond one process, and the
# limit of R CMD check. Each scenario runs in a child R process with a time
# limit; the variables that decide the thread count are blanked there, so
# that the caller's environment (a Slurm job, R CMD check) does not decide.

skip_if_not_installed("processx")

decisive_vars <- c(
  "RCPPSPOOL_NUM_THREADS", "MC_CORES", "_R_CHECK_LIMIT_CORES_",
  "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE", "SLURM_JOB_NUM_NODES", "SLURM_NNODES",
  "SLURM_TASKS_PER_NODE", "NSLOTS", "PBS_NUM_PPN", "NCPUS", "LSB_DJOB_NUMPROC",
  "PJM_VNODE_CORE", "PJM_PROC_BY_NODE", "BIOCPARALLEL_WORKER_NUMBER",
  "IS_BIOC_BUILD_MACHINE", "BBS_HOME",
  paste0("R_PARALLELLY_AVAILABLECORES_", c("METHODS", "FALLBACK", "MIN", "OMIT", "SYSTEM")),
  paste0("R_FUTURE_AVAILABLECORES_", c("METHODS", "FALLBACK", "MIN", "OMIT", "SYSTEM"))
)
blank_env <- function(...) c(setNames(rep("", length(decisive_vars)), decisive_vars), ...)

# Runs `code` in a child R process (variables blanked, then `env`); fails
# unless it exits with status 0 in time. Returns its "key=value" lines.
run_kv <- function(code, env = character(), timeout = 90) {
  res <- run_child_r(code, env = blank_env(env), timeout = timeout)
  if (res$status != 0) {
    fail(paste0("child R failed (status ", res$status, "):\n",
                paste(c(res$stdout, res$stderr), collapse = "\n")))
  }
  lines <- grep("^[A-Za-z_.0-9]+=", res$stdout, value = TRUE)
  setNames(sub("^[^=]*=", "", lines), sub("=.*$", "", lines))
}

test_that("in 2 multisession (PSOCK) workers the default is 1; in the main process availableCores()", {
  skip_on_cran()
  skip_if_not_installed("future")
  code <- c(
    'suppressMessages(library(future))',
    'cat("main_threads=", RcppSpool::getThreads(), "\\n", sep = "")',
    'cat("main_cpp=", RcppSpool:::cpp_default_threads_api(), "\\n", sep = "")',
    'cat("main_cores=", RcppSpool::availableCores(), "\\n", sep = "")',
    't0 <- proc.time()[["elapsed"]]',
    'plan(multisession, workers = 2)',
    'cat("multisession=", inherits(plan("next"), "multisession"), "\\n", sep = "")',
    'ask <- function() list(pid = Sys.getpid(), threads = RcppSpool::getThreads(),',
    '  cpp = RcppSpool:::cpp_default_threads_api(), mc = getOption("mc.cores"),',
    '  loop = spoolTests::.spool_loop_threads(20L, 2, -1L)$concurrent)',
    '# Two futures at once: one on each worker.',
    'fs <- list(future({ Sys.sleep(0.5); ask() }), future({ Sys.sleep(0.5); ask() }))',
    'vs <- value(fs)',
    'cat("startup_secs=", proc.time()[["elapsed"]] - t0, "\\n", sep = "")',
    'cat("distinct_workers=", length(unique(vapply(vs, function(v) v$pid, 1L))), "\\n", sep = "")',
    'for (k in 1:2) with(vs[[k]], cat("worker", k, "=", threads, ",", cpp, ",", mc, ",", loop, "\\n", sep = ""))',
    '# An explicit setting in the worker wins: setThreads() ...',
    'v <- value(future({ old <- RcppSpool::setThreads(2)',
    '  r <- c(RcppSpool::getThreads(), RcppSpool:::cpp_default_threads_api(),',
    '         spoolTests::.spool_loop_threads(40L, 5, -1L)$concurrent)',
    '  RcppSpool::setThreads(old); r }))',
    'cat("set_in_worker=", paste(v, collapse = ","), "\\n", sep = "")',
    '# ... and the option.',
    'v <- value(future({ op <- options(RcppSpool.threads = 2)',
    '  r <- c(RcppSpool::getThreads(), RcppSpool:::cpp_default_threads_api()); options(op); r }))',
    'cat("option_in_worker=", paste(v, collapse = ","), "\\n", sep = "")',
    'v <- value(future(RcppSpool::getThreads()))',
    'cat("after_reset=", v, "\\n", sep = "")',
    'plan(sequential)'
  )
  out <- run_kv(code)
  message(sprintf(paste("multisession: defaultThreads() in the 2 workers %s and %s (getThreads, C++, mc.cores,",
                        "most loop bodies at once with the default); main %s = availableCores() %s; start-up %.1f s"),
                  out[["worker1"]], out[["worker2"]], out[["main_threads"]], out[["main_cores"]],
                  as.numeric(out[["startup_secs"]])))
  expect_identical(out[["multisession"]], "TRUE")
  expect_identical(out[["main_threads"]], out[["main_cores"]])
  expect_identical(out[["main_cpp"]], out[["main_cores"]])
  expect_identical(out[["distinct_workers"]], "2")
  # getThreads(), the C++ defaultThreads(), future's mc.cores, most bodies at once in a default loop.
  expect_identical(out[["worker1"]], "1,1,1,1")
  expect_identical(out[["worker2"]], "1,1,1,1")
  expect_identical(out[["set_in_worker"]], "2,2,2")
  expect_identical(out[["option_in_worker"]], "2,2")
  expect_identical(out[["after_reset"]], "1")
})

test_that("plain PSOCK clusters are not limited by themselves; an allotment is followed", {
  skip_on_cran()
  skip_if_not_installed("parallelly")
  code <- c(
    'cat("main_cores=", RcppSpool::availableCores(), "\\n", sep = "")',
    'ask <- quote(c(RcppSpool::getThreads(), RcppSpool:::cpp_default_threads_api(),',
    '               RcppSpool::availableCores()))',
    'show <- function(name, cl) {',
    '  v <- parallel::clusterCall(cl, function(q) eval(q), ask)',
    '  cat(name, "=", paste(unique(vapply(v, paste, "", collapse = ",")), collapse = ";"), "\\n", sep = "")',
    '}',
    '# Neither parallel nor parallelly marks their workers (no option, no',
    '# variable), and parallelly::availableCores() is not limited there either.',
    'cl <- parallel::makePSOCKcluster(2)',
    'show("parallel_default", cl)',
    'v <- parallel::clusterEvalQ(cl, parallelly::availableCores())',
    'cat("parallelly_in_worker=", paste(unique(unlist(v)), collapse = ","), "\\n", sep = "")',
    '# The allotment made by the main process: setThreads() in each worker.',
    'invisible(parallel::clusterEvalQ(cl, RcppSpool::setThreads(1)))',
    'show("parallel_set", cl)',
    'parallel::stopCluster(cl)',
    'cl <- parallelly::makeClusterPSOCK(2)',
    'show("parallelly_default", cl)',
    'parallel::stopCluster(cl)',
    '# ... or the environment variable, given to the workers when they start.',
    'cl <- parallelly::makeClusterPSOCK(2, rscript_envs = c(RCPPSPOOL_NUM_THREADS = "1"))',
    'show("parallelly_env", cl)',
    'parallel::stopCluster(cl)'
  )
  out <- run_kv(code)
  n <- out[["main_cores"]]
  message(sprintf("plain PSOCK workers: defaultThreads() %s (parallel), %s (parallelly); with an allotment %s and %s",
                  out[["parallel_default"]], out[["parallelly_default"]],
                  out[["parallel_set"]], out[["parallelly_env"]]))
  # getThreads(), C++ defaultThreads(), availableCores() in the workers: as in the main process.
  expect_identical(out[["parallel_default"]], paste(n, n, n, sep = ","))
  expect_identical(out[["parallelly_default"]], paste(n, n, n, sep = ","))
  expect_identical(out[["parallelly_in_worker"]], n)
  expect_identical(out[["parallel_set"]], paste(1, 1, n, sep = ","))
  expect_identical(out[["parallelly_env"]], paste(1, 1, n, sep = ","))
})

# The example of vignette("cores-forks-clusters"), section "Beyond one
# machine", line for line: a cluster of R processes, each using RcppSpool
# threads within its allotment (given as Slurm gives it). Keep the two the same:
# the test below checks that the vignette shows exactly this code.
cluster_example <- c(
  'library(future)',
  '',
  '# Two R processes on this machine, each told that it may use one CPU, the',
  '# way Slurm tells the tasks of a job submitted with --cpus-per-task=1.',
  'cl <- parallelly::makeClusterPSOCK(2, rscript_envs = c(SLURM_CPUS_PER_TASK = "1"))',
  'plan(cluster, workers = cl)',
  '',
  '# Four pieces of work spread over the processes. Each piece runs a parallel',
  '# sum with RcppSpool threads, with the default count (a test function of',
  '# the package spoolTests, standing in for the C++ code of your package).',
  'pieces <- future.apply::future_lapply(1:4, function(a) {',
  '  list(worker  = Sys.getpid(),',
  '       cores   = RcppSpool::availableCores(),',
  '       threads = RcppSpool::getThreads(),',
  '       value   = spoolTests::.spool_scaled_sum(1e6, a, -1L))',
  '})',
  'pieces[[1]]$cores                              # c(Slurm = 1)',
  'sapply(pieces, `[[`, "threads")                # 1 1 1 1',
  'length(unique(sapply(pieces, `[[`, "worker")))  # 2 processes',
  'total <- sum(sapply(pieces, `[[`, "value"))',
  '',
  'plan(sequential)',
  'parallel::stopCluster(cl)'
)

test_that("the vignette shows the cluster example that the next test runs", {
  candidates <- c(test_path("..", "..", "vignettes", "cores-forks-clusters.Rmd"),
                  system.file("doc", "cores-forks-clusters.Rmd", package = "RcppSpool"))
  found <- candidates[nzchar(candidates) & file.exists(candidates)]
  skip_if(length(found) == 0, "the vignette's source is not available")
  rmd <- readLines(found[[1]])
  start <- grep("^```\\{r cluster-example", rmd)
  expect_length(start, 1)
  end <- start + which(rmd[-seq_len(start)] == "```")[1]
  expect_identical(rmd[(start + 1):(end - 1)], cluster_example)
})

test_that("a cluster of R processes each uses RcppSpool threads within its allotment", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  skip_if_not_installed("parallelly")
  code <- c(
    't0 <- proc.time()[["elapsed"]]',
    cluster_example,
    'cat("secs=", proc.time()[["elapsed"]] - t0, "\\n", sep = "")',
    'cat("cores=", paste(unique(vapply(pieces, function(p) paste0(names(p$cores), ":", p$cores), "")),',
    '    collapse = ";"), "\\n", sep = "")',
    'cat("threads=", paste(vapply(pieces, function(p) p$threads, 1L), collapse = ","), "\\n", sep = "")',
    'cat("workers=", length(unique(vapply(pieces, function(p) p$worker, 1L))), "\\n", sep = "")',
    'cat("main_pid_used=", any(vapply(pieces, function(p) p$worker, 1L) == Sys.getpid()), "\\n", sep = "")',
    '# The same sum in this process, on its own threads: bitwise the same.',
    'ref <- sum(sapply(1:4, function(a) spoolTests::.spool_scaled_sum(1e6, a, -1L)))',
    'cat("same=", identical(total, ref), "\\n", sep = "")',
    'cat("main_threads=", RcppSpool::getThreads(), "\\n", sep = "")'
  )
  out <- run_kv(code)
  message(sprintf("cluster example: 2 workers, cores %s, threads %s; %.1f s",
                  out[["cores"]], out[["threads"]], as.numeric(out[["secs"]])))
  expect_identical(out[["cores"]], "Slurm:1")
  expect_identical(out[["threads"]], "1,1,1,1")
  expect_identical(out[["workers"]], "2")
  expect_identical(out[["main_pid_used"]], "FALSE")
  expect_identical(out[["same"]], "TRUE")
})

test_that("under R CMD check's limit, at most 2 cores and 2 threads are used", {
  code <- c(
    'cores <- RcppSpool::availableCores()',
    'cat("cores=", cores, "\\n", sep = "")',
    'cat("rule=", names(cores), "\\n", sep = "")',
    'cat("threads=", RcppSpool::getThreads(), "\\n", sep = "")',
    'cat("cpp=", RcppSpool:::cpp_default_threads_api(), "\\n", sep = "")',
    '# The most loop bodies that ran at the same time (the figure CRAN cares',
    '# about: over its course a loop may be helped by different pool threads).',
    'l <- spoolTests::.spool_loop_threads(40L, 2, -1L)',
    'cat("loop=", l$concurrent, "\\n", sep = "")',
    'cat("pool=", spoolTests::.spool_local_pool_threads(-1L, 10L, 0)$workers, "\\n", sep = "")'
  )
  # This machine as it is.
  out <- run_kv(code, env = c("_R_CHECK_LIMIT_CORES_" = "TRUE"))
  expect_lte(as.integer(out[["cores"]]), 2L)
  expect_lte(as.integer(out[["threads"]]), 2L)
  expect_lte(as.integer(out[["cpp"]]), 2L)
  expect_lte(as.integer(out[["loop"]]), 2L)
  expect_lte(as.integer(out[["pool"]]), 2L)
  # A machine of 16 cores (whatever this one has): the limit decides.
  big <- c(R_PARALLELLY_AVAILABLECORES_SYSTEM = "16",
           R_PARALLELLY_AVAILABLECORES_METHODS = "system,mc.cores,_R_CHECK_LIMIT_CORES_")
  out <- run_kv(code, env = c(big, "_R_CHECK_LIMIT_CORES_" = "TRUE"))
  expect_identical(out[["cores"]], "2")
  expect_identical(out[["rule"]], "_R_CHECK_LIMIT_CORES_")
  expect_identical(out[["threads"]], "2")
  expect_identical(out[["cpp"]], "2")
  expect_lte(as.integer(out[["loop"]]), 2L)
  expect_identical(out[["pool"]], "2")
  # ... and without the limit, 16 (so the limit is what made it 2).
  out <- run_kv(code[1:5], env = big)
  expect_identical(out[["cores"]], "16")
  expect_identical(out[["threads"]], "16")
  expect_identical(out[["cpp"]], "16")
})
