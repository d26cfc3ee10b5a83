# setThreads() / getThreads(), options(RcppSpool.threads), the variable
# RCPPSPOOL_NUM_THREADS, and the C++ defaultThreads() that follows them, in
# this package and in another one that only compiled the headers.

# Variables that would decide the thread count: blanked in children.
threads_vars <- c(
  "RCPPSPOOL_NUM_THREADS", "MC_CORES", "_R_CHECK_LIMIT_CORES_",
  "SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE", "NSLOTS", "PBS_NUM_PPN", "NCPUS",
  "LSB_DJOB_NUMPROC", "PJM_VNODE_CORE", "PJM_PROC_BY_NODE",
  "BIOCPARALLEL_WORKER_NUMBER", "R_PARALLELLY_AVAILABLECORES_FALLBACK",
  "R_PARALLELLY_AVAILABLECORES_OMIT", "R_PARALLELLY_AVAILABLECORES_METHODS"
)

# Runs `f` in a fresh R process with the variables above blanked, then `env`.
in_child <- function(f, env = character(), args = list()) {
  blank <- setNames(rep("", length(threads_vars)), threads_vars)
  env <- c(callr::rcmd_safe_env(), blank,
           R_LIBS = paste(.libPaths(), collapse = .Platform$path.sep), env)
  callr::r(f, args = args, env = env[!duplicated(names(env), fromLast = TRUE)])
}

allowed <- "whole number from 0 (no worker threads: everything runs on the calling thread) to 1024"

test_that("setThreads() rejects every bad value with an error naming it", {
  old <- options(RcppSpool.setThreads = NULL)
  on.exit(options(old))
  bad <- list(-1, NA, NA_integer_, "a", 2.5, 1e9, 1025, Inf, NaN, TRUE, c(1, 2), integer(0), list(2), sum)
  shown <- c("-1", "NA", "NA", "\"a\"", "2.5", "1000000000", "1025", "Inf", "NA", "TRUE",
             "c(1, 2)", "integer(0)", "<list>", "<builtin>")
  for (i in seq_along(bad)) {
    err <- tryCatch(setThreads(bad[[i]]), error = function(e) e)
    expect_s3_class(err, "error")
    expect_match(conditionMessage(err), paste0("n is ", shown[i]), fixed = TRUE, info = shown[i])
    expect_match(conditionMessage(err), allowed, fixed = TRUE, info = shown[i])
    expect_match(conditionMessage(err), "NULL for automatic", fixed = TRUE)
    expect_null(getOption("RcppSpool.setThreads"))  # nothing was set
  }
})

test_that("setThreads() takes 0 to 1024 and NULL, and returns the old value invisibly", {
  old <- options(RcppSpool.setThreads = NULL, RcppSpool.threads = NULL)
  on.exit(options(old))
  expect_invisible(setThreads(2))
  expect_identical(getThreads(), 2L)
  expect_identical(cpp_default_threads_api(), 2L)
  expect_identical(getOption("RcppSpool.setThreads"), 2L)
  expect_identical(setThreads(0L), 2L)
  expect_identical(getThreads(), 0L)
  expect_identical(setThreads(1024), 0L)
  expect_identical(getThreads(), 1024L)
  expect_identical(setThreads(1), 1024L)
  # setThreads() wins over the option.
  options(RcppSpool.threads = 2)
  expect_identical(getThreads(), 1L)
  expect_identical(setThreads(NULL), 1L)
  expect_null(getOption("RcppSpool.setThreads"))
  expect_identical(getThreads(), 2L)
})

test_that("a bad option is an R error naming the value, in R and in C++", {
  old <- options(RcppSpool.setThreads = NULL, RcppSpool.threads = NULL)
  on.exit(options(old))
  bad <- list(-1, NA, "a", 2.5, 1e9, TRUE, c(2, 3))
  shown <- c("-1", "NA", "\"a\"", "2.5", "1000000000", "TRUE", "c(2, 3)")
  for (i in seq_along(bad)) {
    options(RcppSpool.threads = bad[[i]])
    msg <- paste0("option 'RcppSpool.threads' is ", shown[i])
    expect_error(getThreads(), msg, fixed = TRUE)
    expect_error(getThreads(), allowed, fixed = TRUE)
    expect_error(cpp_default_threads_api(), msg, fixed = TRUE)
  }
  # Set behind setThreads()'s back:
  options(RcppSpool.threads = NULL, RcppSpool.setThreads = "x")
  expect_error(getThreads(), "option 'RcppSpool.setThreads' (set by setThreads()) is \"x\"", fixed = TRUE)
})

test_that("getThreads() and the C++ defaultThreads() agree", {
  old <- options(RcppSpool.setThreads = NULL, RcppSpool.threads = NULL, mc.cores = NULL)
  on.exit(options(old))
  skip_if(nzchar(Sys.getenv("RCPPSPOOL_NUM_THREADS")), "RCPPSPOOL_NUM_THREADS is set")
  expect_identical(getThreads(), unname(availableCores()))
  expect_identical(cpp_default_threads_api(), getThreads())
  expect_identical(cpp_available_cores_api(), unname(availableCores()))
  options(mc.cores = 1)
  expect_identical(getThreads(), 1L)
  expect_identical(cpp_default_threads_api(), 1L)
  options(RcppSpool.threads = 3L)
  expect_identical(cpp_default_threads_api(), 3L)
  setThreads(2)
  expect_identical(cpp_default_threads_api(), 2L)
  setThreads(NULL)
  expect_identical(cpp_default_threads_api(), 3L)
})

test_that("the order is setThreads(), option, environment variable, availableCores()", {
  skip_if_not_installed("callr")
  res <- in_child(function() {
    out <- list(env = RcppSpool::getThreads())
    options(RcppSpool.threads = 2)
    out$option <- RcppSpool::getThreads()
    RcppSpool::setThreads(1)
    out$set <- RcppSpool::getThreads()
    RcppSpool::setThreads(NULL)
    out$unset <- RcppSpool::getThreads()
    options(RcppSpool.threads = NULL)
    out$env_again <- RcppSpool::getThreads()
    Sys.setenv(RCPPSPOOL_NUM_THREADS = " ")
    out$blank <- RcppSpool::getThreads()
    out$cores <- unname(RcppSpool::availableCores())
    options(mc.cores = 1)
    out$mc <- RcppSpool::getThreads()
    out
  }, env = c(RCPPSPOOL_NUM_THREADS = "3"))
  expect_identical(res$env, 3L)
  expect_identical(res$option, 2L)
  expect_identical(res$set, 1L)
  expect_identical(res$unset, 2L)
  expect_identical(res$env_again, 3L)
  expect_identical(res$blank, res$cores)
  expect_identical(res$mc, 1L)
})

test_that("a bad RCPPSPOOL_NUM_THREADS gives one warning and is ignored", {
  skip_if_not_installed("callr")
  res <- in_child(function() {
    cores <- unname(RcppSpool::availableCores())
    lapply(c("abc", "-1", "2.5", "1e9", "NA", "1025", "4 threads"), function(v) {
      Sys.setenv(RCPPSPOOL_NUM_THREADS = v)
      warnings <- character()
      values <- withCallingHandlers(
        c(RcppSpool::getThreads(), RcppSpool::getThreads(), RcppSpool:::cpp_default_threads_api()),
        warning = function(w) {
          warnings <<- c(warnings, conditionMessage(w))
          invokeRestart("muffleWarning")
        })
      list(value = v, values = values, cores = cores, warnings = warnings)
    })
  })
  # setThreads(NULL) hands the count back to a bad variable: it says so, once.
  res_set <- in_child(function() {
    RcppSpool::setThreads(2)
    warnings <- character()
    withCallingHandlers({
      RcppSpool::setThreads(NULL)
      n <- RcppSpool::getThreads()
    }, warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    list(n = n, cores = unname(RcppSpool::availableCores()), warnings = warnings)
  }, env = c(RCPPSPOOL_NUM_THREADS = "x"))
  expect_identical(res_set$n, res_set$cores)
  expect_length(res_set$warnings, 1)
  expect_match(res_set$warnings, "RCPPSPOOL_NUM_THREADS='x'", fixed = TRUE)
  for (r in res) {
    expect_identical(r$values, rep(r$cores, 3), info = r$value)
    expect_length(r$warnings, 1)
    expect_match(r$warnings, paste0("RCPPSPOOL_NUM_THREADS='", r$value, "'"), fixed = TRUE)
    expect_match(r$warnings, "whole number from 0 to 1024", fixed = TRUE)
  }
})

# A package that only has `LinkingTo: RcppSpool`: C++ code with R's C API
# and our headers, no Rcpp, loaded without our namespace. Its counts are the
# runtime's (RcppSpool's shared library, through the table of
# table/api_table.h): its first call on R's main thread loads RcppSpool's
# namespace; a first call on another thread is an error that says what to add.
foreign_code <- '
#include <RcppSpool/cores.h>
#include <string>
#include <thread>

namespace {
SEXP answer(std::size_t (*f)()) {
    std::string err;
    try {
        return Rf_ScalarInteger(static_cast<int>(f()));
    } catch (std::exception& e) {
        err = e.what();
    }
    return Rf_mkString(err.c_str());
}
}

extern "C" SEXP foreign_default_threads() { return answer(RcppSpool::defaultThreads); }
extern "C" SEXP foreign_available_cores() { return answer(RcppSpool::availableCores); }
extern "C" SEXP foreign_default_threads_on_worker() {
    long long n = -1;
    std::string err;
    std::thread t([&] {
        try {
            n = static_cast<long long>(RcppSpool::defaultThreads());
        } catch (std::exception& e) {
            err = e.what();
        }
    });
    t.join();
    if (!err.empty()) return Rf_mkString(err.c_str());
    return Rf_ScalarInteger(static_cast<int>(n));
}
'

build_foreign <- function() {
  dir <- tempfile("foreign-")
  dir.create(dir)
  include <- system.file("include", package = "RcppSpool")
  writeLines(foreign_code, file.path(dir, "foreign.cpp"))
  writeLines(c("CXX_STD = CXX17", sprintf("PKG_CPPFLAGS = -I'%s'", include)),
             file.path(dir, "Makevars"))
  out <- processx::run(file.path(R.home("bin"), "R"),
                       c("CMD", "SHLIB", "-o", "foreign.so", "foreign.cpp"),
                       wd = dir, error_on_status = FALSE, stderr_to_stdout = TRUE)
  if (out$status != 0) stop("compiling the headers without Rcpp failed:\n", out$stdout)
  file.path(dir, "foreign.so")
}

test_that("another package's compiled headers follow the same settings", {
  skip_on_cran()  # compiles C++
  skip_on_os("windows")
  skip_if_not_installed("callr")
  skip_if_not_installed("processx")
  so <- build_foreign()

  res <- in_child(function(so) {
    dyn.load(so)
    call <- function(name) .Call(name)
    out <- list()
    out$plain <- call("foreign_default_threads")
    out$plain_cores <- call("foreign_available_cores")
    options(RcppSpool.threads = 2)
    out$option <- call("foreign_default_threads")
    out$worker <- call("foreign_default_threads_on_worker")  # the main thread's last value
    options(mc.cores = 1, RcppSpool.threads = NULL)
    out$mc <- call("foreign_default_threads")
    out$mc_cores <- call("foreign_available_cores")
    options(mc.cores = NULL)
    options(RcppSpool.threads = "x")
    out$bad <- call("foreign_default_threads")
    out$bad_worker <- call("foreign_default_threads_on_worker")
    options(RcppSpool.threads = NULL)
    Sys.setenv(SLURM_CPUS_PER_TASK = "0")
    out$invalid_cores <- call("foreign_available_cores")
    Sys.setenv(SLURM_CPUS_PER_TASK = "")
    out$namespace_loaded <- "RcppSpool" %in% loadedNamespaces()
    # Now our R functions, in the same process.
    out$ours <- RcppSpool::getThreads()
    out$ours_cores <- unname(RcppSpool::availableCores())
    RcppSpool::setThreads(1)
    out$after_set <- call("foreign_default_threads")
    out$after_set_worker <- call("foreign_default_threads_on_worker")
    out
  }, args = list(so = so))

  expect_true(res$namespace_loaded)
  expect_identical(res$plain, res$ours)
  expect_identical(res$plain_cores, res$ours_cores)
  expect_identical(res$option, 2L)
  expect_identical(res$worker, 2L)
  expect_identical(res$mc, 1L)
  expect_identical(res$mc_cores, 1L)
  expect_match(res$bad, "option 'RcppSpool.threads' is \"x\"", fixed = TRUE)
  expect_match(res$bad_worker, "option 'RcppSpool.threads' is \"x\"", fixed = TRUE)
  expect_match(res$invalid_cores, "'Slurm' = 0", fixed = TRUE)
  expect_identical(res$after_set, 1L)
  expect_identical(res$after_set_worker, 1L)

  # With an environment variable: read on any thread, no option needed.
  res2 <- in_child(function(so) {
    dyn.load(so)
    list(main = .Call("foreign_default_threads"), worker = .Call("foreign_default_threads_on_worker"))
  }, args = list(so = so), env = c(RCPPSPOOL_NUM_THREADS = "3"))
  expect_identical(res2, list(main = 3L, worker = 3L))

  # The first call on another thread than R's main thread cannot load
  # RcppSpool's namespace: an error in words, not a crash; then a call on
  # the main thread loads it, and calls on any thread work.
  res3 <- in_child(function(so) {
    dyn.load(so)
    first <- .Call("foreign_default_threads_on_worker")
    loaded_after_first <- "RcppSpool" %in% loadedNamespaces()
    main <- .Call("foreign_default_threads")
    list(first = first, loaded_after_first = loaded_after_first, main = main,
         worker = .Call("foreign_default_threads_on_worker"), ours = RcppSpool::getThreads())
  }, args = list(so = so))
  expect_match(res3$first, "add RcppSpool to Imports", fixed = TRUE)
  expect_false(res3$loaded_after_first)
  expect_identical(res3$main, res3$ours)
  expect_identical(res3$worker, res3$ours)
})
