# RcppThread's own test suite, run against RcppSpool with the names swapped:
# tests/tests.cpp and tests/testthat/tests.R of RcppThread's source tarball
# (fetched by tools/install-deps.sh into .deps/ with R's configured
# repository; RCPPSPOOL_RCPPTHREAD_TARBALL names another one). Every
# expectation must pass: 5 runs of its 19 tests. Its "Thread pool" tests freed
# vectors and pools while nested loops still ran before the engine counted work
# pushed from loop iterations (R aborted with "malloc(): unsorted double
# linked list corrupted").

skip_on_cran()
skip_if_not_installed("callr")
skip_if_not_installed("Rcpp")

rcppthread_tarball <- function() {
  given <- Sys.getenv("RCPPSPOOL_RCPPTHREAD_TARBALL")
  if (nzchar(given)) return(given)
  found <- Sys.glob(file.path(test_path("..", "..", ".deps"), "RcppThread_*.tar.gz"))
  if (length(found)) utils::tail(sort(found), 1) else ""
}

# In the child: unpack, swap the names, compile and run the suite.
run_rcppthread_suite <- function(tarball, dir) {
  utils::untar(tarball, exdir = dir)
  root <- file.path(dir, "RcppThread")
  for (f in file.path(root, c("tests/tests.cpp", "tests/testthat/tests.R"))) {
    x <- readLines(f)
    x <- gsub("RcppThread", "RcppSpool", x, fixed = TRUE)
    writeLines(gsub("RCPPTHREAD", "RCPPSPOOL", x, fixed = TRUE), f)
  }
  owd <- setwd(file.path(root, "tests", "testthat"))
  on.exit(setwd(owd))
  Sys.setenv(NOT_CRAN = "true")
  res <- testthat::test_file("tests.R", reporter = "silent", package = "RcppSpool",
                             load_package = "installed")
  df <- as.data.frame(res)
  df[, c("context", "test", "nb", "failed", "skipped", "error", "warning")]
}

test_that("RcppThread's own test suite passes with the names swapped", {
  tarball <- rcppthread_tarball()
  if (!nzchar(tarball) || !file.exists(tarball))
    skip("no RcppThread source tarball in .deps/ (tools/install-deps.sh fetches it)")
  job <- start_r_job(run_rcppthread_suite, list(normalizePath(tarball), tempfile("rcppthread")))
  df <- finish_r_job(job, timeout = 300, what = "RcppThread's test suite")
  message(sprintf("RcppThread's suite (%s): %d tests, %d expectations, %d failed, %d skipped",
                  basename(tarball), nrow(df), sum(df$nb), sum(df$failed), sum(df$skipped)))
  expect_equal(nrow(df), 95)
  expect_equal(sum(df$failed), 0, info = paste(df$test[df$failed > 0], collapse = ", "))
  expect_false(any(df$error), info = paste(df$test[df$error], collapse = ", "))
  expect_equal(sum(df$skipped), 0)
  expect_gte(sum(df$nb), 95)
})
