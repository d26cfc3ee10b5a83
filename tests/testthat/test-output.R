test_that("4 threads x 1000 lines through Rcout arrive whole, each exactly once", {
  skip_if_not_installed("processx")
  r <- run_child_r(c("library(RcppSpool)", "spoolTests::.spool_print_lines(4L, 1000L, FALSE)"))
  expect_equal(r$status, 0)
  lines <- r$stdout
  expect_length(lines, 4000)
  expect_true(all(grepl("^thread [0-3] line [0-9]+ end$", lines)))
  expect_equal(anyDuplicated(lines), 0)
  # within a thread, lines keep their order
  for (t in 0:3) {
    mine <- lines[startsWith(lines, paste0("thread ", t, " "))]
    idx <- as.integer(sub("^thread [0-3] line ([0-9]+) end$", "\\1", mine))
    expect_identical(idx, 0:999)
  }
  expect_false(any(grepl("^thread", r$stderr)))
})

test_that("Rcerr goes to stderr only, never to stdout", {
  skip_if_not_installed("processx")
  r <- run_child_r(c("library(RcppSpool)", "spoolTests::.spool_print_lines(2L, 100L, TRUE)",
                     "cat('stdout marker\\n')"))
  expect_equal(r$status, 0)
  expect_false(any(grepl("^thread", r$stdout)))
  expect_equal(sum(grepl("^thread [01] line [0-9]+ end$", r$stderr)), 200)
  expect_true("stdout marker" %in% r$stdout)
})

test_that("a Thread's last text without a newline is printed when it ends", {
  # It was kept in the thread's own buffer, waiting for a line end, and lost
  # with the thread.
  out <- capture.output(spool_tests()$.spool_thread_tail("the tail"))
  expect_identical(out, "the tail")
})

test_that("output of loop bodies on workers is released by the end of the call", {
  out <- capture.output(spool_tests()$.spool_print_from_loop(200L, 2L))
  expect_length(out, 200)
  expect_setequal(out, paste("item", 0:199, "of the loop"))
})
