# Timelines: what every thread of the runtime did while R code ran (every
# package's loops and tasks), recorded by the runtime (engine/trace.h) and
# read here as a table, a summary, a figure and Chrome's trace JSON.

#' Record what the threads do
#'
#' `timeline(expr)` evaluates `expr` while RcppSpool's runtime records what
#' each of its threads does: the pieces (chunks) of every parallel loop, every
#' task, waits, R's main thread serving output, progress and `onMainThread()`
#' calls, and the zones marked with `RcppSpool::TraceZone` in C++. Every
#' package built against RcppSpool's headers shares the one runtime, so one
#' timeline shows them all. `timeline_start()` and `timeline_stop()` do the
#' same around code that is not one expression.
#'
#' A package built against older headers runs its tasks (before 0.11.0),
#' and its loops too (before 0.9.0), in its own copy of the scheduler, which
#' records nothing; its loops since 0.9.0 run on the runtime's table and are
#' recorded as any package's. A worker of the runtime that such a package
#' borrows shows the time it lent as one task span a session, labelled
#' `"older client's tasks"`, with the borrowing pool as its `id`. What R's
#' main thread runs for it is not recorded, nor a session still running when
#' the recording stops (as any span that ends after the recording).
#'
#' Each thread keeps its spans in a buffer of its own, of at most `events`
#' spans; what does not fit is counted and reported by `summary()` as
#' dropped. Pieces of one loop that a thread runs back to back are one chunk
#' span (their count is kept). A task that runs inside two others on its
#' thread (fine-grained recursion: a task spawns tasks that spawn tasks) is
#' no span of its own: it is counted in the span of the task it ran in (the
#' column `pieces`), whose time holds its time; recording a task costs two
#' reads of the clock, as much as a ~30 ns task. While nothing records, a
#' loop or a task pays one load of a flag.
#'
#' Only one recording runs at a time: `timeline()` inside another, or
#' `timeline_start()` while one runs, is an error that leaves the running
#' recording as it is. If `expr` fails, the recording stops and the error is
#' passed on. A forked child (`parallel::mclapply()`) records nothing of its
#' parent's recording and never disturbs it.
#'
#' @param expr The R code to run while recording.
#' @param events The most spans a thread keeps: a whole number from 100 to
#'   2,097,152 (about 64 bytes each, allocated as they are used).
#' @return `timeline()` and `timeline_stop()`: an object of class
#'   `RcppSpool_timeline`, a list with `value` (what `expr` returned; `NULL`
#'   for `timeline_stop()`), `spans` (one row per span, as `as.data.frame()`
#'   gives, and `pieces`: loop pieces merged into a chunk span, or a task
#'   and the tasks counted in its span), `threads`
#'   (thread names, the first for thread 0), `seconds` (the recording's
#'   length) and `dropped`. `timeline_start()` returns `NULL` invisibly.
#' @seealso [summary.RcppSpool_timeline()], [plot.RcppSpool_timeline()],
#'   [write_trace()]; `vignette("RcppSpool")` shows how to read the figure.
#' @examples
#' x <- matrix(rnorm(4000), ncol = 40)
#' tl <- timeline(kendall_matrix(x))
#' summary(tl)
#' head(as.data.frame(tl))
#' @export
timeline <- function(expr, events = 1e5) {
  check_timeline_events(events)
  if (cpp_timeline_running())
    stop("a timeline is being recorded already: timeline() cannot run inside another timeline() ",
         "or after timeline_start() (timeline_stop() ends that one)", call. = FALSE)
  cpp_timeline_start(events)
  done <- FALSE
  on.exit(if (!done && cpp_timeline_running()) cpp_timeline_stop())
  value <- expr
  done <- TRUE
  new_timeline(cpp_timeline_stop(), value)
}

#' @rdname timeline
#' @export
timeline_start <- function(events = 1e5) {
  check_timeline_events(events)
  if (cpp_timeline_running())
    stop("a timeline is being recorded already (timeline_stop() ends it)", call. = FALSE)
  cpp_timeline_start(events)
  invisible(NULL)
}

#' @rdname timeline
#' @export
timeline_stop <- function() {
  if (!cpp_timeline_running())
    stop("no timeline is being recorded (timeline_start() begins one)", call. = FALSE)
  new_timeline(cpp_timeline_stop(), NULL)
}

check_timeline_events <- function(events) {
  if (!is.numeric(events) || length(events) != 1L || is.na(events) || events != round(events) ||
      events < 100 || events > 2^21)
    stop("`events` must be a whole number from 100 to 2097152", call. = FALSE)
}

new_timeline <- function(raw, value) {
  spans <- as.data.frame(raw$spans, stringsAsFactors = FALSE)
  cores <- tryCatch(as.integer(availableCores()), error = function(e) NA_integer_)
  structure(list(value = value, spans = spans, threads = raw$threads, seconds = raw$seconds,
                 dropped = raw$dropped, cores = cores),
            class = "RcppSpool_timeline")
}

check_timeline <- function(x, arg = "x") {
  if (!inherits(x, "RcppSpool_timeline"))
    stop(sprintf("`%s` must be a timeline (from timeline() or timeline_stop())", arg), call. = FALSE)
}

#' A timeline's spans as a data frame
#'
#' @param x A timeline, from [timeline()] or [timeline_stop()].
#' @param ... Unused.
#' @return One row per span: `thread` (an integer: 0 for R's main thread,
#'   then 1, 2, ... for the runtime's workers and other threads), `kind`
#'   (`"chunk"`, `"task"`, `"wait"`, `"main"` or `"zone"`), `start` and `end`
#'   (seconds since the recording began, on one steady clock for all
#'   threads), `label` (a zone's name; `"older client's tasks"` for a
#'   worker lent to a package built against older headers; otherwise `NA`)
#'   and `id` (which loop,
#'   task group or pool the span belongs to, numbered from 1 in order of
#'   appearance; `NA` for main-thread spans and zones). Sorted by thread,
#'   then start.
#' @export
as.data.frame.RcppSpool_timeline <- function(x, ...) {
  x$spans[c("thread", "kind", "start", "end", "label", "id")]
}

#' @export
print.RcppSpool_timeline <- function(x, ...) {
  s <- x$spans
  cat(sprintf("<RcppSpool timeline: %.3g s, %d threads, %d spans (%s)%s>\n", x$seconds, length(x$threads),
              nrow(s), paste(sprintf("%d %s", as.integer(table(factor(s$kind, timeline_kinds))),
                                     timeline_kinds), collapse = ", "),
              if (x$dropped > 0) sprintf(", %g dropped", x$dropped) else ""))
  cat("summary() for shares and imbalance, plot() for the figure, write_trace() for Perfetto\n")
  invisible(x)
}

timeline_kinds <- c("chunk", "task", "wait", "main", "zone")

# The length of the union of intervals [start, end) (nested and overlapping
# spans counted once).
union_length <- function(start, end) {
  if (!length(start)) return(0)
  o <- order(start)
  start <- start[o]
  end <- end[o]
  reach <- cummax(end)
  new_run <- c(TRUE, start[-1] > reach[-length(reach)])
  run <- cumsum(new_run)
  sum(tapply(reach, run, max) - tapply(start, run, min))
}

# A thread's busy time: the union of its spans other than waits, less the
# idle part of each wait nested in them (a loop item that waits for its
# TaskGroup: the wait's time minus the tasks it ran meanwhile). Spans of one
# thread nest (a wait inside a chunk, a task inside a wait).
thread_busy <- function(start, end, kind) {
  work <- kind != "wait"
  busy <- union_length(start[work], end[work])
  waits <- which(!work)
  if (!length(waits) || !any(work)) return(busy)
  o <- order(start[work])
  ws <- start[work][o]
  we <- end[work][o]
  reach <- cummax(we)
  for (i in waits) {
    k <- findInterval(start[i], ws, left.open = TRUE)  # work that began before the wait
    if (k == 0 || reach[k] < end[i]) next  # not inside work: never counted as busy
    hi <- findInterval(end[i], ws)
    inner <- if (hi > k) seq.int(k + 1L, hi) else integer()
    inner <- inner[we[inner] <= end[i]]
    busy <- busy - ((end[i] - start[i]) - union_length(ws[inner], we[inner]))
  }
  busy
}

#' Summarise a timeline
#'
#' Per thread: its busy time (the union of its chunk, task, main-thread and
#' zone spans, less the time it waited inside them without running a task)
#' as a share of the recording, and its numbers of
#' loop pieces and tasks. Per loop: how many threads ran it, their time in
#' it, and its imbalance: the slowest thread's time over the mean, the loop's
#' time shared by the threads that could run it at once (those that ran it,
#' at most [availableCores()]). 1 is perfect balance; on 2 cores, one thread
#' doing all the work while the other idles gives 2. (R's main thread
#' leaves a loop whose iterations take 10 ms or more to the workers after
#' its first, to stay responsive: it then counts as one of the threads that
#' ran it, but not as a core.)
#' For the recording: its wall time, the busy CPU time of all threads, the
#' parallel efficiency (busy CPU over the wall time times the threads that
#' could run at once: those that appear, at most [availableCores()]), and how
#' many spans were dropped.
#'
#' @param object A timeline, from [timeline()] or [timeline_stop()].
#' @param ... Unused.
#' @return An object of class `summary.RcppSpool_timeline`: a list with
#'   `threads` and `loops` (data frames), `wall`, `busy`, `parallelism`,
#'   `efficiency` and `dropped`; printing it shows them.
#' @export
summary.RcppSpool_timeline <- function(object, ...) {
  s <- object$spans
  n <- length(object$threads)
  wall <- object$seconds
  threads <- data.frame(thread = seq_len(n) - 1L, name = object$threads, stringsAsFactors = FALSE)
  threads$busy <- vapply(threads$thread, function(t) {
    k <- s$thread == t
    thread_busy(s$start[k], s$end[k], s$kind[k])
  }, 0)
  threads$busy_share <- if (wall > 0) threads$busy / wall else NA_real_
  threads$idle_share <- 1 - threads$busy_share
  threads$chunks <- vapply(threads$thread, function(t) sum(s$pieces[s$thread == t & s$kind == "chunk"]), 0)
  threads$tasks <- vapply(threads$thread, function(t) sum(s$pieces[s$thread == t & s$kind == "task"]), 0)
  # The threads that could run at once: those that appear, at most the cores.
  cores <- if (is.null(object$cores) || is.na(object$cores)) n else object$cores
  chunks <- s[s$kind == "chunk", , drop = FALSE]
  loops <- if (nrow(chunks)) {
    per <- tapply(chunks$end - chunks$start, list(chunks$id, chunks$thread), sum)
    ids <- as.numeric(rownames(per))
    first <- tapply(chunks$start, chunks$id, min)[rownames(per)]
    last <- tapply(chunks$end, chunks$id, max)[rownames(per)]
    out <- data.frame(id = ids, start = as.numeric(first), end = as.numeric(last),
                      threads = rowSums(!is.na(per)), time = rowSums(per, na.rm = TRUE),
                      slowest = apply(per, 1, max, na.rm = TRUE))
    out$imbalance <- out$slowest / (out$time / pmin(out$threads, cores))
    out[order(out$start), , drop = FALSE]
  } else {
    data.frame(id = numeric(), start = numeric(), end = numeric(), threads = numeric(), time = numeric(),
               slowest = numeric(), imbalance = numeric())
  }
  rownames(loops) <- NULL
  busy <- sum(threads$busy)
  p <- min(n, cores)
  structure(list(threads = threads, loops = loops, wall = wall, busy = busy, parallelism = p,
                 efficiency = if (wall > 0 && p > 0) busy / (wall * p) else NA_real_, dropped = object$dropped),
            class = "summary.RcppSpool_timeline")
}

#' @export
print.summary.RcppSpool_timeline <- function(x, ...) {
  cat(sprintf("Timeline of %.4g s: %d threads, busy CPU %.4g s, parallel efficiency %.0f%% (of %d at once), %g dropped\n\n",
              x$wall, nrow(x$threads), x$busy, 100 * x$efficiency, x$parallelism, x$dropped))
  th <- x$threads
  th$busy <- sprintf("%.1f%%", 100 * th$busy_share)
  th$idle <- sprintf("%.1f%%", 100 * th$idle_share)
  print(th[c("thread", "name", "busy", "idle", "chunks", "tasks")], row.names = FALSE)
  if (nrow(x$loops)) {
    cat(sprintf("\n%d loop%s:\n", nrow(x$loops), if (nrow(x$loops) > 1) "s" else ""))
    lp <- x$loops
    shown <- lp[order(-lp$time), , drop = FALSE][seq_len(min(10L, nrow(lp))), , drop = FALSE]
    print(data.frame(loop = shown$id, threads = shown$threads, `time (s)` = signif(shown$time, 3),
                     imbalance = round(shown$imbalance, 2), check.names = FALSE), row.names = FALSE)
    if (nrow(lp) > 10) cat(sprintf("(the 10 longest of %d)\n", nrow(lp)))
  }
  invisible(x)
}

#' Draw a timeline
#'
#' A Gantt chart in base graphics: one row per thread (R's main thread at the
#' top), time across, a bar for each span coloured by its kind. Loop chunks
#' alternate between two greens from one loop to the next, so that each
#' loop's share-out shows; waits are thin grey bars (a thread that waits
#' and helps shows the tasks it ran on top); zones are thin bars above the
#' work they mark. Imbalance shows as one row's bar ending long after the
#' others', idle time as gaps.
#'
#' @param x A timeline, from [timeline()] or [timeline_stop()].
#' @param from,to The time window to draw, in seconds since the recording
#'   began (by default all of it).
#' @param main The title; by default the length of the recording and its
#'   parallel efficiency.
#' @param legend Draw a legend of the kinds.
#' @param ... Further graphical parameters for [graphics::plot.default()].
#' @return `x`, invisibly.
#' @export
plot.RcppSpool_timeline <- function(x, from = 0, to = x$seconds, main = NULL, legend = TRUE, ...) {
  if (!is.numeric(from) || !is.numeric(to) || length(from) != 1L || length(to) != 1L || !(to > from))
    stop("`from` and `to` must be two numbers with from < to", call. = FALSE)
  s <- x$spans
  n <- length(x$threads)
  if (is.null(main))
    main <- sprintf("Timeline: %.3g s, parallel efficiency %.0f%%", x$seconds, 100 * summary(x)$efficiency)
  scale <- if (to - from < 0.01) 1e6 else if (to - from < 10) 1e3 else 1
  unit <- c(`1e+06` = "us", `1000` = "ms", `1` = "s")[[format(scale)]]
  y <- function(t) n - t  # thread 0 at the top
  labels <- sprintf("%d %s", seq_len(n) - 1L, x$threads)
  old_par <- graphics::par(mar = c(4.5, 1 + 0.45 * max(nchar(labels), 4), 4.5, 1))
  on.exit(graphics::par(old_par))
  graphics::plot.default(NA, xlim = c(from, to) * scale, ylim = c(0.4, n + 0.6), yaxt = "n",
                         xlab = sprintf("time since the recording began (%s)", unit), ylab = "", main = main,
                         xaxs = "i", ...)
  graphics::axis(2, at = y(seq_len(n) - 1L), labels = labels, las = 1, cex.axis = 0.8, tick = FALSE)
  graphics::abline(h = y(seq_len(n) - 1L), col = "grey92")
  cols <- timeline_colours()
  # Nested spans (a wait in a loop item, the tasks run in that wait) are
  # drawn over their parents, each level a little thinner, so all show.
  zone <- s$kind == "zone"
  work <- which(!zone & s$end >= from & s$start <= to)
  depth <- span_depth(s$thread[work], s$start[work], s$end[work])
  o <- order(depth, -(s$end[work] - s$start[work]))
  work <- work[o]
  depth <- depth[o]
  half <- ifelse(s$kind[work] == "wait", 0.07, 0.34) * 0.78^depth
  col <- ifelse(s$kind[work] == "chunk", ifelse(s$id[work] %% 2 == 1, cols[["chunk"]], cols[["chunk2"]]),
                cols[s$kind[work]])
  if (length(work))
    graphics::rect(s$start[work] * scale, y(s$thread[work]) - half, s$end[work] * scale, y(s$thread[work]) + half,
                   col = col, border = NA)
  if (any(zone))
    graphics::rect(s$start[zone] * scale, y(s$thread[zone]) + 0.34, s$end[zone] * scale,
                   y(s$thread[zone]) + 0.44, col = cols[["zone"]], border = NA)
  if (legend)
    graphics::legend(x = mean(c(from, to)) * scale, y = n + 0.6, xjust = 0.5, yjust = 0,
                     legend = c("loop chunk", "task", "wait", "main thread service", "zone"),
                     fill = cols[c("chunk", "task", "wait", "main", "zone")], border = NA, bty = "n",
                     cex = 0.75, horiz = TRUE, xpd = TRUE)
  invisible(x)
}

# Each span's nesting depth on its thread: how many of that thread's spans
# enclose it (spans of one thread nest).
span_depth <- function(thread, start, end) {
  depth <- integer(length(start))
  o <- order(thread, start, -end)
  stack <- numeric()
  current <- NA
  for (i in o) {
    if (!identical(thread[i], current)) {
      stack <- numeric()
      current <- thread[i]
    }
    while (length(stack) && stack[length(stack)] <= start[i]) stack <- stack[-length(stack)]
    depth[i] <- length(stack)
    stack <- c(stack, end[i])
  }
  depth
}

timeline_colours <- function() {
  c(chunk = "#1b9e77", chunk2 = "#66c2a5", task = "#d95f02", wait = "grey70", main = "#7570b3",
    zone = "#e7298a")
}

#' Write a timeline for Perfetto and chrome://tracing
#'
#' Writes Chrome's trace-event format: a JSON object whose `traceEvents` are
#' complete events (`"ph": "X"`) with `ts` and `dur` in microseconds, `pid`,
#' `tid` (the timeline's thread), `name` (the span's label, else the kind),
#' `cat` (the kind) and `args` (`id` and `pieces`), sorted by thread and
#' start, plus each thread's name as metadata. Open it at
#' <https://ui.perfetto.dev> or in chrome://tracing.
#'
#' @param x A timeline, from [timeline()] or [timeline_stop()].
#' @param path The file to write.
#' @return `path`, invisibly.
#' @examples
#' tl <- timeline(kendall_matrix(matrix(rnorm(2000), ncol = 20)))
#' write_trace(tl, f <- tempfile(fileext = ".json"))
#' @export
write_trace <- function(x, path) {
  check_timeline(x)
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path))
    stop("`path` must be one file name", call. = FALSE)
  dir <- dirname(path)
  if (!dir.exists(dir)) stop(sprintf("cannot write '%s': the directory '%s' does not exist", path, dir), call. = FALSE)
  s <- x$spans
  spans <- list(as.integer(s$thread), as.character(s$kind), as.double(s$start), as.double(s$end),
                as.character(s$label), as.double(s$id), as.integer(s$pieces))
  tryCatch(cpp_timeline_write(spans, as.character(x$threads), as.double(x$dropped), path.expand(path)),
           error = function(e) stop(sprintf("cannot write the trace: %s", sub("^RcppSpool: ", "", conditionMessage(e))),
                                    call. = FALSE))
  invisible(path)
}
