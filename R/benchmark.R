#' Benchmark RcppSpool against serial code and other threading libraries
#'
#' Runs the workloads of Nagler (2021, Section 6), the paper that introduced
#' RcppThread, plus fork-join latency, nested loops and recursive tasks, with
#' RcppSpool and with the alternatives an R package author has: serial code,
#' `std::thread`, `std::async`, OpenMP, RcppParallel and RcppThread. The result
#' is a data frame with a [plot()][plot.RcppSpool_benchmark] method that draws
#' the paper's kind of figures.
#'
#' @section Workloads:
#' \describe{
#'   \item{`thread_create`}{(the paper's Figure 1) creating and joining
#'     `size` threads that do nothing: `std::thread`, `RcppSpool::Thread`,
#'     `RcppThread::Thread`.}
#'   \item{`interrupt_check`}{(Figure 2) `size` calls of
#'     `checkUserInterrupt()` on R's main thread and on another thread, with
#'     RcppSpool, RcppThread and (main thread only) Rcpp.}
#'   \item{`empty_jobs`}{(Figure 3) `size` jobs that do nothing.}
#'   \item{`kde`}{(Figure 4) Gaussian kernel density estimates of `d`
#'     variables of `size` observations each, on 500 grid points.}
#'   \item{`kendall`}{(Figure 5) Kendall's tau matrix of `d` variables of
#'     `size` observations (the algorithm of [kendall_matrix()]): the outer
#'     loop over variables \eqn{i}{i} runs in parallel, the inner loop over
#'     \eqn{j > i}{j > i} serially, so the iterations are unbalanced.}
#'   \item{`fork_join`}{one blocking parallel loop over `size` empty items:
#'     the latency of starting and ending a parallel section.}
#'   \item{`nested_loops`}{a parallel loop over `size` items whose body is a
#'     parallel loop over `size` items of about a microsecond of arithmetic.}
#'   \item{`fib`}{fib(`size`) by the naive recursion with a task for every
#'     call (no cutoff): a test of recursive task parallelism.}
#' }
#' The data are standard normal samples generated the same way for every
#' method, and every method's result is checked against the serial one
#' (column `correct`).
#'
#' @section Methods:
#' A loop over \eqn{n}{n} items (the items are the jobs, the variables, the
#' rows of the Kendall matrix) is run as follows.
#' \describe{
#'   \item{`serial`}{a plain `for` loop.}
#'   \item{`RcppSpool parallelFor`}{`RcppSpool::parallelFor(0, n, f, threads)`.}
#'   \item{`RcppSpool ThreadPool`}{`push()` of every item to a
#'     `RcppSpool::ThreadPool` of `threads` workers, then `wait()`.}
#'   \item{`RcppSpool async`}{`RcppSpool::async()` for every item (on the
#'     global pool), then `get()` of every future.}
#'   \item{`std::thread`}{`threads` threads, each taking a contiguous block
#'     of items (static scheduling).}
#'   \item{`std::async`}{`std::async(std::launch::async, ...)` for every
#'     item: a thread each, so only run up to 1,000 empty jobs (and up to
#'     fib(15)).}
#'   \item{`OpenMP`, `OpenMP dynamic`}{`#pragma omp parallel for`, with the
#'     default (static) schedule and with `schedule(dynamic)`; fib uses OpenMP
#'     tasks. Only where R's C++ compiler supports OpenMP.}
#'   \item{`RcppParallel`}{`RcppParallel::parallelFor()` with a grain size of
#'     1 and `numThreads = threads`; fib uses `tbb::task_group`.}
#'   \item{`RcppSpool (RcppParallel API)`}{the same loop code (a `Worker`,
#'     `parallelFor(0, n, worker, 1, threads)`) compiled against RcppSpool's
#'     compatibility header `RcppSpool/RcppParallel.h` (loops only).}
#'   \item{`RcppThread parallelFor`, `RcppThread ThreadPool`}{as the
#'     RcppSpool ones. RcppThread does not run nested loops (its `wait()`
#'     called from a worker returns at once, before the inner loop is done)
#'     nor recursive tasks (a blocked worker runs no other task, so fib
#'     deadlocks).}
#' }
#' Thread pools are made before the timing starts. The workloads are not part
#' of the installed package: they are compiled when `benchmark()` first needs
#' them in a session, with [Rcpp::sourceCpp()] from the files in
#' `system.file("bench", package = "RcppSpool")`, as a package using RcppSpool
#' would compile them: `rcppspool.cpp` (RcppSpool, serial code,
#' `std::thread`, `std::async`, OpenMP), `rcppparallel.cpp` and
#' `rcppthread.cpp`. This takes a minute or two, and says so in a message; set
#' `options(RcppSpool.bench_cache = dir)` to keep the compiled code in `dir`
#' for later sessions. A method whose package is not installed, or whose code
#' does not compile, is skipped with a message; so is OpenMP where the
#' compiler has none. If RcppSpool's own workloads do not compile,
#' `benchmark()` stops with the compiler's output.
#'
#' @section Measuring:
#' For each workload, `d` and size, every method is run once to warm up (and to
#' find how many back-to-back runs take at least 10 ms, 50 ms for the full
#' run); then `reps` rounds measure each method in turn (in a rotating order,
#' with a short pause between measurements, so that a change in the load of
#' the machine or threads still spinning after the previous method affect all
#' methods alike). `time` is the median. A run that takes over 0.2 s counts its
#' warm-up as the first measurement.
#'
#' Timings depend on the machine and on what else runs on it; compare methods
#' within one run. `quick = TRUE` takes about two minutes on two cores
#' (plus compiling the workloads the first time in a session), the full
#' run several times as long. A progress bar shows how far it is; Ctrl-C stops
#' it (between measurements, or within one of RcppSpool's).
#'
#' @param quick `TRUE` for fewer sizes, fewer repetitions and shorter
#'   measurements.
#' @param workloads Names of workloads to run (see Workloads); `NULL` for all.
#' @param methods Names of methods to run (see Methods); `NULL` for all.
#'   `"serial"` is always added where a workload has it (speedups need it).
#' @param threads The number of threads of the parallel methods; by default
#'   [getThreads()] (at least 1). `RcppSpool parallelFor` uses at most one
#'   more than the global pool has workers; `RcppSpool async` always runs on
#'   the whole global pool.
#' @param sizes A named list of sizes replacing the default ones of those
#'   workloads, e.g. `list(kendall = c(100, 1000))`.
#' @param reps Measurements per method and size, a whole number of at least
#'   1 (default 3 with `quick = TRUE`, else 5).
#' @param progress Show a progress bar.
#' @return A data frame of class `"RcppSpool_benchmark"`, one row per
#'   workload, `d`, method and size, with columns `workload`, `d` (the number
#'   of variables of `kde` and `kendall`, else `NA`), `method`, `size`,
#'   `threads`, `time` (median seconds of one run of the workload),
#'   `speedup` (the serial time divided by `time`; `NA` where a workload has
#'   no serial method) and `correct` (whether the result equals the serial
#'   one; `NA` where there is nothing to compare). A method that failed has
#'   `time` `NA`. Attributes: `settings` (a list: `quick`, `reps`, `threads`,
#'   `cores`, `openmp`, `capacity`, `versions`, `R`, `date`) and `skipped` (a
#'   data frame of methods not run, with the reason). `capacity` is how many
#'   times faster `threads` threads did plain arithmetic than one thread, just
#'   before and just after the measurements: about `threads` on an idle
#'   machine, less when other processes took cores away (then `benchmark()`
#'   says so in a message, and all speedups are understated).
#' @references Nagler, T. (2021). R-friendly multi-threading in C++. *Journal
#'   of Statistical Software, Code Snippets*, 97(1), 1-18.
#'   \doi{10.18637/jss.v097.c01}
#' @seealso [plot.RcppSpool_benchmark()], [kendall_matrix()].
#' @examples
#' # The full run behind vignette("benchmarks"), stored with the package.
#' res <- readRDS(system.file("extdata", "benchmark-full.rds", package = "RcppSpool"))
#' res[res$workload == "fork_join" & res$method %in% c("serial", "RcppSpool parallelFor"), ]
#' plot(res, workload = "kendall")
#' \dontrun{
#' # Compiles the workloads first (a minute or two), then a few seconds:
#' # fork-join latency and Kendall's tau on 2 threads.
#' res <- benchmark(workloads = c("fork_join", "kendall"),
#'                  methods = c("RcppSpool parallelFor", "std::thread"),
#'                  sizes = list(fork_join = c(2, 16), kendall = c(50, 200)),
#'                  threads = 2, reps = 1, progress = FALSE)
#' res
#' res <- benchmark(quick = TRUE)   # about 2 minutes
#' plot(res)
#' }
#' @export
benchmark <- function(quick = FALSE, workloads = NULL, methods = NULL, threads = NULL,
                      sizes = NULL, reps = NULL, progress = TRUE) {
  if (!is.logical(quick) || length(quick) != 1L || is.na(quick)) {
    stop("quick must be TRUE or FALSE, not ", show_arg(quick), call. = FALSE)
  }
  if (is.null(threads)) threads <- max(1L, getThreads())
  threads <- check_thread_count(threads, "threads")
  if (threads < 1L) stop("threads must be at least 1", call. = FALSE)
  if (is.null(reps)) reps <- if (quick) 3L else 5L
  if (!is_whole_number(reps, 1, .Machine$integer.max)) {
    stop("reps must be a whole number of at least 1, not ", show_arg(reps), call. = FALSE)
  }
  reps <- as.integer(reps)

  bench_check_args(workloads, methods, sizes)

  # RcppSpool's workloads are needed by every run: they hold the serial
  # methods and the probe of the machine's capacity.
  spool <- bench_compile("RcppSpool", "rcppspool.cpp")
  if (is.character(spool)) stop("benchmark() needs RcppSpool's own workloads: ", spool, call. = FALSE)
  openmp <- spool$bench_has_openmp()
  plan <- bench_plan(quick, workloads, methods, threads, sizes, openmp)
  runners <- bench_runners(unique(plan$cells$backend), spool)
  cells <- plan$cells[plan$cells$backend %in% names(runners$run), , drop = FALSE]
  skipped <- rbind(plan$skipped, runners$skipped)
  skipped <- skipped[skipped$method %in% plan$requested, , drop = FALSE]
  rownames(skipped) <- NULL

  min_time <- if (quick) 0.01 else 0.05
  heavy_time <- 0.2
  groups <- split(seq_len(nrow(cells)),
                  factor(cells$group, levels = unique(cells$group)))
  total <- nrow(cells) * (reps + 1L)
  done <- 0L
  pb <- NULL
  if (isTRUE(progress) && total > 0L) {
    pb <- utils::txtProgressBar(min = 0, max = total, style = 3)
  }
  on.exit({
    if (!is.null(pb)) close(pb)
    bench_cleanup(runners$run)
  }, add = TRUE)
  tick <- function(n = 1L) {
    done <<- done + n
    if (!is.null(pb)) utils::setTxtProgressBar(pb, done)
  }

  # The median of 3 short probes: a burst of another process spoils one only.
  probe <- function() stats::median(replicate(3, spool$bench_capacity(threads, if (quick) 0.04 else 0.1)))
  capacity <- c(before = probe(), after = NA_real_)
  times <- vector("list", nrow(cells))
  checks <- rep(NA_real_, nrow(cells))
  errors <- rep(NA_character_, nrow(cells))
  k <- rep(1L, nrow(cells))
  for (g in groups) {
    # Warm-up, and how many runs make one measurement.
    for (i in g) {
      r <- bench_call(runners$run, cells[i, ], threads, 1L)
      if (is.null(r$error)) {
        checks[i] <- r$check
        if (r$seconds >= heavy_time) {
          times[[i]] <- r$seconds
        } else {
          k[i] <- as.integer(min(1e6, max(1, ceiling(min_time / max(r$seconds, 1e-9)))))
        }
      } else {
        errors[i] <- r$error
      }
      tick()
      Sys.sleep(0.005)
    }
    for (rep in seq_len(reps)) {
      # A rotating order: each method follows a different one in each round.
      turn <- g[(seq_along(g) + rep - 2L) %% length(g) + 1L]
      for (i in turn) {
        if (!is.na(errors[i]) || length(times[[i]]) >= reps) {
          tick()
          next
        }
        r <- bench_call(runners$run, cells[i, ], threads, k[i])
        if (is.null(r$error)) times[[i]] <- c(times[[i]], r$seconds) else errors[i] <- r$error
        tick()
        Sys.sleep(0.005)
      }
    }
  }

  capacity[["after"]] <- probe()
  if (threads > 1 && min(capacity) < 0.8 * threads) {
    message(sprintf(paste0(
      "benchmark(): the machine looks busy: %d threads did arithmetic only %.2fx (before) and %.2fx ",
      "(after) as fast as 1 thread, so the speedups are lower than on an idle machine"),
      threads, capacity[["before"]], capacity[["after"]]))
  }

  res <- cells[, c("workload", "d", "method", "size"), drop = FALSE]
  res$threads <- ifelse(res$workload == "thread_create", res$size, threads)
  res$time <- vapply(times, function(t) if (length(t)) stats::median(t) else NA_real_, 0)
  res$time[!is.na(errors)] <- NA_real_
  key <- paste(res$workload, res$d, res$size)
  serial <- res$method == "serial"
  serial_time <- res$time[serial][match(key, key[serial])]
  serial_check <- checks[serial][match(key, key[serial])]
  res$speedup <- serial_time / res$time
  res$correct <- ifelse(is.na(checks) | is.na(serial_check), NA,
                        abs(checks - serial_check) <= 1e-9 * pmax(1, abs(serial_check)))
  rownames(res) <- NULL

  failed <- which(!is.na(errors))
  if (length(failed)) {
    msg <- unique(sprintf("%s (%s): %s", cells$method[failed], cells$workload[failed], errors[failed]))
    warning("some measurements failed:\n", paste(msg, collapse = "\n"), call. = FALSE)
  }
  wrong <- which(res$correct %in% FALSE)
  if (length(wrong)) {
    warning("wrong results: ", paste(unique(paste0(res$method[wrong], " (", res$workload[wrong], ")")),
                                     collapse = ", "), call. = FALSE)
  }

  attr(res, "settings") <- list(
    quick = quick, reps = reps, threads = threads,
    cores = as.integer(availableCores()),
    openmp = openmp, capacity = capacity,
    versions = vapply(c("RcppSpool", "Rcpp", "RcppParallel", "RcppThread"), function(p) {
      if (requireNamespace(p, quietly = TRUE)) as.character(utils::packageVersion(p)) else NA_character_
    }, ""),
    R = R.version.string, date = Sys.time()
  )
  attr(res, "skipped") <- skipped
  class(res) <- c("RcppSpool_benchmark", "data.frame")
  res
}

# --- what to run ----------------------------------------------------------------

bench_loop_methods <- c("serial", "RcppSpool parallelFor", "RcppSpool ThreadPool", "RcppSpool async",
                        "std::thread", "std::async", "OpenMP", "OpenMP dynamic", "RcppParallel",
                        "RcppSpool (RcppParallel API)", "RcppThread parallelFor", "RcppThread ThreadPool")

# Workloads in the order of the output: sizes (quick, full), d, methods, and
# the largest size each method runs at (Inf: no limit).
bench_workloads <- function() {
  list(
    thread_create = list(quick = c(1, 2, 4, 8, 16), full = c(1, 2, 4, 8, 16, 32, 64),
                         methods = c("std::thread", "RcppSpool Thread", "RcppThread Thread")),
    interrupt_check = list(quick = 10^(3:5), full = 10^(2:6),
                           methods = c("Rcpp main thread", "RcppSpool main thread", "RcppSpool worker thread",
                                       "RcppThread main thread", "RcppThread worker thread")),
    empty_jobs = list(quick = 10^(3:6), full = 10^(2:6), methods = bench_loop_methods,
                      limit = c("std::async" = 1e3)),
    kde = list(quick = c(10, 100, 1000), full = c(10, 30, 100, 300, 1000, 3000), d = c(10, 100),
               methods = bench_loop_methods),
    kendall = list(quick = c(10, 100, 1000), full = c(10, 30, 100, 300, 1000, 3000), d = c(10, 100),
                   methods = bench_loop_methods),
    fork_join = list(quick = c(2, 16, 128), full = c(2, 4, 16, 64, 256, 1024), methods = bench_loop_methods),
    nested_loops = list(quick = c(10, 30, 100), full = c(10, 30, 100, 300),
                        methods = c("serial", "RcppSpool parallelFor", "RcppSpool ThreadPool", "RcppSpool async",
                                    "OpenMP", "RcppParallel", "RcppSpool (RcppParallel API)")),
    fib = list(quick = c(10, 15, 20, 25), full = c(10, 15, 20, 25, 30),
               methods = c("serial", "RcppSpool async", "std::async", "OpenMP", "RcppParallel"),
               limit = c("std::async" = 15))
  )
}

# Which compiled code runs a method.
bench_backend <- function(method) {
  ifelse(method == "RcppParallel", "RcppParallel",
         ifelse(startsWith(method, "RcppThread"), "RcppThread", "RcppSpool"))
}

# Stops on unknown workloads or methods and on malformed sizes (before
# anything is compiled).
bench_check_args <- function(workloads, methods, sizes) {
  all <- bench_workloads()
  bad <- setdiff(workloads, names(all))
  if (length(bad)) {
    stop("unknown workload(s): ", paste(bad, collapse = ", "), "; known: ",
         paste(names(all), collapse = ", "), call. = FALSE)
  }
  known <- unique(unlist(lapply(all, `[[`, "methods")))
  if (!is.null(methods)) {
    bad <- setdiff(methods, known)
    if (length(bad)) {
      stop("unknown method(s): ", paste(bad, collapse = ", "), "; known: ",
           paste(known, collapse = ", "), call. = FALSE)
    }
  }
  if (!is.null(sizes)) {
    if (!is.list(sizes) || is.null(names(sizes)) || !all(names(sizes) %in% names(all)) ||
        !all(vapply(sizes, function(s) is.numeric(s) && length(s) > 0 && all(s >= 1 & s == round(s)), NA))) {
      stop("sizes must be a list of whole numbers (>= 1) named by workloads", call. = FALSE)
    }
  }
  invisible()
}

# The cells to measure: one row per workload, d, size and method (grouped by
# workload, d and size), and the methods left out with the reason. `openmp`:
# whether the workloads were compiled with OpenMP.
bench_plan <- function(quick, workloads, methods, threads, sizes, openmp) {
  bench_check_args(workloads, methods, sizes)
  all <- bench_workloads()
  if (is.null(workloads)) workloads <- names(all)
  skipped <- data.frame(method = character(), reason = character())
  if (!openmp) {
    skipped <- rbind(skipped, data.frame(method = c("OpenMP", "OpenMP dynamic"),
                                         reason = "R's C++ compiler has no OpenMP"))
  }
  rows <- list()
  requested <- character()
  for (w in workloads) {
    spec <- all[[w]]
    m <- spec$methods
    if (!is.null(methods)) m <- m[m %in% c(methods, "serial")]
    requested <- union(requested, m)
    m <- setdiff(m, skipped$method)
    if (!length(m)) next
    s <- if (!is.null(sizes[[w]])) sort(unique(sizes[[w]])) else if (quick) spec$quick else spec$full
    ds <- if (is.null(spec$d)) NA_integer_ else as.integer(spec$d)
    for (d in ds) {
      for (size in s) {
        mm <- m
        if (!is.null(spec$limit)) mm <- mm[!(mm %in% names(spec$limit) & size > spec$limit[mm])]
        if ((w == "kendall" || w == "kde") && size < 2) next
        rows[[length(rows) + 1L]] <- data.frame(
          workload = w, d = d, size = size, method = mm,
          group = paste(w, d, size), backend = bench_backend(mm)
        )
      }
    }
  }
  cells <- if (length(rows)) do.call(rbind, rows) else
    data.frame(workload = character(), d = integer(), size = numeric(), method = character(),
               group = character(), backend = character())
  list(cells = cells, skipped = skipped, requested = requested)
}

# --- running ---------------------------------------------------------------------

# The compiled code of each backend: RcppSpool's (`spool`, compiled by
# benchmark() already), and RcppParallel's and RcppThread's compiled now from
# inst/bench (when installed). Returns list(run = named list of
# functions(workload, method, size, d, threads, k), skipped = data frame of
# methods not available, with the reason).
bench_runners <- function(backends, spool) {
  run <- list(RcppSpool = bench_runner(spool, "RcppSpool"))
  skipped <- data.frame(method = character(), reason = character())
  files <- c(RcppParallel = "rcppparallel.cpp", RcppThread = "rcppthread.cpp")
  for (b in intersect(names(files), backends)) {
    env <- bench_compile(b, files[[b]])
    if (is.environment(env)) {
      run[[b]] <- bench_runner(env, b)
    } else {
      methods <- if (b == "RcppParallel") "RcppParallel" else
        c("RcppThread parallelFor", "RcppThread ThreadPool", "RcppThread Thread",
          "RcppThread main thread", "RcppThread worker thread")
      skipped <- rbind(skipped, data.frame(method = methods, reason = env))
    }
  }
  list(run = run, skipped = skipped)
}

# The bench function of package `pkg` from its compiled code `env`
# (bench_<pkg>()), with its cleanup (bench_<pkg>_cleanup(), if any) as
# attribute "cleanup", for bench_cleanup().
bench_runner <- function(env, pkg) {
  fun <- paste0("bench_", tolower(pkg))
  run <- get(fun, envir = env)
  attr(run, "cleanup") <- get0(paste0(fun, "_cleanup"), envir = env)
  run
}

# Compiles inst/bench/<file>, the workloads run with package `pkg`, with
# Rcpp::sourceCpp() (or loads them from the cache); returns the environment
# holding its functions, or the reason why not (a string).
bench_compile <- function(pkg, file) {
  if (!requireNamespace(pkg, quietly = TRUE)) return(paste(pkg, "is not installed"))
  src <- system.file("bench", file, package = "RcppSpool")
  if (!nzchar(src)) return(paste0("the file bench/", file, " of RcppSpool is missing"))
  # sourceCpp() rebuilds when the .cpp file changes, not when what it
  # includes or links to does: a cache folder per version of those
  # (kernels.h, the packages, and RcppSpool's headers for its own workloads).
  inputs <- system.file("bench", "kernels.h", package = "RcppSpool")
  if (pkg == "RcppSpool") {
    inputs <- c(inputs, sort(list.files(system.file("include", package = "RcppSpool"), recursive = TRUE,
                                        full.names = TRUE)))
  }
  cache <- file.path(bench_cache_dir(),
                     sprintf("%s-%s_RcppSpool-%s_%s", pkg, utils::packageVersion(pkg),
                             utils::packageVersion("RcppSpool"), substr(bench_md5(inputs), 1, 10)))
  dir.create(cache, showWarnings = FALSE, recursive = TRUE)
  env <- new.env(parent = baseenv())
  message("benchmark(): compiling the ", pkg, " workloads (or loading them from the cache)")
  # The OpenMP methods need the compiler's OpenMP flags (none where it has
  # no OpenMP; then the code leaves them out).
  flags <- if (pkg == "RcppSpool") c(PKG_CXXFLAGS = "$(SHLIB_OPENMP_CXXFLAGS)", PKG_LIBS = "$(SHLIB_OPENMP_CXXFLAGS)")
  # The compiler's output (and what plugins print) is kept for the message.
  out <- character()
  con <- textConnection("out", "w", local = TRUE)
  sink(con)
  res <- tryCatch({
    bench_with_env(flags, suppressWarnings(Rcpp::sourceCpp(src, env = env, cacheDir = cache, showOutput = FALSE)))
    NULL
  }, error = function(e) conditionMessage(e), finally = {
    sink()
    close(con)
  })
  if (!is.null(res)) {
    return(paste0("compiling bench/", file, " failed: ", res, "\n",
                  paste(utils::tail(out, if (pkg == "RcppSpool") 25 else 5), collapse = "\n")))
  }
  env
}

# Where compiled workloads are kept: options(RcppSpool.bench_cache), else
# for this session only.
bench_cache_dir <- function() getOption("RcppSpool.bench_cache", file.path(tempdir(), "RcppSpool-bench"))

# One md5 for the contents of `files`.
bench_md5 <- function(files) {
  f <- tempfile()
  on.exit(unlink(f))
  writeLines(unname(tools::md5sum(files)), f)
  unname(tools::md5sum(f))
}

# Evaluates `expr` with the environment variables `vars` (a named character
# vector; NULL for none) appended to their values, and restores them after.
bench_with_env <- function(vars, expr) {
  if (!length(vars)) return(expr)
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  on.exit(for (v in names(old)) {
    if (is.na(old[[v]])) Sys.unsetenv(v) else do.call(Sys.setenv, as.list(old[v]))
  }, add = TRUE)
  now <- ifelse(is.na(old), vars, paste(old, vars))
  do.call(Sys.setenv, as.list(stats::setNames(now, names(vars))))
  expr
}

# One measurement; list(seconds, check, error = NULL or the message).
bench_call <- function(run, cell, threads, k) {
  f <- run[[cell$backend]]
  d <- if (is.na(cell$d)) 0L else cell$d
  tryCatch({
    r <- f(cell$workload, cell$method, cell$size, d, threads, k)
    list(seconds = r[[1L]], check = r[[2L]], error = NULL)
  }, error = function(e) {
    # RcppThread reports the user's interrupt as an error: it must stop the
    # benchmark like any Ctrl-C, not count as a failed measurement.
    if (grepl("interrupted by the user", conditionMessage(e), fixed = TRUE)) bench_interrupt()
    list(seconds = NA_real_, check = NA_real_, error = conditionMessage(e))
  })
}

# What R does on Ctrl-C: signal an interrupt condition, then jump to the top.
bench_interrupt <- function() {
  signalCondition(structure(class = c("interrupt", "condition"), list(message = "", call = NULL)))
  invokeRestart("abort")
}

bench_cleanup <- function(run) {
  for (f in run) {
    cleanup <- attr(f, "cleanup")
    if (is.function(cleanup)) try(cleanup(), silent = TRUE)
  }
}

# --- printing and plotting ----------------------------------------------------------

# The workloads whose speedup over serial code is worth showing (in the
# others the serial code does next to nothing: they measure overhead).
bench_speedup_workloads <- c("kde", "kendall", "nested_loops")

bench_titles <- c(
  thread_create = "Creating and joining threads",
  interrupt_check = "Checking for user interrupts",
  empty_jobs = "Empty jobs",
  kde = "Kernel density estimates",
  kendall = "Kendall's tau matrix",
  fork_join = "Fork-join latency (one blocking loop)",
  nested_loops = "Nested parallel loops (size x size)",
  fib = "Recursive tasks: fib(n), a task per call"
)

bench_xlabs <- c(
  thread_create = "threads", interrupt_check = "checks", empty_jobs = "jobs",
  kde = "sample size n", kendall = "sample size n", fork_join = "loop items",
  nested_loops = "items per loop", fib = "n"
)

bench_title <- function(workload, d) {
  t <- bench_titles[[workload]]
  if (!is.na(d)) t <- sprintf("%s, d = %d", t, d)
  t
}

# Seconds in a readable unit, with 3 significant digits (`pad`: keep
# trailing zeros, as in "5.00 ms", for tables).
format_seconds <- function(x, pad = TRUE) {
  out <- rep("", length(x))
  ok <- !is.na(x)
  u <- ifelse(x[ok] >= 1, "s", ifelse(x[ok] >= 1e-3, "ms", ifelse(x[ok] >= 1e-6, "us", "ns")))
  f <- c(s = 1, ms = 1e3, us = 1e6, ns = 1e9)[u]
  out[ok] <- paste(formatC(x[ok] * f, digits = 3, format = "fg", flag = if (pad) "#" else ""), u)
  out[!ok] <- "-"
  sub("\\.\\s", " ", out)
}

#' @rdname benchmark
#' @param x A result of `benchmark()`.
#' @param ... Passed on to [print.data.frame()] for `print(..., tidy = TRUE)`.
#' @param tidy `print()`: show the data frame itself rather than a table per
#'   workload.
#' @export
print.RcppSpool_benchmark <- function(x, ..., tidy = FALSE) {
  # A subset of columns is an ordinary data frame.
  if (!all(c("workload", "d", "method", "size", "time", "speedup", "correct") %in% names(x))) {
    print(as.data.frame(unclass(x)), ...)
    return(invisible(x))
  }
  s <- attr(x, "settings")
  if (!is.null(s)) {
    cat(sprintf("RcppSpool benchmark%s: %d thread%s, %d core%s, %s\n",
                if (isTRUE(s$quick)) " (quick)" else "", s$threads, if (s$threads == 1) "" else "s",
                s$cores, if (s$cores == 1) "" else "s", format(s$date, "%Y-%m-%d %H:%M")))
    v <- s$versions[!is.na(s$versions)]
    cat("versions:", paste(names(v), v, collapse = ", "), "\n")
    if (!is.null(s$capacity)) {
      cat(sprintf("machine check: %d threads did plain arithmetic %.2fx (before) and %.2fx (after) as fast as 1\n",
                  s$threads, s$capacity[["before"]], s$capacity[["after"]]))
    }
  }
  if (tidy) {
    print(as.data.frame(unclass(x)), ...)
  } else {
    keys <- unique(x[, c("workload", "d")])
    for (r in seq_len(nrow(keys))) {
      w <- keys$workload[r]
      d <- keys$d[r]
      sub <- x[x$workload == w & (if (is.na(d)) is.na(x$d) else x$d %in% d), , drop = FALSE]
      methods <- unique(sub$method)
      sizes <- sort(unique(sub$size))
      tab <- matrix("", length(sizes), length(methods), dimnames = list(format(sizes, scientific = FALSE, trim = TRUE), methods))
      for (i in seq_len(nrow(sub))) {
        cellv <- format_seconds(sub$time[i])
        if (w %in% bench_speedup_workloads && !is.na(sub$speedup[i]) && sub$method[i] != "serial") {
          sp <- sub$speedup[i]
          cellv <- sprintf("%s (%sx)", cellv, if (sp >= 0.1) sprintf("%.2f", sp) else formatC(sp, digits = 2, format = "fg"))
        }
        if (isFALSE(sub$correct[i])) cellv <- paste(cellv, "WRONG")
        tab[format(sub$size[i], scientific = FALSE, trim = TRUE), sub$method[i]] <- cellv
      }
      names(dimnames(tab)) <- c(bench_xlabs[[w]], "")
      cat("\n", bench_title(w, d), if (w %in% bench_speedup_workloads) " (time per run; speedup over serial)"
          else " (time per run)", "\n", sep = "")
      print(noquote(t(tab)), right = TRUE)
    }
  }
  sk <- attr(x, "skipped")
  if (!is.null(sk) && nrow(sk)) {
    cat("\nnot run:\n")
    for (i in seq_len(nrow(sk))) cat(sprintf("  %s: %s\n", sk$method[i], sk$reason[i]))
  }
  invisible(x)
}

# Colour, line type and symbol of each method, the same in every figure.
bench_styles <- function(methods) {
  known <- list(
    "serial" = list("black", 1, 16),
    "RcppSpool parallelFor" = list("#D55E00", 1, 17),
    "RcppSpool ThreadPool" = list("#E69F00", 1, 15),
    "RcppSpool async" = list("#CC3311", 2, 18),
    "RcppSpool Thread" = list("#D55E00", 1, 17),
    "RcppSpool main thread" = list("#D55E00", 1, 17),
    "RcppSpool worker thread" = list("#D55E00", 2, 2),
    "std::thread" = list("#0072B2", 1, 0),
    "std::async" = list("#56B4E9", 2, 1),
    "OpenMP" = list("#009E73", 1, 5),
    "OpenMP dynamic" = list("#009E73", 2, 9),
    "RcppParallel" = list("#7B3294", 1, 6),
    "RcppSpool (RcppParallel API)" = list("#7B3294", 2, 16),
    "RcppThread parallelFor" = list("#777777", 1, 3),
    "RcppThread ThreadPool" = list("#777777", 2, 4),
    "RcppThread Thread" = list("#777777", 1, 3),
    "RcppThread main thread" = list("#777777", 1, 3),
    "RcppThread worker thread" = list("#777777", 2, 4),
    "Rcpp main thread" = list("#0072B2", 1, 0)
  )
  other <- grDevices::hcl.colors(max(1, length(methods)), "Dark 3")
  data.frame(
    method = methods,
    col = vapply(seq_along(methods), function(i) if (!is.null(known[[methods[i]]])) known[[methods[i]]][[1]] else other[i], ""),
    lty = vapply(methods, function(m) if (!is.null(known[[m]])) known[[m]][[2]] else 3, 0),
    pch = vapply(methods, function(m) if (!is.null(known[[m]])) known[[m]][[3]] else 20, 0),
    stringsAsFactors = FALSE
  )
}

#' Plot benchmark results
#'
#' Draws the kind of figures of Nagler (2021, Section 6): for one workload, the
#' time of one run against the size, both on log scales, one line per method,
#' with a panel per number of variables `d` (KDE and Kendall), and below it,
#' for the workloads that do real work (`kde`, `kendall`, `nested_loops`),
#' the speedup over serial code (dotted line: 1; dashed line: the
#' number of threads). Times are labelled in s, ms, us (microseconds) and ns.
#'
#' @param x A result of [benchmark()].
#' @param workload The workloads to draw, a figure each (one page each; in an
#'   interactive session you are asked before each new page). By default all
#'   in `x`.
#' @param speedup Add the speedup panels (where there are any).
#' @param legend Draw a legend below the panels.
#' @param ... Further graphical parameters for the panels (e.g. `cex`).
#' @return `x`, invisibly.
#' @seealso [benchmark()].
#' @examples
#' # The full run behind vignette("benchmarks"), stored with the package.
#' res <- readRDS(system.file("extdata", "benchmark-full.rds", package = "RcppSpool"))
#' plot(res, workload = "empty_jobs")
#' plot(res, workload = "kendall", speedup = FALSE)
#' \dontrun{
#' res <- benchmark(workloads = "kendall", methods = "RcppSpool parallelFor",
#'                  sizes = list(kendall = c(20, 100)), threads = 2, reps = 1,
#'                  progress = FALSE)
#' plot(res)
#' }
#' @export
plot.RcppSpool_benchmark <- function(x, workload = NULL, speedup = TRUE, legend = TRUE, ...) {
  if (is.null(workload)) workload <- unique(x$workload)
  bad <- setdiff(workload, unique(x$workload))
  if (length(bad)) stop("no results for workload(s): ", paste(bad, collapse = ", "), call. = FALSE)
  if (length(workload) > 1L && grDevices::dev.interactive()) {
    old <- grDevices::devAskNewPage(TRUE)
    on.exit(grDevices::devAskNewPage(old), add = TRUE)
  }
  for (w in workload) plot_workload(x, w, speedup, legend, ...)
  invisible(x)
}

plot_workload <- function(x, w, speedup, legend, ...) {
  sub <- x[x$workload == w & !is.na(x$time) & x$time > 0, , drop = FALSE]
  if (!nrow(sub)) {
    graphics::plot.new()
    graphics::title(main = bench_titles[[w]], sub = "no results")
    return(invisible())
  }
  ds <- unique(sub$d)
  has_speedup <- speedup && w %in% bench_speedup_workloads && any(sub$method == "serial") &&
    any(!is.na(sub$speedup) & sub$method != "serial")
  methods <- unique(sub$method)
  st <- bench_styles(methods)
  threads <- attr(x, "settings")$threads
  nc <- length(ds)
  nr <- 1L + has_speedup
  m <- matrix(seq_len(nr * nc), nr, nc, byrow = TRUE)
  heights <- rep(1, nr)
  if (legend) {
    m <- rbind(m, nr * nc + 1L)
    heights <- c(heights, 0.1 + 0.045 * ceiling(length(methods) / 3))
  }
  op <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(op), add = TRUE)
  graphics::layout(m, heights = heights)
  graphics::par(mar = c(4, 5, 2.6, 1), mgp = c(2.4, 0.7, 0), ...)

  draw <- function(y, ylab, main, log) {
    for (d in ds) {
      s <- sub[if (is.na(d)) is.na(sub$d) else sub$d %in% d, , drop = FALSE]
      yy <- y(s)
      ok <- is.finite(yy) & (!grepl("y", log) | yy > 0)
      yr <- if (any(ok)) range(yy[ok]) else c(0.1, 1)
      if (!grepl("y", log)) yr <- range(c(0, yr, 1, if (!is.null(threads)) threads))
      graphics::plot(range(sub$size), yr, type = "n", log = log, xlab = bench_xlabs[[w]], ylab = "",
                     main = main(d), cex.main = 0.95, axes = FALSE)
      graphics::title(ylab = ylab, line = 3.8)
      graphics::box()
      xt <- graphics::axTicks(1)
      graphics::axis(1, at = xt, labels = prettyNum(xt, big.mark = ",", scientific = FALSE))
      yt <- graphics::axTicks(2)
      graphics::axis(2, at = yt, labels = if (grepl("y", log)) format_seconds(yt, pad = FALSE) else yt, las = 1,
                     cex.axis = 0.85)
      graphics::grid(equilogs = FALSE, col = "grey90", lty = 1)
      if (!grepl("y", log)) {
        graphics::abline(h = 1, lty = 3)
        if (!is.null(threads)) graphics::abline(h = threads, lty = 2, col = "grey50")
      }
      for (j in seq_len(nrow(st))) {
        r <- s$method == st$method[j] & ok
        if (!any(r)) next
        o <- order(s$size[r])
        graphics::lines(s$size[r][o], yy[r][o], col = st$col[j], lty = st$lty[j], lwd = 1.6)
        graphics::points(s$size[r][o], yy[r][o], col = st$col[j], pch = st$pch[j], cex = 0.8)
      }
    }
  }
  draw(function(s) s$time, "seconds per run", function(d) bench_title(w, d), "xy")
  if (has_speedup) {
    draw(function(s) ifelse(s$method == "serial", NA, s$speedup), "speedup over serial",
         function(d) if (is.na(d)) "Speedup" else sprintf("Speedup, d = %d", d), "x")
  }
  if (legend) {
    graphics::par(mar = c(0, 0, 0, 0))
    graphics::plot.new()
    graphics::legend("center", legend = st$method, col = st$col, lty = st$lty, pch = st$pch, lwd = 1.6,
                     ncol = min(3L, length(methods)), bty = "n", cex = 0.9,
                     text.width = max(graphics::strwidth(st$method, cex = 0.9)))
  }
  invisible()
}
