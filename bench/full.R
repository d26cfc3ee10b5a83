# The full benchmark() run that feeds the "Benchmarks" vignette and the
# figures in man/figures/ (`make bench-full`; a few minutes on 2 cores). Run it on a
# quiet machine: it keeps whatever it measures.
#   inst/extdata/benchmark-full.rds   the result, read by vignettes/benchmarks.Rmd
#   man/figures/<workload>.png        PNG copies of the article's figures
library(RcppSpool)
if (dir.exists("build")) options(RcppSpool.bench_cache = file.path("build", "bench-cache"))

res <- benchmark(progress = interactive() || isatty(stdout()))
op <- options(width = max(getOption("width"), 130))
print(res)
options(op)
if (!all(res$correct, na.rm = TRUE)) stop("some results differ from the serial ones: not saved")

dir.create(file.path("inst", "extdata"), recursive = TRUE, showWarnings = FALSE)
saveRDS(res, file.path("inst", "extdata", "benchmark-full.rds"), version = 2)

if (capabilities("png")) {
  dir.create(file.path("man", "figures"), recursive = TRUE, showWarnings = FALSE)
  for (w in c("empty_jobs", "kendall", "kde")) {
    n_d <- length(unique(res$d[res$workload == w]))
    grDevices::png(file.path("man", "figures", paste0(w, ".png")), width = if (n_d > 1) 1200 else 800,
                   height = 900, res = 110)
    plot(res, workload = w)
    grDevices::dev.off()
  }
}
cat("wrote inst/extdata/benchmark-full.rds and man/figures/\n")
