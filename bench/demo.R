# make demo: RcppSpool's benchmark, in one command.
#
# Runs benchmark(quick = TRUE) (about two minutes on two cores: the workloads
# of Nagler's RcppThread paper, plus fork-join latency, nested loops and
# recursive tasks, for RcppSpool, serial code, std::thread, std::async,
# OpenMP, RcppParallel and RcppThread), prints the table, and writes
#   bench/results/benchmark.csv        the tidy data
#   bench/results/<workload>.png       one figure per workload
#   bench/results/kendall_matrix.txt   kendall_matrix() against cor()
#   bench/results/timeline.png         timeline(): an unbalanced loop, dynamic vs static schedule
#   bench/results/timeline-*.json      the same for Perfetto (https://ui.perfetto.dev)
# Run from the repository's root with the package installed:
#   Rscript bench/demo.R [output directory]
suppressPackageStartupMessages(library(RcppSpool))

args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args)) args[[1]] else file.path("bench", "results")
dir.create(out_dir, recursive = TRUE, showWarnings = FALSE)

# The workloads (RcppSpool's, RcppParallel's and RcppThread's) are compiled
# at run time; keep them in build/ (git-ignored) so that a second `make demo`
# starts at once.
if (dir.exists("build")) options(RcppSpool.bench_cache = file.path("build", "bench-cache"))

started <- Sys.time()
cores <- availableCores()
cat(sprintf("RcppSpool %s demo on %s: %d cores available (rule: %s), %d threads used\n\n",
            utils::packageVersion("RcppSpool"), R.version.string, cores, names(cores),
            max(1L, getThreads())))

# --- 1. kendall_matrix(): the demo's workload as a user function ------------
set.seed(1)
x <- matrix(rnorm(2000 * 20), 2000, 20)
x[, 2] <- x[, 2] + x[, 1]
t_cor <- system.time(ref <- cor(x, method = "kendall"))[["elapsed"]]
t_km <- numeric(5)
for (i in seq_along(t_km)) t_km[i] <- system.time(tau <- kendall_matrix(x))[["elapsed"]]
t_km <- median(t_km)
ties <- round(x, 1)
ok_ties <- max(abs(kendall_matrix(ties) - cor(ties, method = "kendall")))
kendall_report <- c(
  "kendall_matrix() against cor(method = \"kendall\"), n = 2000, d = 20",
  sprintf("  cor():            %8.3f s", t_cor),
  sprintf("  kendall_matrix(): %8.3f s  (%.0fx faster)", t_km, t_cor / max(t_km, 1e-4)),
  sprintf("  largest difference: %.1e without ties, %.1e with ties", max(abs(tau - ref)), ok_ties)
)
writeLines(kendall_report)
writeLines(kendall_report, file.path(out_dir, "kendall_matrix.txt"))
stopifnot(max(abs(tau - ref)) < 1e-12, ok_ties < 1e-12)

# PNG figures: the png() device if this R has it, else Cairo's or the
# ghostscript-based bitmap() device.
open_png <- function(file, width = 1000, height = 800) {
  if (capabilities("png")) {
    grDevices::png(file, width = width, height = height, res = 110)
  } else if (capabilities("cairo")) {
    grDevices::png(file, width = width, height = height, res = 110, type = "cairo")
  } else if (nzchar(Sys.which("gs")) || nzchar(Sys.getenv("R_GSCMD"))) {
    grDevices::bitmap(file, type = "png16m", width = width / 110, height = height / 110, res = 110)
  } else {
    return(FALSE)
  }
  TRUE
}
# --- 2. a timeline: what the threads did in an unbalanced loop ----------------
# Kendall's loop shape (row i pairs column i with the d - i columns after it),
# under RcppSpool's dynamic schedule and under a static one (nBatches = the
# number of threads: one contiguous half each, as OpenMP's schedule(static)).
cat("\ntimeline(): an unbalanced triangular loop, dynamic vs static schedule\n")
tri_src <- file.path(tempdir(), "timeline_triangle.cpp")
writeLines(c(
  "// [[Rcpp::depends(RcppSpool)]]",
  "#include <Rcpp.h>",
  "#include <RcppSpool.h>",
  "#include <cmath>",
  "// Row i does (d - i) * units units of work.",
  "// [[Rcpp::export(rng = false)]]",
  "double triangle(int d, int units, int threads, bool staticSchedule) {",
  "  std::vector<double> out(d);",
  "  RcppSpool::parallelFor(0, d, [&](std::ptrdiff_t i) {",
  "    double s = 0;",
  "    for (long k = 0; k < static_cast<long>(d - i) * units; ++k) s += std::sqrt(static_cast<double>(k));",
  "    out[i] = s;",
  "  }, threads, staticSchedule ? threads : 0);",
  "  double sum = 0;",
  "  for (double v : out) sum += v;",
  "  return sum;",
  "}"), tri_src)
tri_cache <- if (dir.exists("build")) file.path("build", "demo-timeline") else tempdir()
suppressWarnings(Rcpp::sourceCpp(tri_src, cacheDir = tri_cache, showOutput = FALSE))
threads <- max(2L, getThreads())
invisible(triangle(60, 3000, threads, FALSE))  # warm-up: the workers are started
tl_dynamic <- timeline(triangle(200, 6000, threads, FALSE))
tl_static <- timeline(triangle(200, 6000, threads, TRUE))
report_tl <- function(name, tl) {
  s <- summary(tl)
  cat(sprintf("  %-8s %6.3f s, parallel efficiency %3.0f%%, loop imbalance %.2f\n", name, tl$seconds,
              100 * s$efficiency, max(s$loops$imbalance)))
}
report_tl("dynamic", tl_dynamic)
report_tl("static", tl_static)
tl_file <- file.path(out_dir, "timeline.png")
if (open_png(tl_file, width = 1100, height = 700)) {
  op <- graphics::par(mfrow = c(2, 1))
  to <- max(tl_dynamic$seconds, tl_static$seconds)
  plot(tl_dynamic, to = to, main = sprintf("RcppSpool's dynamic schedule: %.2f s, efficiency %.0f%%",
                                           tl_dynamic$seconds, 100 * summary(tl_dynamic)$efficiency))
  plot(tl_static, to = to, main = sprintf("static schedule (nBatches = %d): %.2f s, efficiency %.0f%%", threads,
                                          tl_static$seconds, 100 * summary(tl_static)$efficiency))
  graphics::par(op)
  grDevices::dev.off()
  cat("  wrote", tl_file, "\n")
}
write_trace(tl_dynamic, file.path(out_dir, "timeline-dynamic.json"))
write_trace(tl_static, file.path(out_dir, "timeline-static.json"))

# --- 3. the benchmark -------------------------------------------------------
cat("\nbenchmark(quick = TRUE):\n")
res <- benchmark(quick = TRUE, progress = interactive() || isatty(stdout()))
op <- options(width = max(getOption("width"), 130))
print(res)
options(op)

csv <- file.path(out_dir, "benchmark.csv")
utils::write.csv(as.data.frame(unclass(res)), csv, row.names = FALSE)

figures <- character()
for (w in unique(res$workload)) {
  n_d <- length(unique(res$d[res$workload == w]))
  file <- file.path(out_dir, paste0(w, ".png"))
  if (!open_png(file, width = if (n_d > 1) 1200 else 800, height = 900)) {
    warning("no PNG device (no png, cairo or ghostscript): figures not written")
    break
  }
  plot(res, workload = w)
  grDevices::dev.off()
  figures <- c(figures, file)
}

# --- 4. the headline figures, against the targets of the project ------------------
pick <- function(w, m, size, d = NA, what = "time") {
  r <- res[res$workload == w & res$method == m & res$size == size &
             (if (is.na(d)) is.na(res$d) else res$d %in% d), what]
  if (length(r)) r[1] else NA_real_
}
verdict <- function(ok) if (isTRUE(ok)) "meets" else if (isFALSE(ok)) "MISSES" else "n/a"
fs <- RcppSpool:::format_seconds
cat(sprintf("\nheadline figures (%d threads):\n", attr(res, "settings")$threads))
jobs <- max(res$size[res$workload == "empty_jobs"])
spool <- pick("empty_jobs", "RcppSpool parallelFor", jobs)
thread <- pick("empty_jobs", "RcppThread parallelFor", jobs)
tbb <- pick("empty_jobs", "RcppParallel", jobs)
cat(sprintf("  %s jobs with parallelFor: RcppSpool %s, RcppThread %s, RcppParallel %s\n",
            format(jobs, big.mark = ",", scientific = FALSE), fs(spool), fs(thread), fs(tbb)))
cat(sprintf("    target: faster than RcppThread and within 2x of RcppParallel: %s\n",
            verdict(spool < thread && spool <= 2 * tbb)))
for (w in c("kendall", "kde")) {
  n <- max(res$size[res$workload == w])
  sub <- res[res$workload == w & res$size == n & res$d %in% 100 & res$method != "serial", ]
  sub <- sub[order(-sub$speedup), ]
  cat(sprintf("  %s, d = 100, n = %g, speedup over serial: %s\n", w, n,
              paste(sprintf("%s %.2fx", sub$method, sub$speedup), collapse = ", ")))
  ours <- pick(w, "RcppSpool parallelFor", n, 100, "speedup")
  best_other <- suppressWarnings(max(sub$speedup[!startsWith(sub$method, "RcppSpool")], na.rm = TRUE))
  if (w == "kendall") {
    cat(sprintf("    target: parallelFor >= 1.8x and no other method more than 5%% faster: %s\n",
                verdict(ours >= 1.8 && best_other <= 1.05 * ours)))
  } else {
    cat(sprintf("    target: parallelFor >= 1.8x: %s\n", verdict(ours >= 1.8)))
  }
}

cat(sprintf("\nwrote %s, %s and %d figures to %s/ (%.1f minutes in all)\n", basename(csv),
            "kendall_matrix.txt", length(figures), out_dir,
            as.numeric(difftime(Sys.time(), started, units = "mins"))))
