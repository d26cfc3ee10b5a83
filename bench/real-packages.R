#!/usr/bin/env Rscript
# Real CRAN packages, as they are and migrated to RcppSpool, timed on their
# own heavy calls (issue 37). For each package below the script installs the
# CRAN source as it is (against RcppParallel or RcppThread) into one library,
# and a copy migrated by use_rcppspool() of the RcppSpool under test into
# another; then it times each package's call in fresh R processes that
# alternate between the two builds: ROUNDS rounds, in each a process per
# build (the order turning each round) that runs the call once to warm up and
# then 5 times at each thread count (the order of the thread counts turning
# too), keeping the median of the 5. No code of the packages is kept in the
# repository: the sources come from the configured repository
# (getOption("repos")).
#
#   Rscript bench/real-packages.R [--rounds=4] [--packages=a,b] [--threads=1,2]
#                                 [--spool-lib=DIR] [--csv=FILE] [--refresh]
#   Rscript bench/real-packages.R --probe [--spool-lib=DIR]
#
# --spool-lib: the library holding the RcppSpool under test (default: where
#   .libPaths() / R_LIBS find it, e.g. the checkout's .Rlib); the migrated
#   builds compile against its headers and load its runtime.
# --packages: a subset of the names below. --threads: the thread counts
#   (default 1,2). --csv: every raw median (round, package, build, call,
#   threads, seconds, cpu, and a digest of the value). --refresh: download the
#   sources again.
# Options may also be written "--rounds 4".
#
# Printed per package, call and thread count: original and migrated seconds,
# the median over the rounds [min-max]; ratio: the median of the per-round
# ratios migrated/original; speedup: each build's median at 1 thread over its
# median at n threads; cpu_ratio: as ratio, for the CPU time (user + sys of
# all the process's threads) of the calls. Both builds' results must agree
# (checked). The load average before and after is printed: on a busy machine
# compare only ratios of one run. Each round's line shows, per call, the CPU
# seconds a call of each thread of the process (Linux: /proc/self/task, in
# 1/100 s), user+system: R's main thread first, then the others that ran,
# largest first, "main/worker/..." (also in the CSV): what ran serially on
# R's main thread, how the loop's work was shared, and where the kernel
# worked for it (page faults show as system time). Environment variables
# reach the child processes: e.g. MALLOC_TRIM_THRESHOLD_=4000000000
# MALLOC_MMAP_THRESHOLD_=33554432 (glibc: never give the heap back) shows
# what page faults in R's main thread's heap cost.
#
# Cache (build/real-packages/ of this checkout): the tarballs, the original
# builds (rebuilt when the tarball, R, RcppParallel or RcppThread changes),
# and the migrated builds, keyed on an MD5 of the RcppSpool under test's
# headers (include/) and its version: a rerun against changed headers
# reinstalls only the migrated side. Installs run two at a time, one make job
# each. Dependencies the packages need and .libPaths() lacks go to
# build/real-packages/deps-R<version>.
#
# Thread counts: parallelDist's parDist(threads = n) calls setThreadOptions()
# itself (RcppParallel's, or RcppSpool's in the migrated copy: use_rcppspool()
# rewrites the call); lamW has no argument, so the child calls the build's
# own setThreadOptions(numThreads = n) (both set RCPP_PARALLEL_NUM_THREADS,
# which RcppParallel 5 and RcppSpool/RcppParallel.h read at every loop);
# mvrsquared passes `threads` to RcppThread::parallelFor (RcppSpool's in the
# migrated copy).
#
# --probe: no packages; compiles (Rcpp::sourceCpp, in a child R process)
# the two loop shapes once against RcppSpool (as a migrated package runs
# them: R's main thread the caller, RcppSpool's runtime from its shared
# library) and once against what the originals use (RcppParallel, i.e.
# oneTBB; RcppThread), in one R process, alternating, and counts, per index,
# which thread ran it: body calls (pieces), ownership switches along the
# range (i run by another thread than i - 1), the caller's share; and the
# loop's wall time, the process's CPU time during it and the threads' CPU
# time inside the body (thread CPU clocks; what is left is the library's:
# claiming, stealing, spinning, waking). 7 calls at each thread count,
# medians. The shapes (Armadillo, as the packages): parallelDist's (a
# Worker, grain 1, over 3000 triangular rows, each row taken as an
# arma::mat, distances written to R's packed dist vector) and mvrsquared's
# (parallelFor with an index body over the 2000 rows of a column-major
# 2000 x 1000 matrix, each row taken as an arma::rowvec, checkUserInterrupt()
# first). The same counts for more shapes and libraries, without R:
# cpp/bench/bench_shapes.cpp (make bench).
#
# Takes, with the default 4 rounds and three packages, about 5 minutes plus
# the installs (about 4 minutes the first time, 2 for a new RcppSpool).

here <- local({
  arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(arg)) dirname(normalizePath(sub("^--file=", "", arg[1]))) else "bench"
})
root <- normalizePath(file.path(here, ".."))
# Reused: migrate_package() (RcppThread), migrate_rcppparallel_package(),
# get_tarball(), ensure_deps(), run_tasks(), say(), secs(), r_exe(), lib_path().
source(file.path(root, "tools", "compat-packages.R"))
source(file.path(root, "tools", "rcppparallel-packages.R"))

# The packages and their calls. `from`: what the original uses. `setup`: R
# code run once in the child (set.seed(1) before it); `calls`: named R
# expressions of `n` (the thread count) whose value is compared between the
# builds; `threads`: R code run before the calls at each thread count (`n`,
# `build` = "original" or "migrated").
real_packages <- list(
  parallelDist = list(
    from = "RcppParallel",
    uses = "RcppParallel Worker + parallelFor, grain 1, over a triangle of rows",
    setup = "x <- matrix(rnorm(3000 * 20), 3000)",
    calls = c(parDist = "parallelDist::parDist(x, method = 'euclidean', threads = n)")
  ),
  mvrsquared = list(
    from = "RcppThread",
    uses = "RcppThread::parallelFor(0, rows, f, threads), Armadillo row temporaries in the body",
    setup = paste("y <- matrix(rpois(2e6, 3), 2000); yh <- y + rnorm(length(y))",
                  "Y <- mvrsquared:::handle_y(y); Yh <- mvrsquared:::handle_yhat(yh, dim(Y))$yhat",
                  "ybar <- Matrix::colMeans(Y)", sep = "; "),
    calls = c(calc_rsquared = "mvrsquared::calc_rsquared(y, yh, threads = n)",
              kernel = "mvrsquared:::calc_sum_squares(Y, Yh, ybar, n)")
  ),
  lamW = list(
    from = "RcppParallel",
    uses = "RcppParallel Worker + parallelFor, grain 4, over a vector (cheap, even body)",
    setup = "x <- runif(2e6, -0.3, 20)",
    threads = paste("if (build == 'original') RcppParallel::setThreadOptions(numThreads = n)",
                    "else RcppSpool::setThreadOptions(numThreads = n)"),
    calls = c(lambertW0 = "lamW::lambertW0(x)")
  )
)

# The child: loads the package, sets up, then for each thread count runs
# each call once (warm-up) and `reps` times; saves a data frame of medians
# and a digest of each call's value.
child_code <- r"--(
args <- commandArgs(trailingOnly = TRUE)
spec <- readRDS(args[1]); out <- args[2]; build <- args[3]
threads <- as.integer(strsplit(args[4], ",")[[1]]); reps <- as.integer(args[5])
suppressPackageStartupMessages(library(spec$package, character.only = TRUE))
set.seed(1)
eval(parse(text = spec$setup), globalenv())
digest <- function(v) {
  v <- unlist(if (is.list(v)) v else list(v))
  c(sum = sum(as.numeric(v)), sumsq = sum(as.numeric(v)^2), len = length(v))
}
# CPU seconds of each thread of this process so far (Linux: /proc/self/task).
thread_cpu <- function() {
  tasks <- list.files("/proc/self/task", full.names = TRUE)
  v <- vapply(tasks, function(d) {
    f <- strsplit(sub("^.*\\) ", "", tryCatch(readLines(file.path(d, "stat"), warn = FALSE), error = function(e) "")), " ")[[1]]
    # utime + 1i * stime, in seconds (ticks of 1/100 s)
    if (length(f) < 13) NA_complex_ else complex(real = as.numeric(f[12]), imaginary = as.numeric(f[13])) / 100
  }, 0i)
  stats::setNames(v, basename(tasks))
}
rows <- list()
for (n in threads) {
  assign("n", n, globalenv()); assign("build", build, globalenv())
  if (!is.null(spec$threads)) eval(parse(text = spec$threads), globalenv())
  for (k in seq_along(spec$calls)) {
    e <- parse(text = spec$calls[[k]])[[1]]
    v <- eval(e, globalenv())
    per <- 0i
    st <- vapply(seq_len(reps), function(i) {
      gc()  # as system.time()'s gcFirst, outside the threads' CPU window
      before <- thread_cpu()
      s <- system.time(eval(e, globalenv()), gcFirst = FALSE)
      after <- thread_cpu()
      per <<- per + (after - ifelse(is.na(before[names(after)]), 0, before[names(after)])) / reps
      c(s[["elapsed"]], s[["user.self"]] + s[["sys.self"]])  # CPU: all the process's threads
    }, c(0, 0))
    main <- per[[as.character(Sys.getpid())]]
    others <- per[names(per) != as.character(Sys.getpid()) & !is.na(per) & Mod(per) > 0]
    others <- others[order(Mod(others), decreasing = TRUE)]
    t <- st[1, ]
    d <- digest(v)
    rows[[length(rows) + 1]] <- data.frame(call = names(spec$calls)[k], threads = n, seconds = stats::median(t),
                                           cpu = stats::median(st[2, ]),
                                           # CPU s a call, user+system: R's main thread, then the others (largest first)
                                           threads_cpu = paste(sprintf("%.3f+%.3f", Re(c(main, others)), Im(c(main, others))),
                                                               collapse = "/"),
                                           min = min(t), max = max(t), sum = d[["sum"]], sumsq = d[["sumsq"]],
                                           len = d[["len"]])
  }
}
saveRDS(do.call(rbind, rows), out)
)--"


# The probe's C++ (see --probe above).
probe_cpp <- r"--(
// [[Rcpp::depends(RcppArmadillo)]]
// [[Rcpp::depends(RcppParallel)]]
// [[Rcpp::depends(RcppThread)]]
// [[Rcpp::depends(RcppSpool)]]
#include <RcppArmadillo.h>
#include <RcppParallel.h>
#include <RcppThread.h>
#include <RcppSpool/RcppParallel.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <string>
#include <vector>

namespace {
double cpuNs(clockid_t c) { timespec t; clock_gettime(c, &t); return 1e9 * t.tv_sec + t.tv_nsec; }
double wallNs() { return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
std::atomic<int> nextId{0};
int tid() { thread_local int id = nextId.fetch_add(1); return id; }
struct Record {
  std::vector<int> owner;
  std::atomic<long> calls{0};
  std::atomic<long long> bodyNs{0};  // CPU time of the threads inside the body
  double proc0 = cpuNs(CLOCK_PROCESS_CPUTIME_ID), wall0 = wallNs(), proc = 0, wall = 0;
  explicit Record(std::size_t n) : owner(n, -1) {}
  void stop() { proc = cpuNs(CLOCK_PROCESS_CPUTIME_ID) - proc0; wall = wallNs() - wall0; }
  Rcpp::NumericVector summary(int caller) const {
    double sw = 0, mine = 0;
    for (std::size_t i = 0; i < owner.size(); ++i) {
      if (i > 0 && owner[i] != owner[i - 1]) sw += 1;
      mine += owner[i] == caller;
    }
    return Rcpp::NumericVector::create(Rcpp::_["calls"] = static_cast<double>(calls.load()), Rcpp::_["switches"] = sw,
                                       Rcpp::_["caller_share"] = mine / owner.size(), Rcpp::_["wall_ms"] = wall / 1e6,
                                       Rcpp::_["cpu_ms"] = proc / 1e6, Rcpp::_["body_cpu_ms"] = bodyNs.load() / 1e6);
  }
};

// parallelDist's shape: row i against rows 0..i-1 of a column-major matrix,
// each row taken as an Armadillo matrix (a heap temporary of 20 doubles), the
// distance written to R's packed dist vector (rows i, i+1 adjacent).
struct DistBody {
  const arma::mat& x; std::size_t n; double* out; Record& rec;
  void operator()(std::size_t b, std::size_t e) const {
    rec.calls.fetch_add(1, std::memory_order_relaxed);
    const double c0 = cpuNs(CLOCK_THREAD_CPUTIME_ID);
    for (std::size_t i = b; i < e; ++i) {
      rec.owner[i] = tid();
      for (std::size_t j = 0; j < i; ++j) {
        const arma::mat A = x.row(i), B = x.row(j);
        out[j * n - j - j * (j + 1) / 2 + i - 1] = std::sqrt(arma::accu(arma::square(A - B)));
      }
    }
    rec.bodyNs.fetch_add(static_cast<long long>(cpuNs(CLOCK_THREAD_CPUTIME_ID) - c0), std::memory_order_relaxed);
  }
};
struct TbbDist : RcppParallel::Worker {
  DistBody body;
  explicit TbbDist(DistBody b) : body(b) {}
  void operator()(std::size_t b, std::size_t e) override { body(b, e); }
};
struct SpoolDist : RcppSpool::RcppParallel::Worker {
  DistBody body;
  explicit SpoolDist(DistBody b) : body(b) {}
  void operator()(std::size_t b, std::size_t e) override { body(b, e); }
};
}

// [[Rcpp::export]]
Rcpp::NumericVector probe_dist(const arma::mat& x, std::string lib, int threads) {
  const std::size_t n = x.n_rows;
  std::vector<double> out(n * (n - 1) / 2);
  Record rec(n);
  DistBody body{x, n, out.data(), rec};
  const int caller = tid();
  if (lib == "RcppSpool") {
    SpoolDist w(body);
    RcppSpool::RcppParallel::parallelFor(0, n, w, 1, threads);
  } else {
    TbbDist w(body);
    RcppParallel::parallelFor(0, n, w, 1, threads);
  }
  rec.stop();
  return rec.summary(caller);
}

// mvrsquared's shape: an index body per row of a column-major matrix, the row
// taken as an Armadillo row vector (an 8 KB heap temporary), with a check for
// an interrupt first.
// [[Rcpp::export]]
Rcpp::NumericVector probe_rows(const arma::mat& y, std::string lib, int threads) {
  const std::size_t n = y.n_rows;
  arma::vec out(n);
  Record rec(n);
  const int caller = tid();
  auto body = [&](std::size_t i, bool spool) {
    if (spool) RcppSpool::checkUserInterrupt(); else RcppThread::checkUserInterrupt();
    const double c0 = cpuNs(CLOCK_THREAD_CPUTIME_ID);
    rec.owner[i] = tid();
    const arma::rowvec r = y.row(i);
    out[i] = arma::dot(r, r);
    rec.bodyNs.fetch_add(static_cast<long long>(cpuNs(CLOCK_THREAD_CPUTIME_ID) - c0), std::memory_order_relaxed);
  };
  if (lib == "RcppSpool")
    RcppSpool::parallelFor(0, static_cast<std::ptrdiff_t>(n), [&](std::ptrdiff_t i) { body(i, true); }, threads);
  else
    RcppThread::parallelFor(0, static_cast<int>(n), [&](unsigned int i) { body(i, false); }, threads);
  rec.stop();
  rec.calls = static_cast<long>(n);  // index bodies: a call per index
  return rec.summary(caller);
}
)--"

probe_child <- r"--(
args <- commandArgs(trailingOnly = TRUE)
suppressWarnings(Rcpp::sourceCpp(args[1], cacheDir = args[2]))
set.seed(1)
x <- matrix(rnorm(3000 * 20), 3000)
y <- matrix(rpois(2e6, 3), 2000) + rnorm(2e6)
rows <- list()
for (k in 1:7) for (n in if (k %% 2) 1:2 else 2:1)
  for (lib in if (k %% 2) c("RcppSpool", "original") else c("original", "RcppSpool")) {
    v <- probe_dist(x, lib, n)
    rows[[length(rows) + 1]] <- data.frame(
      shape = "parallelDist-like: Worker, grain 1, 3000 triangular rows",
      library = if (lib == "RcppSpool") "RcppSpool" else "RcppParallel (oneTBB)", threads = n, rep = k, t(v))
    v <- probe_rows(y, lib, n)
    rows[[length(rows) + 1]] <- data.frame(
      shape = "mvrsquared-like: parallelFor index body, 2000 rows",
      library = if (lib == "RcppSpool") "RcppSpool" else "RcppThread", threads = n, rep = k, t(v))
  }
saveRDS(do.call(rbind, rows), args[3])
)--"

probe_main <- function(spool_lib) {
  work <- tempfile("real-packages-probe-")
  dir.create(work)
  on.exit(unlink(work, recursive = TRUE), add = TRUE)
  cpp <- file.path(work, "probe.cpp"); child <- file.path(work, "probe.R"); out <- file.path(work, "probe.rds")
  writeLines(probe_cpp, cpp); writeLines(probe_child, child)
  say(sprintf("probe: RcppSpool %s from %s; load average %s", version_in(spool_lib, "RcppSpool"), spool_lib, load_avg()))
  log <- file.path(work, "probe.log")
  status <- system2(r_exe("Rscript"), c(child, cpp, file.path(work, "cache"), out),
                    env = paste0("R_LIBS=", lib_path(c(spool_lib, .libPaths()))), stdout = log, stderr = log)
  if (status != 0 || !file.exists(out)) { say("probe failed:\n", tail_log(log, 20)); return(1L) }
  res <- readRDS(out)
  agg <- stats::aggregate(cbind(calls, switches, caller_share, wall_ms, cpu_ms, body_cpu_ms) ~ shape + library + threads,
                          res, stats::median)
  agg$caller_share <- sprintf("%.0f%%", 100 * agg$caller_share)
  for (k in c("wall_ms", "cpu_ms", "body_cpu_ms")) agg[[k]] <- sprintf("%.1f", agg[[k]])
  say("medians of 7 calls, the libraries alternating in one R process; calls: body calls (for the index body: indexes); switches: i run by another thread than i-1;")
  say("caller_share: the share of indexes R's main thread ran; wall_ms: the loop; cpu_ms: the process's CPU time")
  say("during the loop (all threads); body_cpu_ms: the threads' CPU time inside the body (thread CPU clocks)")
  print(agg[order(agg$shape, agg$library, agg$threads), ], row.names = FALSE, right = FALSE)
  0L
}

# ---------------------------------------------------------------------------

# `extra`: more options (name = default) of a script that sources this one.
parse_args <- function(args, extra = list()) {
  opts <- c(list(rounds = "4", packages = paste(names(real_packages), collapse = ","), threads = "1,2",
                 `spool-lib` = "", csv = "", refresh = FALSE, probe = FALSE), extra)
  i <- 1
  while (i <= length(args)) {
    a <- args[i]
    if (!grepl("^--", a)) stop("unexpected argument ", a, call. = FALSE)
    name <- sub("^--([^=]*).*$", "\\1", a)
    if (!name %in% names(opts)) stop("unknown option --", name, call. = FALSE)
    if (is.logical(opts[[name]])) {
      opts[[name]] <- TRUE
    } else if (grepl("=", a)) {
      opts[[name]] <- sub("^--[^=]*=", "", a)
    } else {
      i <- i + 1
      if (i > length(args)) stop("--", name, " needs a value", call. = FALSE)
      opts[[name]] <- args[i]
    }
    i <- i + 1
  }
  opts$rounds <- as.integer(opts$rounds)
  if (is.na(opts$rounds) || opts$rounds < 1) stop("--rounds must be a positive whole number", call. = FALSE)
  opts$threads <- as.integer(strsplit(opts$threads, ",")[[1]])
  if (anyNA(opts$threads) || any(opts$threads < 1)) stop("--threads: whole numbers, e.g. 1,2", call. = FALSE)
  if (!1L %in% opts$threads) opts$threads <- c(1L, opts$threads)  # the speedup needs it
  opts$packages <- trimws(strsplit(opts$packages, ",")[[1]])
  unknown <- setdiff(opts$packages, names(real_packages))
  if (length(unknown)) stop("unknown packages: ", paste(unknown, collapse = ", "), "; known: ",
                            paste(names(real_packages), collapse = ", "), call. = FALSE)
  opts
}

# An MD5 of the installed headers of the RcppSpool in `lib` and its version.
headers_key <- function(lib) {
  inc <- file.path(lib, "RcppSpool", "include")
  files <- sort(list.files(inc, recursive = TRUE, full.names = TRUE))
  sums <- tools::md5sum(files)
  f <- tempfile()
  writeLines(c(read.dcf(file.path(lib, "RcppSpool", "DESCRIPTION"), "Version")[1, 1],
               paste(sub(inc, "", files, fixed = TRUE), sums)), f)
  on.exit(unlink(f))
  unname(tools::md5sum(f))
}

# The library holding the RcppSpool under test: `given` (--spool-lib), else
# where .libPaths() finds it; NULL (said why, as `who`) if it has none.
spool_lib_of <- function(given, who) {
  lib <- given
  if (!nzchar(lib)) {
    found <- find.package("RcppSpool", quiet = TRUE)
    lib <- if (length(found)) dirname(found[1]) else ""
  }
  if (!nzchar(lib) || !file.exists(file.path(lib, "RcppSpool", "include", "RcppSpool.h"))) {
    say(who, ": RcppSpool is not installed in ", if (nzchar(lib)) lib else ".libPaths()", ": give --spool-lib")
    return(NULL)
  }
  normalizePath(lib)
}

# The builds' cache (build/real-packages/) and a new work directory (the
# caller removes it), made; the dependencies' library put first in .libPaths().
builds_ctx <- function(spool_lib, work_prefix) {
  cache <- file.path(root, "build", "real-packages")
  rver <- paste(R.version$major, R.version$minor, sep = ".")
  ctx <- list(spool_lib = spool_lib, cache = cache, key = headers_key(spool_lib),
              tarballs = file.path(cache, "tarballs"), deps_lib = file.path(cache, paste0("deps-R", rver)),
              libs = list(original = file.path(cache, "lib-original"), migrated = file.path(cache, "lib-migrated")),
              work = tempfile(work_prefix))
  for (d in c(ctx$tarballs, ctx$deps_lib, unlist(ctx$libs), ctx$work)) dir.create(d, recursive = TRUE, showWarnings = FALSE)
  .libPaths(unique(c(ctx$deps_lib, .libPaths())))
  ctx
}

version_in <- function(lib, p) {
  f <- file.path(lib, p, "DESCRIPTION")
  if (file.exists(f)) read.dcf(f, "Version")[1, 1] else NA_character_
}

# Installs what is not cached; returns the packages whose two builds are there.
install_builds <- function(pkgs, ctx, refresh) {
  tasks <- list()
  for (p in pkgs) {
    spec <- real_packages[[p]]
    tarball <- get_tarball(p, ctx$tarballs, refresh)
    if (is.null(tarball)) next
    src <- file.path(ctx$work, "src")
    dir.create(file.path(src, "original"), recursive = TRUE, showWarnings = FALSE)
    dir.create(file.path(src, "migrated"), recursive = TRUE, showWarnings = FALSE)
    utils::untar(tarball, exdir = file.path(src, "original"))
    desc <- as.list(read.dcf(file.path(src, "original", p, "DESCRIPTION"))[1, ])
    if (!ensure_deps(desc, character(), FALSE, .libPaths(), ctx$deps_lib)) {
      say("  ", p, ": its dependencies could not be installed; left out")
      next
    }
    stamps <- list(
      original = paste(basename(tarball), R.version.string, "RcppParallel", version_in(dirname(find.package(
        "RcppParallel")), "RcppParallel"), "RcppThread", version_in(dirname(find.package("RcppThread")), "RcppThread")),
      migrated = paste(basename(tarball), R.version.string, "RcppSpool headers", ctx$key, ctx$spool_lib))
    for (side in c("original", "migrated")) {
      lib <- ctx$libs[[side]]
      stamp <- file.path(lib, paste0(p, ".stamp"))
      if (file.exists(stamp) && identical(readLines(stamp), stamps[[side]]) && dir.exists(file.path(lib, p))) next
      unlink(c(stamp, file.path(lib, p)), recursive = TRUE)
      dir <- file.path(src, side, p)
      if (side == "migrated") {
        utils::untar(tarball, exdir = file.path(src, side))
        changes <- if (spec$from == "RcppThread") migrate_package(dir, ctx$spool_lib) else
          migrate_rcppparallel_package(dir, ctx$spool_lib)
        left <- grep(": left:", changes, value = TRUE)
        if (length(left)) say("  ", p, ": the migration left: ", paste(left, collapse = "; "))
      }
      libs <- c(if (side == "migrated") ctx$spool_lib, ctx$deps_lib, .libPaths())
      tasks[[length(tasks) + 1]] <- list(
        id = paste(p, side), needs = character(), cmd = r_exe(),
        args = c("CMD", "INSTALL", "--no-docs", "--no-multiarch", "--no-test-load", paste0("--library=", lib), dir),
        env = c(R_LIBS = lib_path(libs), MAKEFLAGS = "-j1"), wd = ctx$work,
        log = file.path(ctx$cache, paste0("install-", p, "-", side, ".log")), timeout = 1200,
        stamp = stamp, stamp_text = stamps[[side]])
    }
  }
  if (length(tasks)) {
    say("installing: ", paste(vapply(tasks, function(t) t$id, ""), collapse = ", "), " (two at a time)")
    run_tasks(tasks, slots = 2L, on_done = function(t) {
      if (identical(t$status, 0L)) {
        writeLines(t$stamp_text, t$stamp)
        say(sprintf("  %s installed (%.0f s)", t$id, t$seconds))
      } else {
        say(sprintf("  %s: install FAILED (status %s), log %s:\n%s", t$id, t$status, t$log, tail_log(t$log, 8)))
      }
    })
  }
  Filter(function(p) all(vapply(ctx$libs, function(l) file.exists(file.path(l, paste0(p, ".stamp"))) &&
                                  dir.exists(file.path(l, p)), TRUE)), pkgs)
}

# One child process: a data frame of medians, or NULL.
run_child <- function(p, side, threads, ctx, reps = 5L) {
  spec <- real_packages[[p]]
  spec$package <- p
  sf <- file.path(ctx$work, paste0(p, ".spec.rds"))
  saveRDS(spec, sf)
  out <- file.path(ctx$work, paste0(p, "-", side, ".rds"))
  unlink(out)
  libs <- c(ctx$libs[[side]], if (side == "migrated") ctx$spool_lib, ctx$deps_lib, .libPaths())
  log <- file.path(ctx$work, paste0(p, "-", side, ".log"))
  status <- system2(r_exe("Rscript"), c(ctx$child, sf, out, side, paste(threads, collapse = ","), reps),
                    env = paste0("R_LIBS=", lib_path(libs)), stdout = log, stderr = log)
  if (status != 0 || !file.exists(out)) {
    say("  ", p, " ", side, ": the child failed (status ", status, "):\n", tail_log(log, 8))
    return(NULL)
  }
  readRDS(out)
}

load_avg <- function() {
  if (file.exists("/proc/loadavg")) paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ") else "?"
}

real_main <- function(args = commandArgs(TRUE)) {
  opts <- tryCatch(parse_args(args), error = function(e) { say("real-packages: ", conditionMessage(e)); NULL })
  if (is.null(opts)) return(2L)
  spool_lib <- spool_lib_of(opts$`spool-lib`, "real-packages")
  if (is.null(spool_lib)) return(2L)
  if (opts$probe) return(probe_main(spool_lib))
  for (p in c("RcppParallel", "RcppThread"))
    if (!length(find.package(p, quiet = TRUE))) { say("real-packages: ", p, " is not installed"); return(2L) }
  ctx <- builds_ctx(spool_lib, "real-packages-")
  on.exit(unlink(ctx$work, recursive = TRUE), add = TRUE)
  ctx$child <- file.path(ctx$work, "child.R")
  writeLines(child_code, ctx$child)
  say(sprintf("RcppSpool %s from %s (headers %s); RcppParallel %s; RcppThread %s; %s",
              version_in(spool_lib, "RcppSpool"), spool_lib, substr(ctx$key, 1, 10),
              packageVersion("RcppParallel"), packageVersion("RcppThread"), R.version.string))
  say("load average before: ", load_avg(), " (", parallel::detectCores(), " cores)")

  pkgs <- install_builds(opts$packages, ctx, opts$refresh)
  if (!length(pkgs)) { say("real-packages: no package has both builds"); return(2L) }

  raw <- list()
  for (r in seq_len(opts$rounds)) {
    thr <- if (r %% 2) opts$threads else rev(opts$threads)
    for (p in pkgs) {
      sides <- if (r %% 2) c("original", "migrated") else c("migrated", "original")
      for (side in sides) {
        res <- run_child(p, side, thr, ctx)
        if (is.null(res)) next
        raw[[length(raw) + 1]] <- cbind(round = r, package = p, build = side, res)
        say(sprintf("  round %d %-12s %-8s %s", r, p, side,
                    paste(sprintf("%s/%d %.3fs (cpu %s)", res$call, res$threads, res$seconds, res$threads_cpu),
                          collapse = "  ")))
      }
    }
  }
  say("load average after: ", load_avg())
  if (!length(raw)) return(2L)
  raw <- do.call(rbind, raw)
  if (nzchar(opts$csv)) utils::write.csv(raw, opts$csv, row.names = FALSE)

  med <- stats::median
  rng <- function(x) sprintf("%.3f [%.3f-%.3f]", med(x), min(x), max(x))
  rows <- list()
  bad <- character()
  for (p in pkgs) for (cl in unique(raw$call[raw$package == p])) {
    sub <- raw[raw$package == p & raw$call == cl, ]
    # Both builds' values agree (all rounds, all thread counts).
    ok <- isTRUE(all.equal(range(sub$sum), rep(sub$sum[1], 2), tolerance = 1e-9)) &&
      isTRUE(all.equal(range(sub$sumsq), rep(sub$sumsq[1], 2), tolerance = 1e-9)) && length(unique(sub$len)) == 1
    if (!ok) bad <- c(bad, paste(p, cl))
    one <- function(side, n) sub[sub$build == side & sub$threads == n, ]
    for (n in opts$threads) {
      o <- one("original", n); m <- one("migrated", n)
      m <- m[match(o$round, m$round), ]
      o1 <- one("original", 1L); m1 <- one("migrated", 1L)
      rows[[length(rows) + 1]] <- data.frame(
        package = p, call = cl, threads = n,
        original_s = rng(o$seconds), migrated_s = rng(m$seconds),
        ratio = sprintf("%.2f%s", med(m$seconds / o$seconds, na.rm = TRUE),
                        if (med(m$seconds / o$seconds, na.rm = TRUE) > 1.05) " !" else ""),
        speedup_orig = sprintf("%.2f", med(o1$seconds) / med(o$seconds)),
        speedup_mig = sprintf("%.2f", med(m1$seconds) / med(m$seconds)),
        cpu_ratio = sprintf("%.2f", med(m$cpu / o$cpu, na.rm = TRUE)))
    }
  }
  tab <- do.call(rbind, rows)
  say(sprintf("\n%d round(s), each the median of 5 calls in a fresh R process per build, builds alternating;", opts$rounds))
  say("seconds: median over rounds [min-max]; ratio: median of per-round migrated/original (! above 1.05);")
  say("speedup: the build's median at 1 thread over its median at n threads; cpu_ratio: the same ratio as")
  say("ratio for the CPU seconds (user + sys, all threads) of the calls")
  print(tab, row.names = FALSE, right = FALSE)
  if (length(bad)) {
    say("RESULTS DIFFER between builds or thread counts: ", paste(bad, collapse = ", "))
    return(1L)
  }
  say("results: the same in both builds at every thread count")
  0L
}

if (sys.nframe() == 0L) quit(status = real_main(), save = "no")
