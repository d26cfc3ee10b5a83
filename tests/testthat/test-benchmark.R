# benchmark(): the plan, the measurements, the result's shape, printing,
# plotting, the workloads compiled at run time (RcppSpool's own and the
# competitors'), and Ctrl-C.

tiny_sizes <- list(thread_create = c(1, 2), interrupt_check = 1000, empty_jobs = c(100, 1000),
                   kde = c(20, 50), kendall = c(20, 50), fork_join = 2, nested_loops = 5, fib = c(5, 10))

own_methods <- c("serial", "RcppSpool parallelFor", "RcppSpool ThreadPool", "RcppSpool async",
                 "RcppSpool Thread", "RcppSpool main thread", "RcppSpool worker thread",
                 "Rcpp main thread", "std::thread", "std::async", "OpenMP", "OpenMP dynamic")

test_that("a small run of the package's own methods gives a complete, correct table", {
  res <- benchmark(methods = own_methods, sizes = tiny_sizes, threads = 2, reps = 2, progress = FALSE)
  expect_s3_class(res, "RcppSpool_benchmark")
  expect_s3_class(res, "data.frame")
  expect_named(res, c("workload", "d", "method", "size", "threads", "time", "speedup", "correct"))
  expect_setequal(unique(res$workload), names(tiny_sizes))
  expect_true(all(is.finite(res$time) & res$time > 0))
  # every workload with results to compare agrees with serial
  expect_true(all(res$correct[res$workload %in% c("kde", "kendall", "nested_loops", "fib")]))
  expect_true(all(is.na(res$correct[res$workload %in% c("empty_jobs", "fork_join", "thread_create")])))
  expect_equal(res$speedup[res$method == "serial"], rep(1, sum(res$method == "serial")))
  expect_true(all(is.na(res$speedup[res$workload %in% c("thread_create", "interrupt_check")])))
  # sizes and d as asked
  expect_setequal(res$size[res$workload == "kendall"], c(20, 50))
  expect_setequal(res$d[res$workload == "kde"], c(10, 100))
  expect_true(all(is.na(res$d[!res$workload %in% c("kde", "kendall")])))
  expect_equal(res$threads[res$workload == "thread_create"], res$size[res$workload == "thread_create"])
  # std::async only where it makes few threads; fib with std::async up to 15
  expect_false(any(res$method == "std::async" & res$workload == "nested_loops"))
  s <- attr(res, "settings")
  expect_equal(s$threads, 2L)
  expect_equal(s$reps, 2L)
  expect_named(s$capacity, c("before", "after"))
  expect_true(all(s$capacity > 0.2 & s$capacity < 4))  # 2 threads vs 1: near 2 when idle
  if (s$openmp) {
    expect_true(all(c("OpenMP", "OpenMP dynamic") %in% res$method))
  } else {
    expect_true(all(c("OpenMP", "OpenMP dynamic") %in% attr(res, "skipped")$method))
  }
})

test_that("print() shows a table per workload and plot() draws every workload", {
  res <- benchmark(workloads = c("kendall", "fork_join", "interrupt_check"),
                   methods = c("RcppSpool parallelFor", "std::thread", "RcppSpool main thread"),
                   sizes = tiny_sizes, threads = 2, reps = 1, progress = FALSE)
  out <- capture.output(print(res))
  expect_true(any(grepl("Kendall's tau matrix, d = 100", out, fixed = TRUE)))
  expect_true(any(grepl("Fork-join latency", out, fixed = TRUE)))
  expect_true(any(grepl("RcppSpool parallelFor", out, fixed = TRUE)))
  expect_true(any(grepl("[0-9.]+x\\)", out)))  # speedups
  expect_output(print(res, tidy = TRUE), "workload")
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  expect_identical(plot(res), res)
  plot(res, workload = "kendall", speedup = FALSE, legend = FALSE)
  grDevices::dev.off()
  expect_gt(file.size(f), 1000)
  expect_error(plot(res, workload = "fib"), "no results for workload")
})

test_that("the progress bar is shown", {
  out <- capture.output(benchmark(workloads = "fork_join", methods = "RcppSpool parallelFor",
                                  sizes = list(fork_join = 2), reps = 1, progress = TRUE))
  expect_true(any(grepl("100%", out, fixed = TRUE)))
})

test_that("bad arguments are errors", {
  expect_error(benchmark(workloads = "nonsense"), "unknown workload")
  expect_error(benchmark(methods = "TBB flow graph"), "unknown method")
  expect_error(benchmark(sizes = list(kendall = -1)), "sizes must be")
  expect_error(benchmark(sizes = list(nonsense = 10)), "sizes must be")
  expect_error(benchmark(threads = 0), "at least 1")
  expect_error(benchmark(threads = 1.5), "threads must be a whole number")
  expect_error(benchmark(reps = 0), "reps must be a whole number of at least 1, not 0")
  expect_error(benchmark(reps = 2.5), "reps must be a whole number of at least 1, not 2.5")
  expect_error(benchmark(reps = Inf), "reps must be a whole number of at least 1, not Inf")
  expect_error(benchmark(reps = NA_real_), "reps must be a whole number of at least 1, not NA")
  expect_error(benchmark(reps = 1:2), "reps must be .*not an object of class integer and length 2")
  expect_error(benchmark(quick = "yes"), "quick must be TRUE or FALSE, not yes")
  expect_error(benchmark(quick = NA), "quick must be TRUE or FALSE, not NA")
})

test_that("the RcppParallel and RcppThread workloads compile and agree with serial", {
  skip_on_cran()
  skip_if_not_installed("RcppParallel")
  skip_if_not_installed("RcppThread")
  res <- benchmark(workloads = c("kendall", "empty_jobs", "thread_create", "interrupt_check", "fib"),
                   methods = c("RcppParallel", "RcppSpool (RcppParallel API)", "RcppThread parallelFor",
                               "RcppThread ThreadPool", "RcppThread Thread", "RcppThread main thread",
                               "RcppThread worker thread"),
                   sizes = tiny_sizes, threads = 2, reps = 1, progress = FALSE)
  expect_true(all(c("RcppParallel", "RcppSpool (RcppParallel API)", "RcppThread parallelFor", "RcppThread ThreadPool", "RcppThread Thread",
                    "RcppThread main thread", "RcppThread worker thread") %in% res$method))
  expect_true(all(is.finite(res$time)))
  expect_true(all(res$correct[res$workload %in% c("kendall", "fib")]))
  expect_equal(nrow(attr(res, "skipped")), 0)
  # RcppThread does not run fib (it deadlocks): no such row
  expect_false(any(startsWith(res$method, "RcppThread") & res$workload == "fib"))
})

test_that("Ctrl-C stops a benchmark promptly", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  # The child compiles the workloads (or loads them from this session's
  # cache) before it says READY: the interrupt must come while it measures.
  p <- start_child_r(c(
    "library(RcppSpool)",
    sprintf("options(RcppSpool.bench_cache = %s)", deparse(RcppSpool:::bench_cache_dir())),
    "invisible(suppressMessages(benchmark(workloads = 'fork_join', methods = 'RcppSpool parallelFor',",
    "                                     sizes = list(fork_join = 2), reps = 1, progress = FALSE)))",
    "cat('READY\\n')",
    "res <- tryCatch(benchmark(workloads = 'kendall', methods = 'RcppSpool parallelFor',",
    "                          sizes = list(kendall = c(1000, 2000, 4000)), reps = 100, progress = FALSE),",
    "  interrupt = function(e) { cat(sprintf('CAUGHT %.6f\\n', as.numeric(Sys.time()))); NULL })",
    "cat('DONE', is.null(res), '\\n')"
  ))
  on.exit(if (p$is_alive()) p$kill())
  wait_for_line(p, "^READY", timeout = 300)
  Sys.sleep(1.5)
  sent <- as.numeric(Sys.time())
  p$signal(tools::SIGINT)
  p$wait(30000)
  out <- p$read_all_output_lines()
  caught <- grep("^CAUGHT", out, value = TRUE)
  expect_length(caught, 1)
  expect_true("DONE TRUE " %in% out)
  expect_lt(as.numeric(sub("CAUGHT ", "", caught)) - sent, 2)
})
