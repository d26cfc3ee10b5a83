# Helpers for tests that run R in a child process (real signals, forks, output).

# The library paths of this session, so a child finds the package under test
# (and the test package spoolTests, once built: helper-testpkg.R).
child_libpaths <- function() paste(.libPaths(), collapse = .Platform$path.sep)

# Builds spoolTests (helper-testpkg.R) if the child's code uses it; nothing
# when that helper is not loaded (a test file run on its own with this one).
child_needs_spool_tests <- function(code) {
  if (exists("spool_tests_for", mode = "function")) spool_tests_for(code)
}

# Writes `code` (character lines) to a script and starts Rscript on it. Code
# that uses spoolTests gets it built first.
start_child_r <- function(code, env = character()) {
  child_needs_spool_tests(code)
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  processx::process$new(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
    stdout = "|", stderr = "|",
    env = c("current", R_LIBS = child_libpaths(), env)
  )
}

# Runs `code` in Rscript to completion; returns list(status, stdout, stderr).
# processx::run() drains the pipes while it waits (a child writing more than a
# pipe holds would otherwise block forever).
run_child_r <- function(code, env = character(), timeout = 120) {
  child_needs_spool_tests(code)
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  res <- processx::run(
    file.path(R.home("bin"), "Rscript"), c("--vanilla", script),
    env = c("current", R_LIBS = child_libpaths(), env),
    error_on_status = FALSE, timeout = timeout
  )
  if (isTRUE(res$timeout)) stop("child R process did not finish within ", timeout, " s")
  split <- function(x) if (nzchar(x)) strsplit(sub("\n$", "", x), "\n", fixed = FALSE)[[1]] else character()
  list(status = res$status, stdout = split(res$stdout), stderr = split(res$stderr))
}

# Reads stdout lines until one matches `pattern` (or `timeout` seconds pass).
# A child that ended is read to the end of its output before the pattern is
# given up: its last lines may arrive between a read and the check that it
# still runs (a child that printed the line and exited was once reported as
# having printed nothing).
wait_for_line <- function(p, pattern, timeout = 30) {
  seen <- character()
  deadline <- Sys.time() + timeout
  repeat {
    ended <- !p$is_alive()  # before the read: then the read gets all it wrote
    if (ended) {
      seen <- c(seen, p$read_all_output_lines())
    } else {
      p$poll_io(100)
      seen <- c(seen, p$read_output_lines())
    }
    if (any(grepl(pattern, seen))) return(seen)
    if (ended || Sys.time() >= deadline) break
  }
  # Whether the child hung or ended (and how): a crash's report is on stderr.
  how <- if (ended) {
    p$wait(1000)
    paste0("ended, exit status ", p$get_exit_status())
  } else {
    paste0("still running after ", timeout, " s")
  }
  err <- tryCatch(if (ended) p$read_all_error_lines() else p$read_error_lines(), error = function(e) character())
  stop("no line matching '", pattern, "' from the child (", how, "); saw: ", paste(seen, collapse = " | "),
       if (length(err)) paste0("; its stderr: ", paste(utils::tail(err, 15), collapse = " | ")))
}

# Starts `fun(...)` (a function, with its arguments in `args`) in a child R
# process with this session's library paths, in the background; the child's
# output goes to a log that finish_r_job() shows when something fails.
start_r_job <- function(fun, args = list()) {
  child_needs_spool_tests(fun)
  log <- tempfile("child", fileext = ".log")
  p <- callr::r_bg(fun, args, libpath = .libPaths(), stdout = log, stderr = "2>&1",
                   package = FALSE)
  list(process = p, log = log)
}

# Waits for a job of start_r_job() and returns its result, or fails with the
# first errors and the last lines of its output. `what` names the job.
finish_r_job <- function(job, timeout = 150, what = "the child R process") {
  job$process$wait(timeout * 1000)
  if (job$process$is_alive()) {
    job$process$kill()
    stop(what, " took more than ", timeout, " s")
  }
  tryCatch(job$process$get_result(), error = function(e) {
    log <- readLines(job$log)
    stop(conditionMessage(e), "\n--- first errors in the child's output ---\n",
         paste(utils::head(grep("error", log, value = TRUE), 10), collapse = "\n"),
         "\n--- its last lines ---\n",
         paste(utils::tail(log, 20), collapse = "\n"), call. = FALSE)
  })
}
