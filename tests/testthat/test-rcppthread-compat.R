# Code written for RcppThread compiles against RcppSpool after a mechanical
# swap (include, namespace, depends) and gives the same results.
#
# rcppthread-example.cpp is a realistic RcppThread file (C++11, with
# `// [[Rcpp::plugins(cpp11)]]` and RCPPTHREAD_OVERRIDE_COUT/CERR). It is
# compiled with Rcpp::sourceCpp() in child R processes: once migrated, against
# RcppSpool, and, when RcppThread is installed, once as it is, against
# RcppThread. Both run side by side, so the test costs about one compilation.
# Results are checked against values computed in R, and against RcppThread's.

skip_on_cran()
skip_if_not_installed("callr")
skip_if_not_installed("Rcpp")

# The migration a user does by hand: nothing else in the file changes (the
# cpp11 plugin and the RCPPTHREAD_OVERRIDE_* macros stay).
migrate_from_rcppthread <- function(lines) {
  lines <- gsub("#include <RcppThread.h>", "#include <RcppSpool.h>", lines, fixed = TRUE)
  lines <- gsub("// [[Rcpp::depends(RcppThread)]]", "// [[Rcpp::depends(RcppSpool)]]", lines, fixed = TRUE)
  gsub("RcppThread::", "RcppSpool::", lines, fixed = TRUE)
}

# Runs in the child: compiles `file` and calls every exported function.
run_example <- function(file) {
  env <- new.env()
  Rcpp::sourceCpp(file, env = env, cacheDir = tempfile("cache"), rebuild = TRUE)
  res <- list()
  err <- utils::capture.output(
    out <- utils::capture.output(res$printing <- env$printing(5L)),
    type = "message"
  )
  res$stdout <- sort(out)
  res$stderr <- err
  res$poolPush <- env$poolPush(10L)
  res$poolPushReturn <- env$poolPushReturn(20L)
  res$poolPushReturnError <- env$poolPushReturnError()
  res$poolMap <- env$poolMap(100L)
  res$poolLoops <- env$poolLoops(50L)
  res$freeLoops <- env$freeLoops(200L, 2L)
  res$freeTasks <- env$freeTasks(10L)
  res$threads <- env$threads(3L, 100L)
  res
}

collatz_steps <- function(n) {
  steps <- 0L
  while (n != 1) {
    n <- if (n %% 2 == 0) n / 2 else 3 * n + 1
    steps <- steps + 1L
  }
  steps
}

test_that("the migration is mechanical", {
  original <- readLines(test_path("rcppthread-example.cpp"))
  migrated <- migrate_from_rcppthread(original)
  changed <- original != migrated
  expect_gt(sum(changed), 20)
  # Only the include, the depends line and `RcppThread::` qualifiers change.
  expect_identical(gsub("RcppThread", "RcppSpool", original[changed], fixed = TRUE),
                   migrated[changed])
  expect_false(any(grepl("RcppThread::|<RcppThread.h>|depends\\(RcppThread\\)", migrated)))
  expect_true("// [[Rcpp::plugins(cpp11)]]" %in% migrated)
  expect_true("#define RCPPTHREAD_OVERRIDE_COUT 1" %in% migrated)
  expect_true("#define RCPPTHREAD_OVERRIDE_CERR 1" %in% migrated)
})

test_that("a migrated RcppThread file compiles and gives RcppThread's results", {
  # sourceCpp() finds the headers in the installed package (base::system.file:
  # under pkgload::load_all() the shimmed one would find the source tree).
  skip_if_not(nzchar(base::system.file("include", "RcppSpool.h", package = "RcppSpool")),
              "RcppSpool is not installed")
  dir <- tempfile("compat")
  dir.create(dir)
  original <- readLines(test_path("rcppthread-example.cpp"))
  migrated_file <- file.path(dir, "migrated.cpp")
  writeLines(migrate_from_rcppthread(original), migrated_file)
  ours <- start_r_job(run_example, list(migrated_file))
  theirs <- NULL
  if (requireNamespace("RcppThread", quietly = TRUE)) {
    original_file <- file.path(dir, "original.cpp")
    writeLines(original, original_file)
    theirs <- start_r_job(run_example, list(original_file))
  }

  res <- finish_r_job(ours, what = "compiling and running the example")

  # Against values computed in R.
  expect_identical(res$printing, 5L)
  expect_identical(res$stdout, sort(c(sprintf("task %d done", 0:4), "main: 5 tasks",
                                      "legacy thread 0", "legacy thread 1")))
  expect_identical(res$stderr, "legacy warning on the error stream")
  expect_equal(res$poolPush, 3 * sqrt(0:9))
  steps <- vapply(1:20, collatz_steps, integer(1))
  expect_identical(res$poolPushReturn, c(steps, sum(steps)))
  expect_identical(res$poolPushReturnError, "negative weights are not allowed")
  expect_identical(res$poolMap, sum(as.numeric(1:100)^2))
  expect_equal(res$poolLoops, list(a = (0:49) * 0.5, b = (0:49) * 0.5 + 1,
                                   c = rep(9L, 50), d = as.numeric((0:49)^2), nt = 1L))
  x <- sin(0:199)
  expect_equal(res$freeLoops$x, x)
  expect_equal(res$freeLoops$y, x^2)
  expect_equal(res$freeLoops$sum, sum(floor(x^2 * 1000)))
  expect_identical(res$freeLoops$notInterrupted, 200L)
  expect_equal(res$freeTasks, list(hits = (0:9)^2, total = sum((0:9)^2),
                                   async = collatz_steps(27) + 1.5^2))
  expect_equal(res$threads, list(part = vapply(0:2, function(id) sum(seq(id, 99, by = 3)), 1),
                                 allJoinable = TRUE, distinctIds = TRUE,
                                 noneJoinable = TRUE, cores = TRUE))

  # Against RcppThread itself.
  if (is.null(theirs)) skip("RcppThread is not installed")
  expect_identical(res, finish_r_job(theirs, what = "compiling and running the example"))
})

# Runs in the child: compiles `file` and calls every function of rcppthread-parity.cpp.
run_parity <- function(file) {
  env <- new.env()
  Rcpp::sourceCpp(file, env = env, cacheDir = tempfile("cache"), rebuild = TRUE)
  m <- matrix(as.numeric(c(5, 3, 8, 1, 9, 2, 7, 4, 6, 0, 11, 10)), nrow = 3)
  res <- list(rmatrix = env$rmatrixViews(m))
  res$progressOut <- utils::capture.output(res$progress <- env$derivedProgress(250L))
  res$index <- env$indexForms(1000L)
  res$errOut <- utils::capture.output(res$other <- env$otherNames(), type = "message")
  res
}

test_that("RcppThread's other names (RMatrix, ProgressPrinter's subclasses, index types) work the same", {
  skip_if_not(nzchar(base::system.file("include", "RcppSpool.h", package = "RcppSpool")),
              "RcppSpool is not installed")
  dir <- tempfile("parity")
  dir.create(dir)
  original <- readLines(test_path("rcppthread-parity.cpp"))
  migrated_file <- file.path(dir, "migrated.cpp")
  writeLines(migrate_from_rcppthread(original), migrated_file)
  ours <- start_r_job(run_parity, list(migrated_file))
  theirs <- NULL
  if (requireNamespace("RcppThread", quietly = TRUE)) {
    original_file <- file.path(dir, "original.cpp")
    writeLines(original, original_file)
    theirs <- start_r_job(run_parity, list(original_file))
  }
  res <- finish_r_job(ours, what = "compiling and running rcppthread-parity.cpp")

  m <- matrix(as.numeric(c(5, 3, 8, 1, 9, 2, 7, 4, 6, 0, 11, 10)), nrow = 3)
  expect_equal(res$rmatrix, list(rowSums = rowSums(m), colMax = apply(m, 2, max), doubled = 2 * m,
                                 rowSorted = sort(m[1, ]), total = sum(m), rowLength = 4L, colSize = 3L,
                                 corner = m[3, 4], rowElem = m[2, 3], colElem = m[2, 3], iterDistance = 4L))
  expect_identical(res$progress, list(finished = TRUE, time = "1h2m"))
  expect_match(res$progressOut, "^\rSteps 250/250 100% \\(done\\)")
  i <- 0:999
  expect_equal(res$index, list(a = i, b = 2 * i, c = 3 * i, d = 4 * i, e = 5 * i, sum = sum(i), items = 2L * i))
  expect_identical(res$other, list(mainHere = TRUE, mainThere = FALSE, what = "C++ call interrupted by the user."))
  expect_identical(res$errOut, "to the error stream")

  if (is.null(theirs)) skip("RcppThread is not installed")
  expect_identical(res, finish_r_job(theirs, what = "compiling and running rcppthread-parity.cpp against RcppThread"))
})
