#!/usr/bin/env Rscript
# Real packages' kernels, original and migrated, in ONE R process (issue 37).
#
# bench/real-packages.R times each build in fresh processes that alternate.
# On a 2-core virtual machine that comparison carries two things a
# threading library does not decide: the machine's speed drifts by 20-30%
# within minutes (the same process's calls move together), and the state of
# glibc's heap differs from process to process (whether the main heap's
# top is trimmed and faulted in again after each call depends on where
# long-lived small blocks lie: RcppThread's pool threads keep some of R's
# main thread's in their caches, which pins it). This script loads both
# builds' shared libraries into one process (the migrated one copied under
# another name, called through its native symbol, as the package's R code
# calls it) and alternates their calls, so that both see the same machine
# speed and the same heap: what differs is the package's code as the two
# builds compiled it, and the loop's library.
#
#   Rscript bench/real-packages-one-process.R [--calls=30] [--packages=a,b] [--threads=1,2]
#                                             [--spool-lib=DIR]
#
# The builds are bench/real-packages.R's (its cache in build/real-packages/,
# installed there first if missing; --spool-lib as there). For each package,
# call and thread count: the median seconds of --calls calls of each build
# (the order turning every call, 30 ms apart so that oneTBB's workers
# settle), the median of the per-pair ratios migrated/original, and the
# process's page faults and system time per call (the heap's share).
# Both builds' results must agree (checked). Prints the load average.
here <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[1])) else "bench"
})
source(file.path(here, "real-packages.R"))  # real_packages, install_builds(), ...

# The native entry each package's R code calls for its timed call: the
# symbol, and the arguments as R code of `n` after the package's setup.
# Thread counts: RcppParallel-based packages (both builds) read
# RCPP_PARALLEL_NUM_THREADS at every loop; mvrsquared takes `n`.
native_calls <- list(
  parallelDist = list(
    parDist = list(symbol = "_parallelDist_cpp_parallelDistMatrixVec",
                   args = "list(x, list(Size = nrow(x), Labels = NULL, Diag = FALSE, Upper = FALSE,
                           method = 'euclidean', call = quote(parDist()), class = 'dist'), list())")),
  mvrsquared = list(kernel = list(symbol = "_mvrsquared_calc_sum_squares", args = "list(Y, Yh, ybar, n)")),
  lamW = list(lambertW0 = list(symbol = "_lamW_lambertW0_C", args = "list(x)"))
)

one_process_child <- r"--(
args <- commandArgs(trailingOnly = TRUE)
spec <- readRDS(args[1]); out <- args[2]; threads <- as.integer(strsplit(args[3], ",")[[1]])
calls <- as.integer(args[4])
suppressPackageStartupMessages({
  library(spec$package, character.only = TRUE)  # the original, with its R code
  loadNamespace("RcppSpool")                     # the migrated build's runtime
})
dlls <- c(original = spec$package, migrated = "migrated_build")
dyn.load(spec$migrated_so)  # a copy named migrated_build.so
set.seed(1)
eval(parse(text = spec$setup), globalenv())
faults <- function() as.numeric(strsplit(sub("^.*\\) ", "", readLines("/proc/self/stat")), " ")[[1]][8])
rows <- list()
for (n in threads) {
  Sys.setenv(RCPP_PARALLEL_NUM_THREADS = n)
  assign("n", n, globalenv())
  for (cl in names(spec$native)) {
    nat <- spec$native[[cl]]
    a <- eval(parse(text = nat$args), globalenv())
    sym <- lapply(dlls, function(d) getNativeSymbolInfo(nat$symbol, PACKAGE = d))
    val <- lapply(sym, function(s) do.call(.Call, c(list(s), a)))  # warm-up, and the values compared
    same <- isTRUE(all.equal(val$original, val$migrated, tolerance = 1e-12))
    m <- array(NA_real_, c(calls, 2, 3), list(NULL, names(dlls), c("s", "sys", "faults")))
    for (i in seq_len(calls)) for (b in if (i %% 2) 1:2 else 2:1) {
      Sys.sleep(0.03)
      f0 <- faults()
      st <- system.time(do.call(.Call, c(list(sym[[b]]), a)))
      m[i, b, ] <- c(st[["elapsed"]], st[["sys.self"]], faults() - f0)
    }
    med <- stats::median
    rows[[length(rows) + 1]] <- data.frame(
      call = cl, threads = n, original_s = med(m[, 1, "s"]), migrated_s = med(m[, 2, "s"]),
      ratio = med(m[, 2, "s"] / m[, 1, "s"]), q1 = stats::quantile(m[, 2, "s"] / m[, 1, "s"], 0.25),
      q3 = stats::quantile(m[, 2, "s"] / m[, 1, "s"], 0.75),
      faults = sprintf("%.0f/%.0f", med(m[, 1, "faults"]), med(m[, 2, "faults"])),
      sys_ms = sprintf("%.1f/%.1f", 1000 * med(m[, 1, "sys"]), 1000 * med(m[, 2, "sys"])), same = same)
  }
}
saveRDS(do.call(rbind, rows), out)
)--"

one_process_main <- function(args = commandArgs(TRUE)) {
  calls <- 30L
  keep <- !grepl("^--calls", args)
  if (any(!keep)) calls <- as.integer(sub("^--calls=?", "", args[!keep][1]))
  if (is.na(calls) || calls < 3) { say("real-packages-one-process: --calls must be a whole number >= 3"); return(2L) }
  opts <- tryCatch(parse_args(args[keep]), error = function(e) { say("real-packages-one-process: ", conditionMessage(e)); NULL })
  if (is.null(opts)) return(2L)
  if (!file.exists("/proc/self/stat")) { say("real-packages-one-process: needs Linux (/proc)"); return(2L) }
  spool_lib <- opts$`spool-lib`
  if (!nzchar(spool_lib)) {
    found <- find.package("RcppSpool", quiet = TRUE)
    spool_lib <- if (length(found)) dirname(found[1]) else ""
  }
  if (!nzchar(spool_lib) || !file.exists(file.path(spool_lib, "RcppSpool", "include", "RcppSpool.h"))) {
    say("real-packages-one-process: RcppSpool is not installed: give --spool-lib")
    return(2L)
  }
  spool_lib <- normalizePath(spool_lib)
  cache <- file.path(root, "build", "real-packages")
  rver <- paste(R.version$major, R.version$minor, sep = ".")
  ctx <- list(spool_lib = spool_lib, cache = cache, key = headers_key(spool_lib),
              tarballs = file.path(cache, "tarballs"), deps_lib = file.path(cache, paste0("deps-R", rver)),
              libs = list(original = file.path(cache, "lib-original"), migrated = file.path(cache, "lib-migrated")),
              work = tempfile("real-packages-one-"))
  for (d in c(ctx$tarballs, ctx$deps_lib, unlist(ctx$libs), ctx$work)) dir.create(d, recursive = TRUE, showWarnings = FALSE)
  on.exit(unlink(ctx$work, recursive = TRUE), add = TRUE)
  .libPaths(unique(c(ctx$deps_lib, .libPaths())))
  say(sprintf("RcppSpool %s from %s (headers %s); %s", version_in(spool_lib, "RcppSpool"), spool_lib,
              substr(ctx$key, 1, 10), R.version.string))
  say("load average before: ", load_avg(), " (", parallel::detectCores(), " cores)")
  pkgs <- install_builds(intersect(opts$packages, names(native_calls)), ctx, opts$refresh)
  child <- file.path(ctx$work, "child.R")
  writeLines(one_process_child, child)
  res <- list()
  for (p in pkgs) {
    spec <- real_packages[[p]]
    spec$package <- p
    spec$native <- native_calls[[p]]
    spec$migrated_so <- file.path(ctx$work, "migrated_build.so")
    file.copy(file.path(ctx$libs$migrated, p, "libs", paste0(p, .Platform$dynlib.ext)), spec$migrated_so, overwrite = TRUE)
    sf <- file.path(ctx$work, "spec.rds"); out <- file.path(ctx$work, "out.rds")
    saveRDS(spec, sf); unlink(out)
    libs <- c(ctx$libs$original, spool_lib, ctx$deps_lib, .libPaths())
    log <- file.path(ctx$work, paste0(p, ".log"))
    status <- system2(r_exe("Rscript"), c(child, sf, out, paste(opts$threads, collapse = ","), calls),
                      env = paste0("R_LIBS=", lib_path(libs)), stdout = log, stderr = log)
    if (status != 0 || !file.exists(out)) { say("  ", p, ": the child failed:\n", tail_log(log, 8)); next }
    r <- readRDS(out)
    res[[length(res) + 1]] <- cbind(package = p, r)
  }
  say("load average after: ", load_avg())
  if (!length(res)) return(2L)
  tab <- do.call(rbind, res)
  fmt <- function(x) sprintf("%.3f", x)
  tab$original_s <- fmt(tab$original_s); tab$migrated_s <- fmt(tab$migrated_s)
  tab$ratio <- sprintf("%.3f [%.3f-%.3f]", tab$ratio, tab$q1, tab$q3)
  tab$q1 <- tab$q3 <- NULL
  say(sprintf("\nboth builds in one R process, %d calls each, alternating; seconds: medians; ratio: median of", calls))
  say("the per-pair ratios migrated/original [quartiles]; faults, sys_ms: the process's page faults and")
  say("system time a call (original/migrated)")
  print(tab[, setdiff(names(tab), "same")], row.names = FALSE, right = FALSE)
  if (!all(tab$same)) { say("RESULTS DIFFER between the builds: ", paste(tab$call[!tab$same], collapse = ", ")); return(1L) }
  say("results: the same in both builds")
  0L
}

if (sys.nframe() == 0L) quit(status = one_process_main(), save = "no")
