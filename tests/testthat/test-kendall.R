# kendall_matrix(): Knight's O(n log n) Kendall's tau-b, checked against R's
# O(n^2) cor(method = "kendall"), which computes the same tau-b.

max_diff <- function(a, b) max(abs(a - b), na.rm = FALSE)

test_that("it agrees with cor() to 1e-12 on continuous data", {
  set.seed(1)
  x <- matrix(rnorm(300 * 7), 300, 7)
  x[, 2] <- x[, 2] + x[, 1]        # some real dependence
  x[, 3] <- -exp(x[, 1])           # a monotone function: tau = -1
  ref <- cor(x, method = "kendall")
  for (nt in c(0, 1, 2, 3)) {
    expect_lt(max_diff(kendall_matrix(x, nThreads = nt), ref), 1e-12)
  }
  expect_equal(kendall_matrix(x, nThreads = 2)[1, 3], -1)
  expect_true(isSymmetric(kendall_matrix(x, nThreads = 2)))
})

test_that("it agrees with cor() to 1e-12 with ties in x, in y and in both", {
  set.seed(2)
  rounded <- round(matrix(rnorm(400 * 6), 400, 6), 1)      # many small ties
  few <- matrix(sample(1:3, 500 * 5, replace = TRUE), 500)  # huge tie groups
  mixed <- cbind(rounded[1:300, 1:3], few[1:300, 1:2], rnorm(300))
  binary <- matrix(rbinom(200 * 4, 1, 0.3), 200)
  for (x in list(rounded, few, mixed, binary)) {
    expect_lt(max_diff(kendall_matrix(x, nThreads = 2), cor(x, method = "kendall")), 1e-12)
  }
  # joint ties: the same pairs repeated
  z <- rbind(mixed, mixed, mixed[1:50, ])
  expect_lt(max_diff(kendall_matrix(z, nThreads = 2), cor(z, method = "kendall")), 1e-12)
})

test_that("the result is bitwise the same for any number of threads", {
  set.seed(3)
  x <- round(matrix(rnorm(500 * 30), 500), 1)
  ref <- kendall_matrix(x, nThreads = 1)
  for (nt in c(0, 2, 4, 7)) expect_identical(kendall_matrix(x, nThreads = nt), ref)
})

test_that("large n: exact counts beyond 2^31 pairs", {
  # y is x with k disjoint adjacent swaps: exactly k discordant pairs, no ties.
  n <- 70000  # n(n-1)/2 = 2.45e9 pairs, more than an int can count
  k <- 12345
  x <- as.numeric(seq_len(n))
  y <- x
  idx <- 2 * seq_len(k) - 1
  y[idx] <- x[idx + 1]
  y[idx + 1] <- x[idx]
  n0 <- n * (n - 1) / 2
  tau <- kendall_matrix(cbind(x, y, rev(x)), nThreads = 2)
  expect_equal(tau[1, 2], (n0 - 2 * k) / n0, tolerance = 1e-14)
  expect_equal(tau[1, 3], -1)
  expect_equal(tau[2, 3], -(n0 - 2 * k) / n0, tolerance = 1e-14)
})

test_that("missing values are handled as cor(use = ) handles them", {
  set.seed(4)
  x <- round(matrix(rnorm(60 * 5), 60, dimnames = list(NULL, letters[1:5])), 1)
  x[c(3, 17), 1] <- NA
  x[5, 2] <- NaN
  x[c(3, 40), 4] <- NA
  for (use in c("everything", "complete.obs", "na.or.complete", "pairwise.complete.obs")) {
    got <- kendall_matrix(x, use = use, nThreads = 2)
    # (cor() sometimes warns about NaN columns here; what it returns is what counts)
    ref <- suppressWarnings(cor(x, method = "kendall", use = use))
    expect_identical(is.na(got), is.na(ref), info = use)
    expect_lt(max_diff(got[!is.na(got)], ref[!is.na(ref)]), 1e-12)
    expect_identical(dimnames(got), dimnames(ref))
  }
  expect_error(kendall_matrix(x, use = "all.obs"), "missing values")
  expect_equal(kendall_matrix(x[-c(3, 5, 17, 40), ], use = "all.obs"),
               cor(x[-c(3, 5, 17, 40), ], method = "kendall"), tolerance = 1e-12)
  # partial matching, as cor()
  expect_identical(kendall_matrix(x, use = "pairwise"), kendall_matrix(x, use = "pairwise.complete.obs"))
  # fewer than 2 complete rows
  y <- cbind(c(1, NA, 3), c(NA, 2, NA))
  expect_error(kendall_matrix(y, use = "complete.obs"), "fewer than 2 complete")
  expect_identical(kendall_matrix(y, use = "na.or.complete"), matrix(NA_real_, 2, 2))
  pw <- kendall_matrix(y, use = "pairwise.complete.obs")
  expect_true(all(is.na(pw[1, 2]), is.na(pw[2, 2])))
  expect_equal(pw[1, 1], 1)
})

test_that("constant columns give NA with cor()'s warning", {
  x <- cbind(a = c(1, 2, 3, 4), b = c(1, 1, 1, 1), c = c(4, 3, 2, 5))
  expect_warning(got <- kendall_matrix(x), "standard deviation is zero")
  ref <- suppressWarnings(cor(x, method = "kendall"))
  expect_identical(is.na(got), is.na(ref))
  expect_equal(got[!is.na(got)], ref[!is.na(ref)], tolerance = 1e-12)
  expect_warning(got <- kendall_matrix(x, use = "pairwise.complete.obs"), "standard deviation is zero")
  expect_true(is.na(got["b", "b"]))
  expect_silent(kendall_matrix(x[, c("a", "c")]))
})

test_that("it accepts data frames, integer and logical data, and keeps names", {
  set.seed(5)
  df <- data.frame(u = rnorm(50), v = sample(1:5, 50, TRUE), w = runif(50) > 0.5)
  got <- kendall_matrix(df, nThreads = 2)
  expect_equal(dimnames(got), list(c("u", "v", "w"), c("u", "v", "w")))
  expect_lt(max_diff(got, cor(as.matrix(df), method = "kendall")), 1e-12)
  m <- matrix(sample(1:10, 100, TRUE), 20)
  expect_lt(max_diff(kendall_matrix(m), cor(m, method = "kendall")), 1e-12)
  expect_lt(max_diff(kendall_matrix(m > 5), cor(m > 5, method = "kendall")), 1e-12)
  # Inf is an ordinary value
  expect_equal(kendall_matrix(cbind(c(1, Inf, 3), c(1, 2, 3)))[1, 2], 1 / 3)
})

test_that("edge cases: one column, no columns, two rows", {
  expect_identical(kendall_matrix(matrix(c(3, 1, 2), 3)), matrix(1, 1, 1))
  expect_identical(kendall_matrix(matrix(numeric(0), 5, 0)), matrix(numeric(0), 0, 0))
  expect_equal(kendall_matrix(cbind(c(1, 2), c(2, 1))), matrix(c(1, -1, -1, 1), 2))
})

test_that("bad input gives clear errors", {
  expect_error(kendall_matrix(rnorm(10)), "must be a matrix or a data frame")
  expect_error(kendall_matrix(list(1, 2)), "must be a matrix or a data frame")
  expect_error(kendall_matrix(matrix(letters[1:6], 3)), "must be numeric")
  expect_error(kendall_matrix(matrix(1i, 3, 2)), "must be numeric")
  expect_error(kendall_matrix(data.frame(a = 1:3, b = factor(1:3))), "every column of x must be numeric; not: b")
  expect_error(kendall_matrix(matrix(1:3, 1)), "at least 2 rows")
  expect_error(kendall_matrix(matrix(numeric(0), 0, 3)), "at least 2 rows")
  x <- matrix(rnorm(20), 10)
  expect_error(kendall_matrix(x, use = "sometimes"), "should be one of")
  for (bad in list(-1, 1.5, NA, "2", c(1, 2), 2000, NULL)) {
    expect_error(kendall_matrix(x, nThreads = bad), "nThreads must be a whole number from 0 to 1024")
  }
})

test_that("it is at least 20 times faster than cor() for n = 2000, d = 20", {
  skip_on_cran()
  set.seed(6)
  x <- matrix(rnorm(2000 * 20), 2000)
  t_cor <- system.time(ref <- cor(x, method = "kendall"))[["elapsed"]]
  t_ours <- numeric(3)
  for (i in 1:3) t_ours[i] <- system.time(got <- kendall_matrix(x))[["elapsed"]]
  t_ours <- median(t_ours)
  expect_lt(max_diff(got, ref), 1e-12)
  message(sprintf("kendall_matrix: %.3f s, cor(): %.3f s, %.0fx", t_ours, t_cor, t_cor / max(t_ours, 1e-3)))
  # A loose sanity bound (the real ratio is in the hundreds): timings on a
  # busy machine are noisy.
  expect_gt(t_cor / max(t_ours, 1e-3), 20)
})

# The package's own entry points turn the library's exceptions into R's
# conditions themselves (src/r_values.h, no Rcpp): the user's interrupt must
# come back as R's interrupt condition, not as an error, and the pool work.
test_that("a real SIGINT during kendall_matrix() is R's interrupt, and the next call is right", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  p <- start_child_r(c(
    "library(RcppSpool)",
    "set.seed(1); x <- matrix(rnorm(4000 * 500), 4000)",  # about 10 s on 2 threads
    "cat('READY\\n')",
    "t0 <- Sys.time()",
    "res <- tryCatch(kendall_matrix(x, nThreads = 2), interrupt = function(e) 'INTERRUPTED',",
    "                error = function(e) paste('ERROR', conditionMessage(e)))",
    "cat('RESULT', if (is.character(res)) res else 'finished', '\\n')",
    "y <- x[1:50, 1:5]",
    "cat('SECOND', isTRUE(all.equal(kendall_matrix(y, nThreads = 2), cor(y, method = 'kendall'))), '\\n')"
  ))
  on.exit(if (p$is_alive()) p$kill())
  wait_for_line(p, "^READY")
  Sys.sleep(1)
  sent <- Sys.time()
  p$signal(tools::SIGINT)
  p$wait(30000)
  waited <- as.numeric(Sys.time() - sent, units = "secs")
  out <- p$read_all_output_lines()
  expect_equal(p$get_exit_status(), 0)
  expect_true("RESULT INTERRUPTED " %in% out, info = paste(out, collapse = "\n"))
  expect_true("SECOND TRUE " %in% out, info = paste(out, collapse = "\n"))
  expect_lt(waited, 5)
})
