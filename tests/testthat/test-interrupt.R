# A real SIGINT to a child R process running a long parallel loop whose body
# never checks for interrupts (10,000 iterations of 5 ms: about 25 s on 2
# threads). The loop must stop promptly with R's interrupt condition, and the
# same pool must then run a loop correctly.
interrupt_once <- function() {
  p <- start_child_r(c(
    "library(RcppSpool)",
    "cat('READY\\n')",
    "res <- tryCatch(spoolTests::.spool_sleepy_loop(10000L, 5, 2L),",
    "  interrupt = function(e) { cat(sprintf('CAUGHT %.6f %s\\n', as.numeric(Sys.time()), paste(class(e), collapse = ','))); -1L })",
    "cat('RESULT', res, '\\n')",
    "cat('SECOND', spoolTests::.spool_sleepy_loop(400L, 1, 2L), '\\n')"
  ))
  on.exit(if (p$is_alive()) p$kill())
  wait_for_line(p, "^READY")
  Sys.sleep(0.7)  # well inside the loop
  sent <- as.numeric(Sys.time())
  p$signal(tools::SIGINT)
  p$wait(30000)
  out <- c(p$read_all_output_lines())
  err <- p$read_all_error_lines()
  caught <- grep("^CAUGHT", out, value = TRUE)
  list(latency = if (length(caught)) as.numeric(strsplit(caught, " ")[[1]][2]) - sent else NA,
       class = if (length(caught)) strsplit(caught, " ")[[1]][3] else NA,
       out = out, err = err, status = p$get_exit_status())
}

test_that("SIGINT stops a parallel loop within 0.5 s (median of 5) and the pool works afterwards", {
  skip_on_cran()
  skip_if_not_installed("processx")
  skip_on_os("windows")
  runs <- lapply(1:5, function(i) interrupt_once())
  for (r in runs) {
    expect_equal(r$status, 0)
    expect_equal(r$class, "interrupt,condition")
    expect_true("RESULT -1 " %in% r$out)
    expect_true("SECOND 400 " %in% r$out)
    expect_true(any(grepl("C++ call interrupted by the user.", r$err, fixed = TRUE)))
  }
  latency <- vapply(runs, `[[`, numeric(1), "latency")
  message(sprintf("interrupt latency (s): %s; median %.3f",
                  paste(sprintf("%.3f", latency), collapse = " "), median(latency)))
  expect_lt(median(latency), 0.5)
})
