# Code written for RcppParallel compiles against RcppSpool's compatibility
# header (RcppSpool/RcppParallel.h) after a mechanical swap of the include,
# the depends line and the namespace, and gives the same results.
#
# rcppparallel-examples.cpp holds RcppParallel's four documented examples
# (vector sum, matrix square root, Jensen-Shannon distance matrix, inner
# product) as RcppParallel's documentation writes them. It is compiled with
# Rcpp::sourceCpp() in child R processes: migrated, against RcppSpool, and,
# when RcppParallel is installed, as it is, against RcppParallel. Both run
# side by side, so the test costs about one compilation.

skip_on_cran()
skip_if_not_installed("callr")
skip_if_not_installed("Rcpp")

# The migration a user does by hand: nothing else in the file changes.
migrate_from_rcppparallel <- function(lines) {
  lines <- gsub("#include <RcppParallel.h>", "#include <RcppSpool/RcppParallel.h>", lines, fixed = TRUE)
  lines <- gsub("// [[Rcpp::depends(RcppParallel)]]", "// [[Rcpp::depends(RcppSpool)]]", lines, fixed = TRUE)
  lines <- gsub("using namespace RcppParallel;", "using namespace RcppSpool::RcppParallel;", lines, fixed = TRUE)
  gsub("(?<!RcppSpool::)RcppParallel::", "RcppSpool::RcppParallel::", lines, perl = TRUE)
}

# Runs in the child: compiles `file` and calls every exported function.
run_rcppparallel_examples <- function(file) {
  env <- new.env()
  Rcpp::sourceCpp(file, env = env, cacheDir = tempfile("cache"), rebuild = TRUE)
  set.seed(42)
  x <- as.numeric(1:1e6)             # sums of whole numbers: exact in any order
  m <- matrix(runif(200 * 50), 200)
  p <- m / rowSums(m)                 # rows are probability distributions
  a <- as.numeric(sample(100, 1e5, replace = TRUE))
  b <- as.numeric(sample(100, 1e5, replace = TRUE))
  uneven <- (-1)^(1:1e5) * 10^(1:1e5 %% 9) / (1:1e5 + 2)  # the order of additions shows
  list(
    sum = env$parallelVectorSum(x),
    sqrt = env$parallelMatrixSqrt(m),
    js = env$rcpp_parallel_js_distance(p),
    inner = env$parallelInnerProduct(a, b),
    emptySum = env$parallelVectorSum(numeric()),
    uneven = vapply(c(1L, 2L, 3L, 4L), function(t) env$parallelVectorSumGrain(uneven, 100L, t), 1),
    unevenGrains = vapply(c(1L, 1000L, 1e5L), function(g) env$parallelVectorSumGrain(uneven, g, 2L), 1),
    inputs = list(x = x, m = m, p = p, a = a, b = b, uneven = uneven)
  )
}

js_distance_in_r <- function(p) {
  kl <- function(u, v) sum(ifelse(u > 0 & v > 0, log(u / v) * u, 0))
  n <- nrow(p)
  d <- matrix(0, n, n)
  for (i in seq_len(n)) for (j in seq_len(i - 1)) {
    avg <- (p[i, ] + p[j, ]) / 2
    d[i, j] <- d[j, i] <- sqrt(0.5 * (kl(p[i, ], avg) + kl(p[j, ], avg)))
  }
  d
}

test_that("the migration is mechanical", {
  original <- readLines(test_path("rcppparallel-examples.cpp"))
  migrated <- migrate_from_rcppparallel(original)
  changed <- original != migrated
  # The include, the depends line, the using directive and one qualified call.
  expect_identical(sum(changed), 4L)
  expect_identical(gsub("RcppSpool::RcppParallel|RcppSpool/RcppParallel|RcppSpool", "RcppParallel",
                        migrated[changed]), original[changed])
  expect_false(any(grepl("<RcppParallel.h>|depends\\(RcppParallel\\)|(?<!RcppSpool::)RcppParallel::",
                         migrated, perl = TRUE)))
  # Applying it twice changes nothing more.
  expect_identical(migrate_from_rcppparallel(migrated), migrated)
})

test_that("RcppParallel's documented examples give RcppParallel's results through RcppSpool", {
  # sourceCpp() finds the headers in the installed package (base::system.file:
  # under pkgload::load_all() the shimmed one would find the source tree).
  skip_if_not(nzchar(base::system.file("include", "RcppSpool", "RcppParallel.h", package = "RcppSpool")),
              "RcppSpool (with RcppParallel.h) is not installed")
  dir <- tempfile("rcppparallel")
  dir.create(dir)
  original <- readLines(test_path("rcppparallel-examples.cpp"))
  migrated_file <- file.path(dir, "migrated.cpp")
  writeLines(migrate_from_rcppparallel(original), migrated_file)
  ours <- start_r_job(run_rcppparallel_examples, list(migrated_file))
  theirs <- NULL
  if (requireNamespace("RcppParallel", quietly = TRUE)) {
    original_file <- file.path(dir, "original.cpp")
    writeLines(original, original_file)
    theirs <- start_r_job(run_rcppparallel_examples, list(original_file))
  }

  res <- finish_r_job(ours, what = "compiling and running the RcppParallel examples against RcppSpool")
  input <- res$inputs

  # Against values computed in R.
  expect_identical(res$sum, sum(input$x))
  expect_identical(res$sqrt, sqrt(input$m))
  expect_equal(res$js, js_distance_in_r(input$p), tolerance = 1e-12)
  expect_identical(res$inner, sum(input$a * input$b))
  expect_identical(res$emptySum, 0)
  # A reduce is bitwise the same for any thread count, given the grain size.
  expect_identical(length(unique(res$uneven)), 1L)
  expect_equal(res$uneven[1], sum(input$uneven), tolerance = 1e-12)
  expect_equal(res$unevenGrains, rep(sum(input$uneven), 3), tolerance = 1e-12)

  # Against RcppParallel itself: identical where the order of additions
  # cannot matter (TBB's reduce splits as threads come free).
  if (is.null(theirs)) skip("RcppParallel is not installed")
  ref <- finish_r_job(theirs, what = "compiling and running the RcppParallel examples against RcppParallel")
  expect_identical(res$inputs, ref$inputs)
  for (name in c("sum", "sqrt", "js", "inner", "emptySum")) {
    expect_identical(res[[name]], ref[[name]], label = name)
  }
  expect_equal(res$uneven, ref$uneven, tolerance = 1e-12)
  expect_equal(res$unevenGrains, ref$unevenGrains, tolerance = 1e-12)
})

test_that("setThreadOptions() and defaultNumThreads() work as RcppParallel's, with clear errors", {
  old <- Sys.getenv("RCPP_PARALLEL_NUM_THREADS", NA_character_)
  on.exit(if (is.na(old)) Sys.unsetenv("RCPP_PARALLEL_NUM_THREADS") else
    Sys.setenv(RCPP_PARALLEL_NUM_THREADS = old))
  setThreadOptions(numThreads = 3)
  expect_identical(Sys.getenv("RCPP_PARALLEL_NUM_THREADS"), "3")
  expect_identical(defaultNumThreads(), 3L)
  expect_identical(setThreadOptions("auto"), "3")
  expect_identical(Sys.getenv("RCPP_PARALLEL_NUM_THREADS", NA), NA_character_)
  expect_identical(defaultNumThreads(), as.integer(getThreads()))
  expect_error(setThreadOptions(0), "whole number from 1 to 1024, not 0")
  expect_error(setThreadOptions(2.5), "whole number from 1 to 1024, not 2.5")
  expect_error(setThreadOptions("many"), "whole number from 1 to 1024, not many")
  expect_error(setThreadOptions(c(2, 3)), "not an object of class numeric and length 2")
  expect_error(setThreadOptions(2, stackSize = -1), "stackSize must be \"auto\" or a positive number, not -1")
  setThreadOptions(2, stackSize = 1e6)  # accepted, ignored
  expect_identical(defaultNumThreads(), 2L)
})
