# The helpers that drive child R processes (helper-child.R) are what the
# interrupt, fork and runtime tests stand on: a helper that loses a child's
# last lines fails those tests for nothing.

# A stand-in for a processx process that has already ended, whose output
# (`lines`) is still in its pipe: a line-at-a-time read gets nothing yet
# (`partial`), reading to the end gets it all. That is the order that
# happens when the child prints its line and exits between a read and the
# check whether it still runs.
ended_child <- function(lines, status = 0L, partial = character()) {
  list(
    is_alive = function() FALSE,
    poll_io = function(ms) invisible(NULL),
    read_output_lines = function() partial,
    read_all_output_lines = function() lines,
    read_error_lines = function() character(),
    read_all_error_lines = function() "a line on stderr",
    wait = function(ms) invisible(NULL),
    get_exit_status = function() status
  )
}

test_that("wait_for_line() finds a line that a child printed just before it ended", {
  seen <- wait_for_line(ended_child(c("@@RESULT interrupt 1", "@@NEXT TRUE")), "@@NEXT", timeout = 5)
  expect_identical(seen, c("@@RESULT interrupt 1", "@@NEXT TRUE"))
})

test_that("wait_for_line() says how a child that never printed the line ended", {
  err <- tryCatch(wait_for_line(ended_child("@@RESULT interrupt 1", status = 139L), "@@NEXT", timeout = 5),
                  error = conditionMessage)
  expect_match(err, "ended, exit status 139", fixed = TRUE)
  expect_match(err, "saw: @@RESULT interrupt 1", fixed = TRUE)
  expect_match(err, "its stderr: a line on stderr", fixed = TRUE)
})

test_that("wait_for_line() reads a real child that prints and exits at once", {
  for (i in 1:5) {
    p <- start_child_r(c("cat('@@A\\n')", "cat('@@B\\n')"))
    seen <- wait_for_line(p, "@@B", timeout = 60)
    expect_true("@@B" %in% seen)
  }
  p <- start_child_r("Sys.sleep(30)")
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  expect_error(wait_for_line(p, "@@NEVER", timeout = 1), "still running after 1 s", fixed = TRUE)
})
