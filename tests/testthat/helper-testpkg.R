# The compiled functions that only the tests call (faults, forks, progress
# output, errors, interrupts) are not in RcppSpool's shared library: they are
# the package "spoolTests" in tests/testthat/testpkg, a client of RcppSpool
# like a user's package (LinkingTo and Imports). The tests build it once per R
# session, on first use, into a temporary library:
#
#   spool_tests()$.spool_sum_loop(1e5, 2L)    # in a test: builds if needed
#   "spoolTests::.spool_sum_loop(1e5, 2L)"    # in a child R process's code
#
# spool_tests() puts that library first on .libPaths(), so child processes
# started afterwards (run_child_r(), start_child_r(), callr with
# libpath = .libPaths(), PSOCK workers they start) find it; run_child_r(),
# start_child_r() and start_r_job() call it themselves when the child's code
# names spoolTests.

spool_tests_cache <- new.env(parent = emptyenv())

# spoolTests' namespace, built and installed first if needed (once per R
# session). Fails with R CMD INSTALL's output if it does not build.
spool_tests <- function() {
  if (is.null(spool_tests_cache$ns)) {
    lib <- spool_tests_install()
    if (!lib %in% .libPaths()) .libPaths(c(lib, .libPaths()))
    # (By a variable: R CMD check would otherwise look the name up in the
    # repositories, as an undeclared dependency.)
    pkg <- "spoolTests"
    spool_tests_cache$ns <- loadNamespace(pkg, lib.loc = lib)
  }
  spool_tests_cache$ns
}

# Builds spoolTests for the child processes of `code` (lines of R code, or a
# function) when the code uses it.
spool_tests_for <- function(code) {
  if (is.function(code)) code <- deparse(code)
  if (any(grepl("spoolTests", code, fixed = TRUE))) spool_tests()
  invisible()
}

# Installs spoolTests into a library under tempdir() named by a hash of its
# sources and of RcppSpool's installed headers: a second call in the same
# session (even after the helpers were sourced again) finds it there.
spool_tests_install <- function() {
  src <- test_path("testpkg")
  if (!file.exists(file.path(src, "DESCRIPTION"))) {
    stop("the test package's sources are missing: ", normalizePath(src, mustWork = FALSE), call. = FALSE)
  }
  spool <- system.file(package = "RcppSpool")
  inputs <- c(list.files(src, recursive = TRUE, full.names = TRUE),
              list.files(file.path(spool, "include"), recursive = TRUE, full.names = TRUE))
  key <- substr(digest_files(inputs), 1, 12)
  lib <- file.path(tempdir(), paste0("spoolTests-", key))
  stamp <- file.path(lib, "spoolTests.ok")
  if (file.exists(stamp)) return(lib)

  work <- tempfile("spoolTests-build")
  dir.create(work)
  file.copy(src, work, recursive = TRUE)
  pkg <- file.path(work, basename(src))
  # Objects left in the sources by an earlier build (ignored by git, there
  # only in a working tree) are not reused: copied, they look as new as the
  # sources, and make would link code built against other headers.
  unlink(list.files(file.path(pkg, "src"), pattern = "[.](o|so|dll)$", full.names = TRUE))
  Rcpp::compileAttributes(pkg)
  dir.create(lib, showWarnings = FALSE)
  log <- file.path(work, "install.log")
  message("building the test package spoolTests (tests/testthat/testpkg) into ", lib)
  t0 <- proc.time()[["elapsed"]]
  # The RcppSpool under test first, so that LinkingTo finds its headers; two
  # compilers at a time (CRAN allows 2 cores); no R_TESTS of R CMD check's
  # own in the installing R.
  status <- with_env(
    c(R_LIBS = paste(unique(c(dirname(spool), .libPaths())), collapse = .Platform$path.sep),
      MAKEFLAGS = if (nzchar(Sys.getenv("MAKEFLAGS"))) Sys.getenv("MAKEFLAGS") else "-j2",
      R_TESTS = ""),
    system2(file.path(R.home("bin"), "R"),
            c("CMD", "INSTALL", "--no-test-load", "--no-docs", "--no-multiarch",
              paste0("--library=", shQuote(lib)), shQuote(pkg)),
            stdout = log, stderr = log)
  )
  out <- if (file.exists(log)) readLines(log, warn = FALSE) else "(no output)"
  if (!identical(as.integer(status), 0L) || !dir.exists(file.path(lib, "spoolTests"))) {
    stop("building the test package spoolTests (tests/testthat/testpkg) failed (R CMD INSTALL status ", status,
         "); its output, also in ", log, ":\n", paste(utils::tail(out, 80), collapse = "\n"), call. = FALSE)
  }
  message(sprintf("built spoolTests in %.0f s", proc.time()[["elapsed"]] - t0))
  writeLines(out, stamp)
  lib
}

# One md5 for the contents (and relative order) of `files`.
digest_files <- function(files) {
  sums <- unname(tools::md5sum(sort(files)))
  f <- tempfile()
  on.exit(unlink(f))
  writeLines(c(sums, R.version.string), f)
  unname(tools::md5sum(f))
}

# Evaluates `expr` with the environment variables `vars` (a named character
# vector) set, and restores them afterwards.
with_env <- function(vars, expr) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  on.exit({
    for (v in names(old)) if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  }, add = TRUE)
  do.call(Sys.setenv, as.list(vars))
  force(expr)
}

# Installs the throwaway client package in `pkg` into `lib` with R CMD
# INSTALL, the RcppSpool under test first in R_LIBS (so that LinkingTo finds
# its headers) and without R CMD check's R_TESTS; stops with the output
# (kept in `log`) if it fails.
install_client <- function(pkg, lib, log) {
  status <- with_env(c(R_LIBS = paste(unique(c(dirname(system.file(package = "RcppSpool")), .libPaths())),
                                      collapse = .Platform$path.sep), R_TESTS = ""),
                     system2(file.path(R.home("bin"), "R"),
                             c("CMD", "INSTALL", "--no-test-load", "--no-docs", paste0("--library=", shQuote(lib)),
                               shQuote(pkg)), stdout = log, stderr = log))
  if (status != 0) stop("R CMD INSTALL ", basename(pkg), " failed:\n", paste(readLines(log), collapse = "\n"))
  invisible(lib)
}
