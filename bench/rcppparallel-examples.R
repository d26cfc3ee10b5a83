#!/usr/bin/env Rscript
# RcppParallel's four documented examples (tests/testthat/rcppparallel-examples.cpp)
# through RcppSpool's compatibility header against RcppParallel itself, in one
# run: median wall time of `reps` calls each, same inputs, default thread
# counts (RcppSpool's defaultThreads(); TBB's automatic).
#
#   Rscript bench/rcppparallel-examples.R [reps]     # about 30 s with 15 reps
#
# Needs RcppSpool (with RcppSpool/RcppParallel.h), RcppParallel and Rcpp.

reps <- if (length(commandArgs(TRUE))) as.integer(commandArgs(TRUE)[1]) else 15L
here <- tryCatch(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))),
                 error = function(e) "bench")
src <- file.path(here, "..", "tests", "testthat", "rcppparallel-examples.cpp")
original <- readLines(src)
migrated <- original
migrated <- gsub("#include <RcppParallel.h>", "#include <RcppSpool/RcppParallel.h>", migrated, fixed = TRUE)
migrated <- gsub("Rcpp::depends(RcppParallel)", "Rcpp::depends(RcppSpool)", migrated, fixed = TRUE)
migrated <- gsub("using namespace RcppParallel;", "using namespace RcppSpool::RcppParallel;", migrated, fixed = TRUE)
migrated <- gsub("(?<!RcppSpool::)RcppParallel::", "RcppSpool::RcppParallel::", migrated, perl = TRUE)

build <- function(lines) {
  f <- tempfile(fileext = ".cpp")
  writeLines(lines, f)
  env <- new.env()
  Rcpp::sourceCpp(f, env = env, cacheDir = tempfile("cache"))
  env
}
libs <- list(RcppParallel = build(original), "RcppSpool (RcppParallel API)" = build(migrated))

set.seed(1)
x <- runif(1e7)
m <- matrix(runif(2000 * 1000), 2000)
p <- matrix(runif(500 * 100), 500)
p <- p / rowSums(p)
a <- runif(1e7)
b <- runif(1e7)
cases <- list(
  "vector sum (1e7)" = function(e) e$parallelVectorSum(x),
  "matrix sqrt (2000 x 1000)" = function(e) e$parallelMatrixSqrt(m),
  "JS distance (500 x 100)" = function(e) e$rcpp_parallel_js_distance(p),
  "inner product (1e7)" = function(e) e$parallelInnerProduct(a, b)
)
time_ms <- function(f) {
  f()  # warm-up
  t <- vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 1)
  stats::median(t) * 1000
}
rows <- list()
for (case in names(cases)) {
  res <- lapply(libs, function(e) cases[[case]](e))
  same <- isTRUE(all.equal(res[[1]], res[[2]], tolerance = 1e-10))
  ms <- vapply(libs, function(e) time_ms(function() cases[[case]](e)), 1)
  rows[[case]] <- data.frame(example = case, RcppParallel_ms = ms[[1]], RcppSpool_ms = ms[[2]],
                             ratio = round(ms[[2]] / ms[[1]], 2), same_result = same)
}
cat(sprintf("%d reps, medians; RcppSpool threads: %d; RcppParallel %s, RcppSpool %s\n", reps,
            RcppSpool::getThreads(), packageVersion("RcppParallel"), packageVersion("RcppSpool")))
print(do.call(rbind, rows), row.names = FALSE)
