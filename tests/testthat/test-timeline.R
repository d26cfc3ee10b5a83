# Timelines (R/timeline.R, engine/trace.h): the spans of loops, tasks and
# zones of two client packages in one recording, with durations checked
# against what the loop bodies measured themselves; the summary, the figure,
# Chrome's JSON; the errors; a fork while recording.

timeline_cache <- new.env(parent = emptyenv())

# Two throwaway client packages, built once per session from the same source
# (R's C API only, no Rcpp: quick to compile). Each has:
#   sleep_loop(n, us, threads): a parallelFor over n items that each sleep
#     `us` microseconds in a TraceZone named after the package; returns the
#     seconds the items took by their own clock, summed;
#   group_loop(n, tasks, us): a parallelFor over n items that each run a
#     TaskGroup of `tasks` tasks of `us` microseconds, in a zone "item".
timeline_clients <- function() {
  if (!is.null(timeline_cache$lib)) return(timeline_cache$lib)
  dir <- tempfile("timeline-clients")
  lib <- file.path(dir, "lib")
  dir.create(lib, recursive = TRUE)
  code <- c(
    "#include <RcppSpool.h>",
    "#include <Rinternals.h>",
    "#include <atomic>",
    "#include <chrono>",
    "#include <thread>",
    "using Clock = std::chrono::steady_clock;",
    "extern \"C\" SEXP tl_sleep_loop(SEXP n, SEXP us, SEXP threads) {",
    "  std::atomic<long long> ns{0};",
    "  const long long wait = static_cast<long long>(Rf_asReal(us));",
    "  RcppSpool::parallelFor(0, Rf_asInteger(n), [&](std::ptrdiff_t) {",
    "    RcppSpool::TraceZone zone(PKGNAME);",
    "    const auto t0 = Clock::now();",
    "    std::this_thread::sleep_for(std::chrono::microseconds(wait));",
    "    ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();",
    "  }, static_cast<std::size_t>(Rf_asInteger(threads)));",
    "  return Rf_ScalarReal(static_cast<double>(ns.load()) * 1e-9);",
    "}",
    "extern \"C\" SEXP tl_group_loop(SEXP n, SEXP tasks, SEXP us) {",
    "  const int k = Rf_asInteger(tasks);",
    "  const long long wait = static_cast<long long>(Rf_asReal(us));",
    "  RcppSpool::parallelFor(0, Rf_asInteger(n), [&](std::ptrdiff_t) {",
    "    RcppSpool::TraceZone zone(\"item\");",
    "    RcppSpool::TaskGroup g;",
    "    for (int t = 0; t < k; ++t) g.run([wait] { std::this_thread::sleep_for(std::chrono::microseconds(wait)); });",
    "    g.wait();",
    "  });",
    "  return R_NilValue;",
    "}")
  for (name in c("spoolTimelineA", "spoolTimelineB")) timeline_build(dir, lib, name, code)
  timeline_cache$dir <- dir
  timeline_cache$lib <- lib
  lib
}

# Builds the package `name` from `code` (one C++ file; its .Call entries
# sleep_loop and group_loop, of which it may define only the first) into
# `lib`, against RcppSpool's installed headers or those in `include`.
timeline_build <- function(dir, lib, name, code, include = NULL) {
  pkg <- file.path(dir, name)
  dir.create(file.path(pkg, "src"), recursive = TRUE)
  dir.create(file.path(pkg, "R"))
  writeLines(c(paste("Package:", name), "Version: 0.1", "Title: Throwaway client of RcppSpool",
               "Description: Built by RcppSpool's tests.", "License: MIT",
               "Imports: RcppSpool", "LinkingTo: RcppSpool"), file.path(pkg, "DESCRIPTION"))
  writeLines(c(sprintf("useDynLib(%s)", name), "import(RcppSpool)", "export(sleep_loop, group_loop)"),
             file.path(pkg, "NAMESPACE"))
  if (!any(grepl("tl_group_loop", code))) code <- c(code, "extern \"C\" SEXP tl_group_loop(SEXP, SEXP, SEXP) { return R_NilValue; }")
  writeLines(c(sprintf("sleep_loop <- function(n, us, threads) .Call(\"tl_sleep_loop\", as.integer(n), as.double(us), as.integer(threads), PACKAGE = \"%s\")", name),
               sprintf("group_loop <- function(n, tasks, us) .Call(\"tl_group_loop\", as.integer(n), as.integer(tasks), as.double(us), PACKAGE = \"%s\")", name)),
             file.path(pkg, "R", "client.R"))
  writeLines(c("CXX_STD = CXX17", sprintf("PKG_CPPFLAGS = %s-DPKGNAME='\"%s\"'",
                                          if (is.null(include)) "" else paste0("-I", include, " "), name)),
             file.path(pkg, "src", "Makevars"))
  writeLines(code, file.path(pkg, "src", "client.cpp"))
  install_client(pkg, lib, file.path(dir, paste0(name, ".log")))
}

timeline_client <- function(name) loadNamespace(name, lib.loc = timeline_clients())

test_that("a worker is named as one, also when the recording stops as its loop ends", {
  skip_on_cran()
  # A worker was noted as one after its loop's ticket, which ends with the
  # loop, when timeline() stops recording: "thread 2" in 2 of 20 timelines.
  a <- timeline_client("spoolTimelineA")
  threads <- max(2L, getThreads())
  for (round in 1:20) {
    tl <- timeline(a$sleep_loop(8, 2000, threads))
    d <- as.data.frame(tl)
    ran <- unique(d$thread[d$kind == "chunk" & d$thread > 0])
    expect_true(all(startsWith(tl$threads[ran + 1L], "worker ")),
                info = paste("round", round, ":", paste(tl$threads, collapse = ", ")))
  }
})

test_that("chunk spans add up to the items' own time, every worker appears, two packages in one timeline", {
  skip_on_cran()
  a <- timeline_client("spoolTimelineA")
  b <- timeline_client("spoolTimelineB")
  threads <- max(2L, getThreads())
  items <- NULL
  tl <- timeline({
    items <- c(a$sleep_loop(40, 3000, threads), b$sleep_loop(30, 3000, threads))
    "done"
  })
  expect_s3_class(tl, "RcppSpool_timeline")
  expect_identical(tl$value, "done")
  d <- as.data.frame(tl)
  expect_named(d, c("thread", "kind", "start", "end", "label", "id"))
  expect_true(all(d$kind %in% c("chunk", "task", "wait", "main", "zone")))
  expect_true(all(d$start >= 0 & d$end >= d$start & d$end <= tl$seconds))
  chunks <- d[d$kind == "chunk", ]
  # Two loops, one per package, and each package's zones carry its name.
  expect_length(unique(chunks$id), 2L)
  expect_setequal(unique(d$label[d$kind == "zone"]), c("spoolTimelineA", "spoolTimelineB"))
  expect_equal(sum(d$kind == "zone" & d$label == "spoolTimelineA"), 40)
  expect_equal(sum(d$kind == "zone" & d$label == "spoolTimelineB"), 30)
  # The chunks' time against what the items measured themselves (sleeps
  # may overrun on a busy machine; the bodies' own clock sees that too).
  chunk_time <- sum(chunks$end - chunks$start)
  expect_gte(chunk_time, 0.999 * sum(items))
  expect_lte(chunk_time, 1.10 * sum(items))
  # Every worker of the global pool ran chunks (the items sleep: all of
  # them are free to take some), and R's main thread is thread 0.
  workers <- grep("^worker ", tl$threads)
  expect_gte(length(workers), 1L)
  expect_true(all((workers - 1L) %in% chunks$thread))
  expect_identical(tl$threads[1], "R main thread")
  s <- summary(tl)
  expect_equal(nrow(s$loops), 2L)
  expect_true(all(is.finite(s$loops$imbalance) & s$loops$imbalance > 0))
  expect_equal(sum(s$threads$chunks), sum(tl$spans$pieces[tl$spans$kind == "chunk"]))
  expect_true(s$efficiency > 0 && s$efficiency <= 1.0001)
  expect_output(print(s), "parallel efficiency")
  expect_output(print(tl), "RcppSpool timeline")
})

test_that("a package built against older headers (ABI 10): its loops and lent workers show", {
  # Its loops go through the runtime's table (version 1's parallelFor), so
  # their chunks are recorded like anyone's (it has no TraceZone).
  skip_on_cran()
  skip_on_os("windows")
  lib <- timeline_clients()
  dir <- timeline_cache$dir
  if (is.null(timeline_cache$old)) {
    timeline_build(dir, lib, "spoolTimelineOld", c(
      "#include <RcppSpool.h>",
      "#include <Rinternals.h>",
      "#include <atomic>",
      "#include <chrono>",
      "#include <thread>",
      "extern \"C\" SEXP tl_sleep_loop(SEXP n, SEXP us, SEXP threads) {",
      "  std::atomic<long long> ns{0};",
      "  const long long wait = static_cast<long long>(Rf_asReal(us));",
      "  RcppSpool::parallelFor(0, Rf_asInteger(n), [&](std::ptrdiff_t) {",
      "    const auto t0 = std::chrono::steady_clock::now();",
      "    std::this_thread::sleep_for(std::chrono::microseconds(wait));",
      "    ns += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();",
      "  }, static_cast<std::size_t>(Rf_asInteger(threads)));",
      "  return Rf_ScalarReal(static_cast<double>(ns.load()) * 1e-9);",
      "}",
      # A TaskGroup of `tasks` tasks of `us` each, from R's main thread. Its
      # tasks run in this package's own engine, on R's main thread and on
      # the runtime's workers that it borrows: a task on R's main thread
      # waits (up to 10 s) until another thread has run one, so that a
      # borrowed worker takes part however busy the machine.
      "extern \"C\" SEXP tl_group_loop(SEXP, SEXP tasks, SEXP us) {",
      "  const int k = Rf_asInteger(tasks);",
      "  const long long wait = static_cast<long long>(Rf_asReal(us));",
      "  const auto main = std::this_thread::get_id();",
      "  std::atomic<int> offMain{0};",
      "  RcppSpool::TaskGroup g;",
      "  for (int t = 0; t < k; ++t) g.run([&, wait] {",
      "    if (std::this_thread::get_id() != main) ++offMain;",
      "    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);",
      "    while (std::this_thread::get_id() == main && offMain.load() == 0 && std::chrono::steady_clock::now() < until)",
      "      std::this_thread::sleep_for(std::chrono::milliseconds(1));",
      "    std::this_thread::sleep_for(std::chrono::microseconds(wait));",
      "  });",
      "  g.wait();",
      "  return Rf_ScalarInteger(offMain.load());",
      "}"), include = abi10_headers(dir, "include-abi10"))
    timeline_cache$old <- TRUE
  }
  # (The name in a variable: R CMD check looks a literal one up in the
  # repositories, as a dependency of the tests, and warns offline.)
  old_name <- "spoolTimelineOld"
  old <- loadNamespace(old_name, lib.loc = lib)
  a <- timeline_client("spoolTimelineA")
  items <- NULL
  tl <- timeline(items <- old$sleep_loop(30, 2000, 2))
  tl2 <- timeline({ old$sleep_loop(10, 1000, 2); a$sleep_loop(10, 1000, 2) })
  d <- as.data.frame(tl)
  chunks <- d[d$kind == "chunk", ]
  expect_length(unique(chunks$id), 1L)
  expect_gte(sum(chunks$end - chunks$start), 0.999 * items)
  expect_lte(sum(chunks$end - chunks$start), 1.10 * items)
  expect_true(any(chunks$thread > 0))  # the runtime's workers took part
  # With a current package's loop in the same timeline: two loops.
  expect_length(unique(tl2$spans$id[tl2$spans$kind == "chunk"]), 2L)
  # Its tasks run in its own copy of the engine, which records nothing; a
  # worker of the runtime that it borrows shows the time it lent as task
  # spans, labelled, one a session (the borrowing pool their id). A
  # session ends when it finds no more work, just after the group's last
  # task: the recording goes on a little, as a span that ends after the
  # recording stopped is left out.
  off_main <- NULL
  tl3 <- timeline({ off_main <- old$group_loop(0, 8, 20000); Sys.sleep(0.2) })
  expect_gte(off_main, 1L)
  d3 <- as.data.frame(tl3)
  lent <- d3[d3$kind == "task" & d3$label %in% "older client's tasks", ]
  expect_gte(nrow(lent), 1L)
  expect_true(all(lent$thread > 0))
  expect_length(unique(lent$id), 1L)
  # what the borrowed workers ran: off_main tasks of 20 ms
  expect_gte(sum(lent$end - lent$start), 0.95 * 0.020 * off_main)
  expect_identical(nrow(d3[d3$kind == "task", ]), nrow(lent))
})

test_that("a nested TaskGroup shows its tasks, and zones their labels", {
  skip_on_cran()
  a <- timeline_client("spoolTimelineA")
  timeline_start()
  a$group_loop(6, 4, 1000)
  tl <- timeline_stop()
  d <- as.data.frame(tl)
  expect_equal(sum(d$kind == "task"), 24)
  expect_equal(sum(d$kind == "zone" & d$label == "item"), 6)
  expect_true(all(is.na(d$label[d$kind != "zone"])))
  # The tasks of each item's group fall inside the recording, on some thread.
  tasks <- d[d$kind == "task", ]
  expect_true(all(tasks$end - tasks$start >= 0.0009))
  expect_equal(sum(summary(tl)$threads$tasks), 24)
  expect_null(tl$value)
})

test_that("the JSON parses, has the required fields, and ts never decreases within a tid", {
  skip_on_cran()
  a <- timeline_client("spoolTimelineA")
  tl <- timeline({ a$group_loop(4, 3, 500); a$sleep_loop(10, 500, 2) })
  path <- tempfile(fileext = ".json")
  expect_identical(write_trace(tl, path), path)
  text <- paste(readLines(path), collapse = "\n")
  n_spans <- nrow(tl$spans)
  if (requireNamespace("jsonlite", quietly = TRUE)) {
    j <- jsonlite::fromJSON(path, simplifyVector = FALSE)
    ev <- j$traceEvents
    x <- Filter(function(e) identical(e$ph, "X"), ev)
    m <- Filter(function(e) identical(e$ph, "M"), ev)
    expect_length(x, n_spans)
    for (e in x) expect_true(all(c("ph", "ts", "dur", "pid", "tid", "name", "cat", "args") %in% names(e)))
    expect_true(all(vapply(x, function(e) e$dur >= 0, TRUE)))
    expect_setequal(vapply(x, function(e) e$cat, ""), unique(tl$spans$kind))
    names_meta <- Filter(function(e) identical(e$name, "thread_name"), m)
    expect_length(names_meta, length(tl$threads))
    expect_identical(vapply(names_meta, function(e) e$args$name, ""), tl$threads)
    tid <- vapply(x, function(e) e$tid, 0)
    ts <- vapply(x, function(e) e$ts, 0)
  } else {
    # A minimal check without a JSON parser: balanced brackets, one complete
    # event per span, and the ts of each in order.
    chars <- strsplit(gsub("\"([^\"\\\\]|\\\\.)*\"", "\"\"", text), "")[[1]]
    expect_equal(sum(chars == "{"), sum(chars == "}"))
    expect_equal(sum(chars == "["), sum(chars == "]"))
    events <- regmatches(text, gregexpr("\\{\"ph\":\"X\"[^\n]*", text))[[1]]
    expect_length(events, n_spans)
    tid <- as.numeric(sub(".*\"tid\":([0-9]+).*", "\\1", events))
    ts <- as.numeric(sub(".*\"ts\":([0-9.eE+-]+).*", "\\1", events))
  }
  for (t in unique(tid)) expect_false(is.unsorted(ts[tid == t]), info = paste("tid", t))
  expect_match(text, "\"traceEvents\":[", fixed = TRUE)
})

test_that("the figure draws", {
  skip_on_cran()
  a <- timeline_client("spoolTimelineA")
  tl <- timeline(a$group_loop(4, 3, 2000))
  f <- tempfile(fileext = ".png")
  grDevices::png(f, width = 900, height = 360)
  expect_identical(plot(tl), tl)
  plot(tl, from = 0, to = tl$seconds / 2, main = "half")
  grDevices::dev.off()
  expect_gt(file.size(f), 1000)
  expect_error(plot(tl, from = 1, to = 0), "from < to")
})

test_that("each misuse is a clear error and loses nothing recorded", {
  expect_error(timeline_stop(), "no timeline is being recorded")
  expect_error(timeline(1, events = -1), "`events` must be a whole number")
  expect_error(timeline_start(events = "a"), "`events` must be a whole number")
  expect_error(timeline_start(events = 1.5), "`events` must be a whole number")
  expect_error(write_trace(list(), tempfile()), "must be a timeline")
  # Nested: the inner one fails, the outer one goes on and keeps its spans.
  inner <- NULL
  tl <- timeline({
    kendall_matrix(matrix(as.double(1:400), ncol = 20))
    inner <- tryCatch(timeline(1), error = function(e) conditionMessage(e))
    expect_error(timeline_start(), "being recorded already")
    kendall_matrix(matrix(as.double(1:400), ncol = 20))
    2
  })
  expect_match(inner, "cannot run inside another timeline")
  expect_identical(tl$value, 2)
  expect_false(RcppSpool:::cpp_timeline_running())
  # An unwritable path: the timeline is still there to write elsewhere.
  expect_error(write_trace(tl, file.path(tempfile(), "no", "trace.json")), "does not exist")
  skip_on_os("windows")
  ro <- tempfile("readonly")
  dir.create(ro)
  Sys.chmod(ro, "0555")
  on.exit(unlink(ro, recursive = TRUE))
  if (file.access(ro, 2) != 0)  # (root may write anyway)
    expect_error(write_trace(tl, file.path(ro, "trace.json")), "cannot write the trace: cannot open")
  path <- tempfile(fileext = ".json")
  write_trace(tl, path)
  expect_true(file.exists(path))
  # expr fails: the recording stops, the error is passed on.
  expect_error(timeline(stop("boom")), "boom")
  expect_false(RcppSpool:::cpp_timeline_running())
})

test_that("a thread's buffer is bounded: what does not fit is counted as dropped", {
  skip_on_cran()
  a <- timeline_client("spoolTimelineA")
  tl <- timeline(a$group_loop(50, 20, 0), events = 100)
  expect_gt(tl$dropped, 0)
  expect_true(all(table(tl$spans$thread) <= 100))
  expect_output(print(summary(tl)), sprintf("%g dropped", tl$dropped))
})

test_that("a fork while recording: the child records nothing of the parent's and disturbs nothing", {
  skip_on_cran()
  skip_on_os("windows")
  a <- timeline_client("spoolTimelineA")
  timeline_start()
  a$sleep_loop(8, 1000, 2)
  child <- parallel::mclapply(1:2, function(i) {
    running <- RcppSpool:::cpp_timeline_running()
    a$sleep_loop(8, 1000, 2)
    own <- timeline(a$sleep_loop(4, 1000, 2))
    list(running = running, zones = sum(own$spans$kind == "zone"))
  }, mc.cores = 2)
  a$sleep_loop(8, 1000, 2)
  tl <- timeline_stop()
  for (r in child) {
    expect_false(r$running)
    expect_equal(r$zones, 4)
  }
  # The parent's recording has its own 16 items, none of the children's.
  expect_equal(sum(tl$spans$kind == "zone"), 16)
})
