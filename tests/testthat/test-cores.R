# availableCores() against parallelly::availableCores() over a matrix of
# settings (options, environment variables, the affinity mask), each in a
# fresh R process: the settings are read when packages load, the affinity
# mask can only be set from outside, and nothing may leak between settings.

# Variables that decide the answer: blanked in every child (an empty value
# counts as unset for both packages), so that the caller's environment (a
# Slurm job, R CMD check) does not decide instead of the setting.
core_vars <- c(
  "MC_CORES", "_R_CHECK_LIMIT_CORES_", "BIOCPARALLEL_WORKER_NUMBER",
  "IS_BIOC_BUILD_MACHINE", "BBS_HOME", "LSB_DJOB_NUMPROC", "PJM_VNODE_CORE",
  "PJM_PROC_BY_NODE", "PBS_NUM_PPN", "NCPUS", "NSLOTS", "SLURM_CPUS_PER_TASK",
  "SLURM_CPUS_ON_NODE", "SLURM_JOB_NUM_NODES", "SLURM_NNODES",
  "SLURM_TASKS_PER_NODE", "RCPPSPOOL_NUM_THREADS", "MY_CORES",
  grep("^R_(PARALLELLY|FUTURE)_", names(Sys.getenv()), value = TRUE),
  paste0("R_PARALLELLY_AVAILABLECORES_",
         c("METHODS", "FALLBACK", "MIN", "OMIT", "SYSTEM", "LOGICAL")),
  paste0("R_FUTURE_AVAILABLECORES_",
         c("METHODS", "FALLBACK", "MIN", "OMIT", "SYSTEM", "LOGICAL"))
)

# What each child does: apply the options, then ask both packages, and the
# C++ functions of ours. parallelly is asked last: loading it loads package
# parallel, which turns MC_CORES into the option mc.cores; ours must find
# MC_CORES by itself.
child_code <- '
args <- commandArgs(TRUE)
setting <- readRDS(args[[1]])
if (length(setting$options)) options(setting$options)
catch <- function(expr) {
  tryCatch(suppressWarnings(expr),
           error = function(e) paste("error:", conditionMessage(e)))
}
res <- list()
res$ours <- catch(RcppSpool::availableCores())
res$cpp <- catch(RcppSpool:::cpp_available_cores_api())
res$threads_r <- catch(RcppSpool::getThreads())
res$threads_cpp <- catch(RcppSpool:::cpp_default_threads_api())
if (requireNamespace("parallelly", quietly = TRUE)) {
  res$parallelly <- catch(parallelly::availableCores())
}
saveRDS(res, args[[2]])
'

# Runs each setting in its own R process, a few at a time; returns the
# results in order.
run_settings <- function(settings, concurrency = 4L, timeout = 60) {
  dir <- tempfile("cores-matrix-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  script <- file.path(dir, "child.R")
  writeLines(child_code, script)
  rscript <- file.path(R.home("bin"), "Rscript")
  base_env <- c(
    "current",
    setNames(rep("", length(core_vars)), core_vars),
    R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep),
    R_PARALLELLY_R_CMD_CHECK_NICE = "false"
  )
  start <- function(i) {
    s <- settings[[i]]
    input <- file.path(dir, sprintf("in-%02d.rds", i))
    output <- file.path(dir, sprintf("out-%02d.rds", i))
    saveRDS(s, input)
    env <- base_env
    env[names(s$env)] <- s$env
    cmd <- rscript
    args <- c("--vanilla", script, input, output)
    if (!is.null(s$taskset)) {
      args <- c("-c", s$taskset, cmd, args)
      cmd <- "taskset"
    }
    list(p = processx::process$new(cmd, args, env = env, stdout = "|", stderr = "2>&1"),
         output = output, started = Sys.time())
  }
  results <- vector("list", length(settings))
  running <- list()
  nxt <- 1L
  while (nxt <= length(settings) || length(running)) {
    while (length(running) < concurrency && nxt <= length(settings)) {
      running[[as.character(nxt)]] <- start(nxt)
      nxt <- nxt + 1L
    }
    for (key in names(running)) {
      r <- running[[key]]
      timed_out <- difftime(Sys.time(), r$started, units = "secs") > timeout
      if (!r$p$is_alive() || timed_out) {
        if (timed_out) r$p$kill()
        out <- r$p$read_all_output()
        results[[as.integer(key)]] <- if (file.exists(r$output)) {
          readRDS(r$output)
        } else {
          list(failed = paste("child failed:", out))
        }
        running[[key]] <- NULL
      }
    }
    Sys.sleep(0.02)
  }
  results
}

setting <- function(name, env = character(), options = list(), taskset = NULL) {
  list(name = name, env = env, options = options, taskset = taskset)
}

matrix_settings <- function() {
  s <- list(
    setting("nothing set"),
    setting("mc.cores = 1", options = list(mc.cores = 1L)),
    setting("mc.cores = 0", options = list(mc.cores = 0L)),
    setting("mc.cores = '1' (text)", options = list(mc.cores = "1")),
    setting("MC_CORES=1", env = c(MC_CORES = "1")),
    setting("MC_CORES=1 and mc.cores = 2", env = c(MC_CORES = "1"),
            options = list(mc.cores = 2L)),
    setting("_R_CHECK_LIMIT_CORES_=TRUE", env = c(`_R_CHECK_LIMIT_CORES_` = "TRUE")),
    setting("_R_CHECK_LIMIT_CORES_=warn", env = c(`_R_CHECK_LIMIT_CORES_` = "warn")),
    setting("_R_CHECK_LIMIT_CORES_=false", env = c(`_R_CHECK_LIMIT_CORES_` = "false")),
    setting("SLURM_CPUS_PER_TASK=1", env = c(SLURM_CPUS_PER_TASK = "1")),
    setting("SLURM_CPUS_ON_NODE=1", env = c(SLURM_CPUS_ON_NODE = "1")),
    setting("Slurm, 2 nodes, 1(x2) tasks", env = c(
      SLURM_JOB_NUM_NODES = "2", SLURM_TASKS_PER_NODE = "1(x2)",
      SLURM_CPUS_ON_NODE = "4")),
    setting("PBS_NUM_PPN=1", env = c(PBS_NUM_PPN = "1")),
    setting("NCPUS=1", env = c(NCPUS = "1")),
    setting("NSLOTS=1", env = c(NSLOTS = "1")),
    setting("NSLOTS=' 1.9 '", env = c(NSLOTS = " 1.9 ")),
    setting("NSLOTS=abc", env = c(NSLOTS = "abc")),
    setting("LSB_DJOB_NUMPROC=1", env = c(LSB_DJOB_NUMPROC = "1")),
    setting("PJM_VNODE_CORE=1", env = c(PJM_VNODE_CORE = "1")),
    setting("PJM_PROC_BY_NODE=1", env = c(PJM_PROC_BY_NODE = "1")),
    setting("BIOCPARALLEL_WORKER_NUMBER=1", env = c(BIOCPARALLEL_WORKER_NUMBER = "1")),
    setting("IS_BIOC_BUILD_MACHINE=true on 8 cores", env = c(IS_BIOC_BUILD_MACHINE = "true"),
            options = list(parallelly.availableCores.methods = c("system", "Bioconductor"),
                           parallelly.availableCores.system = 8L)),
    setting("BBS_HOME=TRUE on 8 cores", env = c(BBS_HOME = "TRUE"),
            options = list(parallelly.availableCores.methods = c("system", "Bioconductor"),
                           parallelly.availableCores.system = 8L)),
    setting("R_PARALLELLY_AVAILABLECORES_FALLBACK=1",
            env = c(R_PARALLELLY_AVAILABLECORES_FALLBACK = "1")),
    setting("R_FUTURE_AVAILABLECORES_FALLBACK=1",
            env = c(R_FUTURE_AVAILABLECORES_FALLBACK = "1")),
    setting("fallback option 1 and SLURM_CPUS_PER_TASK=2",
            env = c(SLURM_CPUS_PER_TASK = "2"),
            options = list(parallelly.availableCores.fallback = 1L)),
    setting("omit option 1", options = list(parallelly.availableCores.omit = 1L)),
    setting("R_PARALLELLY_AVAILABLECORES_OMIT=1",
            env = c(R_PARALLELLY_AVAILABLECORES_OMIT = "1")),
    setting("future.availableCores.omit = 1",
            options = list(future.availableCores.omit = 1L)),
    setting("min option 2 and mc.cores = 1",
            options = list(parallelly.availableCores.min = 2L, mc.cores = 1L)),
    setting("R_PARALLELLY_AVAILABLECORES_METHODS=mc.cores,Slurm",
            env = c(R_PARALLELLY_AVAILABLECORES_METHODS = "mc.cores,Slurm")),
    setting("methods system,nproc and mc.cores = 1",
            options = list(parallelly.availableCores.methods = c("system", "nproc"),
                           mc.cores = 1L)),
    setting("R_PARALLELLY_AVAILABLECORES_SYSTEM=1",
            env = c(R_PARALLELLY_AVAILABLECORES_SYSTEM = "1")),
    setting("16 cores, Slurm 4, mc.cores 6", env = c(SLURM_CPUS_PER_TASK = "4"),
            options = list(parallelly.availableCores.system = 16L, mc.cores = 6L,
                           parallelly.availableCores.methods = c("system", "Slurm", "mc.cores"))),
    setting("a method of our own: MY_CORES=1", env = c(MY_CORES = "1"),
            options = list(parallelly.availableCores.methods = c("system", "MY_CORES"))),
    setting("cgroups CPU quota 1.4", options = list(parallelly.cgroups.cpuquota = 1.4)),
    setting("cgroups v2 cpu.max 0.2", options = list(parallelly.cgroups2.cpu.max = 0.2)),
    setting("error: SLURM_CPUS_PER_TASK=0", env = c(SLURM_CPUS_PER_TASK = "0")),
    setting("error: min option above the cores",
            options = list(parallelly.availableCores.min = 1000L))
  )
  if (nzchar(Sys.which("taskset"))) {
    s <- c(s, list(
      setting("taskset -c 0", taskset = "0"),
      setting("taskset -c 0 and fallback 2", taskset = "0",
              env = c(R_PARALLELLY_AVAILABLECORES_FALLBACK = "2")),
      setting("taskset -c 0 and mc.cores = 2", taskset = "0",
              options = list(mc.cores = 2L)),
      setting("taskset -c 0 and _R_CHECK_LIMIT_CORES_=TRUE", taskset = "0",
              env = c(`_R_CHECK_LIMIT_CORES_` = "TRUE"))
    ))
  }
  s
}

is_error <- function(x) is.character(x) && length(x) == 1 && startsWith(x, "error:")

test_that("availableCores() agrees with parallelly::availableCores() over the matrix", {
  skip_on_os("windows")
  skip_if_not_installed("parallelly")
  skip_if_not_installed("processx")
  settings <- matrix_settings()
  expect_gte(length(settings), 20)
  results <- run_settings(settings)

  agree <- logical(length(settings))
  report <- character()
  for (i in seq_along(settings)) {
    r <- results[[i]]
    name <- settings[[i]]$name
    if (!is.null(r$failed)) {
      report <- c(report, sprintf("%s: %s", name, r$failed))
      next
    }
    # parallelly's answer is a double in most settings (its vector of counts
    # takes an NA_real_ from the CPU quota rule); ours is always an integer.
    agree[i] <- if (is_error(r$ours) || is_error(r$parallelly)) {
      is_error(r$ours) && is_error(r$parallelly)
    } else {
      is.numeric(r$parallelly) &&
        identical(r$ours, setNames(as.integer(r$parallelly), names(r$parallelly)))
    }
    if (!agree[i]) {
      report <- c(report, sprintf("%s: ours %s, parallelly %s", name,
                                  paste(deparse(r$ours), collapse = ""),
                                  paste(deparse(r$parallelly), collapse = "")))
    }
    # The C++ functions give the same answer as the R ones.
    if (is_error(r$ours)) {
      expect_true(is_error(r$cpp), info = name)
      expect_true(is_error(r$threads_r), info = name)
      expect_true(is_error(r$threads_cpp), info = name)
    } else {
      expect_identical(r$cpp, unname(r$ours), info = name)
      expect_identical(r$threads_r, unname(r$ours), info = name)
      expect_identical(r$threads_cpp, unname(r$ours), info = name)
    }
  }
  message(sprintf("availableCores(): %d of %d settings agree with parallelly %s",
                  sum(agree), length(agree), packageVersion("parallelly")),
          if (length(report)) paste0("\n  ", report, collapse = "") else "")
  expect_gte(mean(agree), 0.95)

  # The matrix exercises many rules, not the machine's count over and over.
  rules <- unique(unlist(lapply(results, function(r) if (!is_error(r$ours)) names(r$ours))))
  expect_gte(length(rules), 12)
})

test_that("the rules give what they should, whatever parallelly says", {
  skip_on_os("windows")
  skip_if_not_installed("processx")
  settings <- list(
    setting("mc.cores = 1", options = list(mc.cores = 1L)),
    setting("MC_CORES=1", env = c(MC_CORES = "1")),
    setting("_R_CHECK_LIMIT_CORES_=TRUE, 8 cores", env = c(`_R_CHECK_LIMIT_CORES_` = "TRUE"),
            options = list(parallelly.availableCores.system = 8L,
                           parallelly.availableCores.methods = c("system", "_R_CHECK_LIMIT_CORES_"))),
    setting("Slurm 3 of 8 cores", env = c(SLURM_CPUS_PER_TASK = "3"),
            options = list(parallelly.availableCores.system = 8L,
                           parallelly.availableCores.methods = c("system", "Slurm"))),
    setting("omit 1 of 8", options = list(parallelly.availableCores.system = 8L,
                                          parallelly.availableCores.omit = 1L,
                                          parallelly.availableCores.methods = "system")),
    setting("SLURM_CPUS_PER_TASK=0", env = c(SLURM_CPUS_PER_TASK = "0"))
  )
  expected <- list(c(mc.cores = 1L), c(mc.cores = 1L), c(`_R_CHECK_LIMIT_CORES_` = 2L),
                   c(Slurm = 3L), c(system = 7L), "error")
  results <- run_settings(settings)
  for (i in seq_along(settings)) {
    if (identical(expected[[i]], "error")) {
      expect_true(is_error(results[[i]]$ours), info = settings[[i]]$name)
      expect_match(results[[i]]$ours, "'Slurm' = 0", fixed = TRUE)
    } else {
      expect_identical(results[[i]]$ours, expected[[i]], info = settings[[i]]$name)
    }
  }
})

test_that("availableCores() is a named integer, at least 1; 'all' lists the rules", {
  n <- availableCores()
  expect_type(n, "integer")
  expect_length(n, 1)
  expect_gte(n, 1L)
  expect_false(is.null(names(n)))
  all <- availableCores("all")
  expect_type(all, "integer")
  expect_true("system" %in% names(all))
  expect_identical(min(all), unname(n))
  expect_error(availableCores("max"))
})

test_that("availableCores() follows options set in this session at once", {
  old <- options(mc.cores = 1L, parallelly.availableCores.min = NULL)
  on.exit(options(old))
  expect_identical(availableCores(), c(mc.cores = 1L))
  options(mc.cores = 0L)
  expect_identical(availableCores(), c(mc.cores = 1L))
  options(mc.cores = -1L)
  expect_error(availableCores(), "'mc.cores' = -1", fixed = TRUE)
  expect_error(cpp_available_cores_api(), "'mc.cores' = -1", fixed = TRUE)
  options(mc.cores = NULL, parallelly.availableCores.min = "2")
  expect_error(availableCores(), "parallelly.availableCores.min", fixed = TRUE)
})

test_that("isForkedChild() is FALSE here and TRUE in mclapply() children", {
  expect_false(isForkedChild())
  skip_on_os("windows")
  res <- parallel::mclapply(1:2, function(i) isForkedChild(), mc.cores = 2)
  expect_identical(res, list(TRUE, TRUE))
  expect_false(isForkedChild())
})
