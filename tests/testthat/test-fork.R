# Fork safety: after the global pool has been used, parallel::mclapply()
# children and future's multicore workers run parallel loops correctly and
# never hang. A pool that existed before the fork runs everything inline on
# the calling thread in the child (its workers do not exist there), and the
# default thread count in a forked child is 1 (so a pool created there does
# not oversubscribe the machine either), unless a count is set explicitly.
#
# Every scenario runs in a child R process with a time limit, so that a hang
# fails the test instead of hanging the suite. Timings go out with message().

skip_on_os("windows")
skip_if_not_installed("processx")

# Runs `code` in a child R process; fails unless it exits with status 0
# within `timeout` seconds. Returns its stdout lines.
run_ok <- function(code, timeout = 60, env = character()) {
  res <- run_child_r(code, env = env, timeout = timeout)
  if (res$status != 0) {
    fail(paste0("child R failed (status ", res$status, "):\n",
                paste(c(res$stdout, res$stderr), collapse = "\n")))
  }
  res$stdout
}

# The values printed by the child as "key=value" lines, as a named character vector.
kv <- function(lines) {
  lines <- grep("^[A-Za-z_.0-9]+=", lines, value = TRUE)
  setNames(sub("^[^=]*=", "", lines), sub("=.*$", "", lines))
}

test_that("20 of 20 mclapply() runs after the pool was used finish within 30 s, correctly", {
  skip_on_cran()  # 20 rounds of forks; the scenario below runs on CRAN too
  code <- c(
    'suppressMessages(library(RcppSpool))',
    'ref <- spoolTests::.spool_scaled_sum(1e6, 1, 1L)  # serial reference: bitwise the same for any thread count',
    'cat("ready\\n")',
    'for (run in 1:20) {',
    '  t0 <- proc.time()[["elapsed"]]',
    '  # The parent uses the global pool with its worker threads ...',
    '  p <- spoolTests::.spool_loop_threads(40L, 1, 2L)',
    '  st <- RcppSpool:::.spool_global_pool_state()',
    '  ok <- p$iterations == 40 && p$sum == sum(0:39) && st$workers >= 1 && !st$inline &&',
    '        identical(spoolTests::.spool_scaled_sum(1e6, 1, 2L), ref)',
    '  # ... then forks; every child runs parallel loops on the inherited pool.',
    '  res <- parallel::mclapply(1:4, function(i) {',
    '    s <- spoolTests::.spool_scaled_sum(1e6, 1, 2L)',
    '    l <- spoolTests::.spool_loop_threads(200L, 0, 2L)',
    '    d <- spoolTests::.spool_scaled_sum(1e5, 1, -1L)',  # the default count
    '    st <- RcppSpool:::.spool_global_pool_state()',
    '    list(sum = s, iter = l$iterations, idx = l$sum, callerOnly = l$callerOnly, d = d,',
    '         inline = st$inline, child = isForkedChild(), threads = getThreads())',
    '  }, mc.cores = 2)',
    '  ok <- ok && length(res) == 4 && all(vapply(res, function(r) {',
    '    is.list(r) && identical(r$sum, ref) && r$iter == 200 && r$idx == sum(0:199) &&',
    '      isTRUE(r$callerOnly) && identical(r$d, spoolTests::.spool_scaled_sum(1e5, 1, 1L)) &&',
    '      isTRUE(r$inline) && isTRUE(r$child) && identical(r$threads, 1L)',
    '  }, logical(1)))',
    '  # The parent\'s pool still works after the fork.',
    '  ok <- ok && identical(spoolTests::.spool_scaled_sum(1e6, 1, 2L), ref) && !isForkedChild()',
    '  if (!ok) { cat("run", run, "FAILED\\n"); str(res) }',
    '  cat(sprintf("run %d %s %.3f\\n", run, if (ok) "ok" else "FAILED", proc.time()[["elapsed"]] - t0))',
    '}'
  )
  p <- start_child_r(code)
  on.exit(if (p$is_alive()) p$kill(), add = TRUE)
  # Each run must finish within 30 s of the one before (the first, of the
  # child's start-up, which may take a while on a loaded machine).
  lines <- character()
  runs <- character()
  deadline <- Sys.time() + 60
  while (length(runs) < 20) {
    if (Sys.time() > deadline) {
      fail(paste0("run ", length(runs) + 1, " did not finish within 30 s; seen: ",
                  paste(lines, collapse = " | "), " | stderr: ",
                  paste(p$read_all_error_lines(), collapse = " | ")))
      break
    }
    p$poll_io(100)
    new <- p$read_output_lines()
    lines <- c(lines, new)
    new_runs <- grep("^run [0-9]+ ", new, value = TRUE)
    if (length(new_runs) || any(new == "ready")) deadline <- Sys.time() + 30
    runs <- c(runs, new_runs)
    if (!p$is_alive() && !length(new)) {
      rest <- p$read_all_output_lines()  # the child ended: to the end of its output
      lines <- c(lines, rest)
      runs <- c(runs, grep("^run [0-9]+ ", rest, value = TRUE))
      break
    }
  }
  secs <- as.numeric(sub("^run [0-9]+ [A-Z a-z]+ ", "", runs))
  message(sprintf("mclapply after use: %d of 20 runs ok; seconds per run: %s (max %.3f)",
                  sum(grepl(" ok ", runs)), paste(sprintf("%.2f", secs), collapse = " "),
                  max(c(secs, 0))))
  expect_length(runs, 20)
  expect_true(all(grepl("^run [0-9]+ ok ", runs)), info = paste(lines, collapse = "\n"))
  expect_true(all(secs < 30))
})

test_that("children of a busy pool do not wait for the parent's work", {
  code <- c(
    'suppressMessages(library(RcppSpool))',
    'ref <- spoolTests::.spool_scaled_sum(1e6, 1, 1L)',
    'st <- RcppSpool:::.spool_global_pool_state()',
    'cat("parent_workers=", st$workers, "\\n", sep = "")',
    't0 <- proc.time()[["elapsed"]]',
    '# 4 tasks of 1.5 s on the global pool: its workers are busy and tasks are queued.',
    'spoolTests::.spool_busy_start(4L, 1500)',
    'res <- parallel::mclapply(1:2, function(i) {',
    '  c0 <- proc.time()[["elapsed"]]',
    '  s <- spoolTests::.spool_scaled_sum(1e6, 1, 2L)',
    '  done <- spoolTests::.spool_busy_wait()  # the parent\'s tasks are not ours to wait for',
    '  l <- spoolTests::.spool_loop_threads(100L, 0, 2L)',
    '  list(ok = identical(s, ref) && l$iterations == 100 && l$callerOnly,',
    '       done = done, secs = proc.time()[["elapsed"]] - c0)',
    '}, mc.cores = 2)',
    'fork_secs <- proc.time()[["elapsed"]] - t0',
    'cat("children_ok=", all(vapply(res, function(r) isTRUE(r$ok), NA)), "\\n", sep = "")',
    'cat("children_done=", paste(vapply(res, function(r) r$done, 1L), collapse = ","), "\\n", sep = "")',
    'cat("children_secs=", max(vapply(res, function(r) r$secs, 1)), "\\n", sep = "")',
    'cat("mclapply_secs=", fork_secs, "\\n", sep = "")',
    'cat("parent_done=", spoolTests::.spool_busy_wait(), "\\n", sep = "")',
    'cat("parent_secs=", proc.time()[["elapsed"]] - t0, "\\n", sep = "")',
    'cat("parent_after=", identical(spoolTests::.spool_scaled_sum(1e6, 1, 2L), ref), "\\n", sep = "")'
  )
  out <- kv(run_ok(code, timeout = 60))
  message(sprintf("fork while busy: children took %.3f s (mclapply %.3f s); parent's 4 x 1.5 s tasks took %.3f s",
                  as.numeric(out[["children_secs"]]), as.numeric(out[["mclapply_secs"]]),
                  as.numeric(out[["parent_secs"]])))
  expect_gte(as.integer(out[["parent_workers"]]), 1L)
  expect_identical(out[["children_ok"]], "TRUE")
  # The children neither ran nor waited for the tasks queued in the parent.
  expect_identical(out[["children_done"]], "0,0")
  expect_lt(as.numeric(out[["children_secs"]]), 1.5)
  # The parent's tasks all ran, in the parent, and the pool works afterwards.
  expect_identical(out[["parent_done"]], "4")
  expect_gte(as.numeric(out[["parent_secs"]]), 1.5 * 4 / as.integer(out[["parent_workers"]]) - 0.1)
  expect_identical(out[["parent_after"]], "TRUE")
})

test_that("isForkedChild() and the default thread count in forked children", {
  code <- c(
    'suppressMessages(library(RcppSpool))',
    'invisible(spoolTests::.spool_scaled_sum(1e5, 1, 2L))',
    'cat("parent_child=", isForkedChild(), "\\n", sep = "")',
    'cat("parent_threads=", getThreads() == availableCores(), "\\n", sep = "")',
    'r <- parallel::mclapply(1:2, function(i)',
    '  c(isForkedChild(), getThreads(), RcppSpool:::cpp_default_threads()$source,',
    '    RcppSpool:::cpp_default_threads_api()), mc.cores = 2)',
    'cat("child=", paste(unique(vapply(r, paste, "", collapse = ",")), collapse = ";"), "\\n", sep = "")',
    '# An explicit setting wins: inherited from the parent ...',
    'old <- options(RcppSpool.threads = 2)',
    'r <- parallel::mclapply(1:2, function(i) getThreads(), mc.cores = 2)',
    'cat("child_option=", paste(unlist(r), collapse = ","), "\\n", sep = "")',
    'options(old)',
    '# ... or made in the child, where a new pool gets that many workers.',
    'r <- parallel::mclapply(1:2, function(i) {',
    '  setThreads(2); p <- spoolTests::.spool_local_pool_threads(-1L, 10L, 0)',
    '  c(getThreads(), p$workers, p$iterations)',
    '}, mc.cores = 2)',
    'cat("child_set=", paste(unique(vapply(r, paste, "", collapse = ",")), collapse = ";"), "\\n", sep = "")',
    'cat("parent_after=", isForkedChild(), "\\n", sep = "")'
  )
  out <- kv(run_ok(code))
  expect_identical(out[["parent_child"]], "FALSE")
  expect_identical(out[["parent_threads"]], "TRUE")
  # In the children: forked, 1 thread by default, from the fork rule, in R and C++.
  expect_identical(out[["child"]], "TRUE,1,fork,1")
  expect_identical(out[["child_option"]], "2,2")
  expect_identical(out[["child_set"]], "2,2,10")
  expect_identical(out[["parent_after"]], "FALSE")
})

test_that("a child whose parent never used the pool makes a serial one, not a full one", {
  # The fork rule is what keeps this case from oversubscribing: the global
  # pool is new in the child, sized by the default count. The test functions
  # are loaded before the fork (as the package's own code is), not used.
  code <- c(
    'suppressMessages(library(RcppSpool))',
    'invisible(loadNamespace("spoolTests"))',
    'procThreads <- function() as.integer(sub("Threads:\\\\s*", "",',
    '  grep("^Threads:", readLines("/proc/self/status"), value = TRUE)))',
    'r <- parallel::mclapply(1:2, function(i) {',
    '  l <- spoolTests::.spool_loop_threads(50L, 1, -1L)',
    '  st <- RcppSpool:::.spool_global_pool_state()',
    '  c(l$iterations, l$concurrent, st$forked, st$workers, procThreads())',
    '}, mc.cores = 2)',
    'cat("child=", paste(unique(vapply(r, paste, "", collapse = ",")), collapse = ";"), "\\n", sep = "")'
  )
  out <- kv(run_ok(code))
  # 50 iterations, one at a time (a loop of one thread runs on R's main
  # thread); the pool was made in the child (not forked) with 1 worker; the
  # child has 2 threads (its own and that worker).
  expect_identical(out[["child"]], "50,1,0,1,2")
})

test_that("future's multicore workers run loops after the pool was used", {
  skip_if_not_installed("future")
  code <- c(
    'suppressMessages({library(RcppSpool); library(future)})',
    'ref <- spoolTests::.spool_scaled_sum(1e6, 1, 1L)',
    'invisible(spoolTests::.spool_loop_threads(40L, 1, 2L))  # the pool is in use',
    'plan(multicore, workers = 2)',
    'cat("supported=", supportsMulticore(), "\\n", sep = "")',
    't0 <- proc.time()[["elapsed"]]',
    'fs <- lapply(1:4, function(i) future({',
    '  s <- spoolTests::.spool_scaled_sum(1e6, 1, 2L)',
    '  l <- spoolTests::.spool_loop_threads(100L, 0, -1L)',
    '  list(ok = identical(s, ref) && l$iterations == 100 && l$sum == sum(0:99),',
    '       child = isForkedChild(), threads = getThreads(), mc = getOption("mc.cores"))',
    '}))',
    'vs <- value(fs)',
    'cat("secs=", proc.time()[["elapsed"]] - t0, "\\n", sep = "")',
    'cat("ok=", all(vapply(vs, function(v) isTRUE(v$ok), NA)), "\\n", sep = "")',
    'cat("child=", all(vapply(vs, function(v) isTRUE(v$child), NA)), "\\n", sep = "")',
    'cat("threads=", paste(unique(vapply(vs, function(v) v$threads, 1L)), collapse = ","), "\\n", sep = "")',
    'cat("mc=", paste(unique(vapply(vs, function(v) v$mc, 1L)), collapse = ","), "\\n", sep = "")',
    'plan(sequential)',
    'cat("parent_after=", identical(spoolTests::.spool_scaled_sum(1e6, 1, 2L), ref), "\\n", sep = "")'
  )
  out <- kv(run_ok(code, timeout = 60))
  skip_if(out[["supported"]] != "TRUE", "future does not support multicore here")
  message(sprintf("future multicore: 4 futures with parallel loops took %.3f s",
                  as.numeric(out[["secs"]])))
  expect_identical(out[["ok"]], "TRUE")
  expect_identical(out[["child"]], "TRUE")
  expect_identical(out[["threads"]], "1")
  expect_identical(out[["mc"]], "1")  # future's own allotment
  expect_identical(out[["parent_after"]], "TRUE")
})

test_that("the pool's threads leave the process's signals to R's main thread", {
  # The kernel gives a signal sent to the process (SIGCHLD when a forked child
  # exits, SIGINT) to any thread that does not block it. parallel's SIGCHLD
  # handler, run on a worker while R's main thread removed a child from the
  # same list, crashed R once while it collected future's multicore futures
  # (a segfault in rmChild()). Every thread the library starts blocks them.
  skip_if_not(file.exists("/proc/self/task"), "no /proc/self/task here")
  code <- c(
    'suppressMessages(library(RcppSpool))',
    'before <- list.files("/proc/self/task")  # R and whatever else it started (a BLAS\'s threads)',
    'invisible(spoolTests::.spool_loop_threads(40L, 1, 2L))  # the global pool starts and runs',
    '# SigBlk of each thread started since: bits of signals 1 to 20 (SIGINT',
    '# is 2, SIGCHLD 17 on Linux).',
    'tids <- setdiff(list.files("/proc/self/task"), before)',
    'blocked <- vapply(tids, function(t) {',
    '  st <- readLines(file.path("/proc/self/task", t, "status"))',
    '  m <- sub("^SigBlk:\\\\s*", "", grep("^SigBlk:", st, value = TRUE))',
    '  low <- strtoi(substring(m, nchar(m) - 4L), 16L)',
    '  bitwAnd(low, bitwShiftL(1L, 17L - 1L)) != 0 && bitwAnd(low, bitwShiftL(1L, 2L - 1L)) != 0',
    '}, NA)',
    'names <- vapply(tids, function(t) readLines(file.path("/proc/self/task", t, "comm")), "")',
    'cat("threads=", length(tids), "\\n", sep = "")',
    'cat("blocking=", sum(blocked), "\\n", sep = "")',
    'cat("open=", paste(names[!blocked], collapse = ","), "\\n", sep = "")'
  )
  out <- kv(run_ok(code))
  expect_gte(as.integer(out[["threads"]]), 1L)  # the pool's workers
  expect_identical(out[["blocking"]], out[["threads"]], info = out[["open"]])
})
