#!/usr/bin/env Rscript
# RcppParallel's four documented examples (tests/testthat/rcppparallel-examples.cpp)
# through RcppSpool's compatibility header against RcppParallel itself, in one
# run: medians of `reps` batches of calls each, measured in turns, same inputs,
# default thread counts (RcppSpool's defaultThreads(); TBB's automatic).
# ratio: RcppSpool's median over RcppParallel's; ratio_of_rounds: the median
# of the ratios of batches measured one after the other.
#
#   Rscript bench/rcppparallel-examples.R [reps]     # about 40 s with 15 reps
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
# Each measurement is a batch of calls lasting at least ~50 ms, timed with
# Sys.time() (microseconds; system.time() counts whole milliseconds, so a
# 5 ms call read 5 or 6), and the two libraries are measured in turns, batch
# after batch, the order turning each round, each batch after 20 ms of rest
# and a warm-up call, so that both see the same state of the machine.
elapsed_ms <- function(f, k) {
  t0 <- Sys.time()
  for (i in seq_len(k)) f()
  as.numeric(difftime(Sys.time(), t0, units = "secs")) * 1000 / k
}
batch_size <- function(f) {
  f()  # warm-up
  max(1L, as.integer(ceiling(50 / max(elapsed_ms(f, 1L), 0.01))))
}
batch_ms <- function(f, k) elapsed_ms(f, k)
rows <- list()
for (case in names(cases)) {
  res <- lapply(libs, function(e) cases[[case]](e))
  same <- isTRUE(all.equal(res[[1]], res[[2]], tolerance = 1e-10))
  calls <- lapply(libs, function(e) function() cases[[case]](e))
  k <- max(vapply(calls, batch_size, 1L))
  t <- matrix(NA_real_, reps, length(libs))
  for (r in seq_len(reps)) {
    for (j in (seq_along(libs) + r) %% length(libs) + 1) {
      Sys.sleep(0.02)  # the other library's threads settle (TBB's spin after a call)
      calls[[j]]()  # warm-up
      t[r, j] <- batch_ms(calls[[j]], k)
    }
  }
  ms <- apply(t, 2, stats::median)
  rows[[case]] <- data.frame(example = case, RcppParallel_ms = signif(ms[[1]], 3),
                             RcppSpool_ms = signif(ms[[2]], 3), ratio = round(ms[[2]] / ms[[1]], 2),
                             ratio_of_rounds = round(stats::median(t[, 2] / t[, 1]), 2), same_result = same)
}
cat(sprintf("%d reps, medians; RcppSpool threads: %d; RcppParallel %s, RcppSpool %s\n", reps,
            RcppSpool::getThreads(), packageVersion("RcppParallel"), packageVersion("RcppSpool")))
print(do.call(rbind, rows), row.names = FALSE, width = 200)
