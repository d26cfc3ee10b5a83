# RcppSpool::onMainThread(): workers hand calls of R's API to R's main
# thread (tests/testthat/testpkg/src/main_thread_test.cpp).

test_that("10,000 R callbacks from the workers of a parallel loop give the right values", {
  st <- spool_tests()
  res <- st$.spool_main_calls(function(i) i * 2 + 1, 1e6, 100L, 2L)
  called <- seq(0, 1e6 - 1, by = 100)
  expect_equal(length(res$latency_us), 10000)
  expect_identical(res$values[called + 1], called * 2 + 1)
  expect_identical(res$values[-(called + 1)], -as.numeric(setdiff(0:(1e6 - 1), called)))
  q <- stats::quantile(res$latency_us, c(0.5, 0.99))
  message(sprintf("onMainThread latency per call: median %.1f us, 99th percentile %.1f us (2 threads)",
                  q[[1]], q[[2]]))
  # The same through R's C API (no Rcpp in the callback).
  raw <- st$.spool_main_calls(function(i) i - 1, 1e4, 10L, 2L, raw = TRUE)
  expect_identical(raw$values[seq(1, 1e4, by = 10)], seq(0, 1e4 - 1, by = 10) - 1)
})

test_that("R code in the callbacks sees R's state and R's RNG on the main thread", {
  st <- spool_tests()
  calls <- new.env()
  calls$n <- 0
  res <- st$.spool_main_calls(function(i) { calls$n <- calls$n + 1; i }, 1e4, 7L, 2L)
  expect_equal(calls$n, length(seq(0, 1e4 - 1, by = 7)))
  set.seed(1)
  a <- st$.spool_main_calls(function(i) runif(1), 200, 1L, 1L)$values
  set.seed(1)
  expect_identical(a, runif(200))  # one thread: the calls run in index order
})

test_that("an R error in a callback is the loop's R error, with its message", {
  st <- spool_tests()
  boom <- function(i) if (i == 5000) stop("boom at 5000") else i
  expect_error(st$.spool_main_calls(boom, 1e4, 10L, 2L), "boom at 5000")
  expect_error(st$.spool_main_calls(boom, 1e4, 10L, 2L, raw = TRUE), "boom at 5000")
  # The error printed nothing, and the pool works afterwards.
  out <- capture.output(res <- st$.spool_main_calls(function(i) i, 1e4, 10L, 2L), type = "message")
  expect_identical(res$values[1:11], c(0, -(1:9), 10))
})

test_that("a call made on the main thread runs at once; one from a Thread runs while join() waits", {
  st <- spool_tests()
  expect_identical(st$.spool_main_call_here(function(x) x * 10), c(10, 20))
})

test_that("a real SIGINT while workers wait for R callbacks ends the call within 0.5 s; the next is right", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  p <- start_child_r(c(
    "st <- asNamespace('spoolTests')",
    "slow <- function(i) { Sys.sleep(0.002); i }",
    "cat('READY\\n')",
    "res <- tryCatch(st$.spool_main_calls(slow, 1e6, 10L, 2L), interrupt = function(e) 'INTERRUPTED',",
    "                error = function(e) paste('ERROR', conditionMessage(e)))",
    "cat('RESULT', if (is.character(res)) res else 'finished', '\\n')",
    "cat('ENDED', format(as.numeric(Sys.time()), digits = 15), '\\n')",
    "ok <- st$.spool_main_calls(function(i) i + 0.5, 1e4, 100L, 2L)",
    "cat('SECOND', identical(ok$values[seq(1, 1e4, by = 100)], seq(0, 1e4 - 1, by = 100) + 0.5), '\\n')"
  ))
  on.exit(if (p$is_alive()) p$kill())
  wait_for_line(p, "^READY")
  Sys.sleep(1)
  sent <- as.numeric(Sys.time())
  p$signal(tools::SIGINT)
  p$wait(30000)
  out <- p$read_all_output_lines()
  expect_equal(p$get_exit_status(), 0)
  expect_true("RESULT INTERRUPTED " %in% out, info = paste(out, collapse = "\n"))
  expect_true("SECOND TRUE " %in% out, info = paste(out, collapse = "\n"))
  ended <- as.numeric(sub("^ENDED ", "", grep("^ENDED", out, value = TRUE)))
  expect_length(ended, 1)
  expect_lt(ended - sent, 0.5)
})
