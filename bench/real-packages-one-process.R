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
# A third build is timed beside them as a control: the original as it is,
# but compiled as C++17, the one change use_rcppspool() makes to a package
# besides its threading library (RcppSpool's headers need C++17); its ratio
# to the original is what the language standard alone does to the
# package's code (cached in build/real-packages/lib-original-cxx17).
# All builds' results must agree (checked). Prints the load average.
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
dlls <- c(original = spec$package, original_cxx17 = "cxx17_build", migrated = "migrated_build")
for (f in spec$copies) dyn.load(f)  # cxx17_build.so and migrated_build.so
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
    same <- all(vapply(val[-1], function(v) isTRUE(all.equal(val$original, v, tolerance = 1e-12)), TRUE))
    m <- array(NA_real_, c(calls, 3, 3), list(NULL, names(dlls), c("s", "sys", "faults")))
    for (i in seq_len(calls)) for (b in if (i %% 2) 1:3 else 3:1) {
      Sys.sleep(0.03)
      f0 <- faults()
      st <- system.time(do.call(.Call, c(list(sym[[b]]), a)))
      m[i, b, ] <- c(st[["elapsed"]], st[["sys.self"]], faults() - f0)
    }
    med <- stats::median
    r <- function(b) m[, b, "s"] / m[, "original", "s"]
    q <- function(x) sprintf("%.3f [%.3f-%.3f]", med(x), stats::quantile(x, 0.25), stats::quantile(x, 0.75))
    rows[[length(rows) + 1]] <- data.frame(
      call = cl, threads = n, original_s = sprintf("%.3f", med(m[, "original", "s"])),
      migrated_s = sprintf("%.3f", med(m[, "migrated", "s"])), ratio = q(r("migrated")), cxx17_ratio = q(r("original_cxx17")),
      faults = paste(sprintf("%.0f", apply(m[, , "faults"], 2, med)), collapse = "/"),
      sys_ms = paste(sprintf("%.1f", 1000 * apply(m[, , "sys"], 2, med)), collapse = "/"), same = same)
  }
}
saveRDS(do.call(rbind, rows), out)
)--"

# The control build: the original's source compiled as C++17 (RcppSpool's own
# ensure_cxx17(), as use_rcppspool() edits src/Makevars), else as it is.
install_cxx17 <- function(p, ctx) {
  lib <- file.path(ctx$cache, "lib-original-cxx17")
  dir.create(lib, showWarnings = FALSE)
  tarball <- get_tarball(p, ctx$tarballs, FALSE)
  stamp <- file.path(lib, paste0(p, ".stamp"))
  want <- paste(basename(tarball), R.version.string, readLines(file.path(ctx$libs$original, paste0(p, ".stamp"))))
  if (file.exists(stamp) && identical(readLines(stamp), want) && dir.exists(file.path(lib, p))) return(lib)
  unlink(c(stamp, file.path(lib, p)), recursive = TRUE)
  src <- file.path(ctx$work, "cxx17")
  dir.create(src, showWarnings = FALSE)
  utils::untar(tarball, exdir = src)
  for (f in file.path(src, p, "src", c("Makevars", "Makevars.win"))) {
    lines <- if (file.exists(f)) readLines(f) else character()
    if (file.exists(f) || basename(f) == "Makevars") writeLines(get("ensure_cxx17", asNamespace("RcppSpool"))(lines), f)
  }
  log <- file.path(ctx$cache, paste0("install-", p, "-original-cxx17.log"))
  say("installing: ", p, " original compiled as C++17")
  status <- system2(r_exe(), c("CMD", "INSTALL", "--no-docs", "--no-multiarch", "--no-test-load", paste0("--library=", lib),
                               file.path(src, p)), env = c(paste0("R_LIBS=", lib_path(c(ctx$deps_lib, .libPaths()))),
                                                           "MAKEFLAGS=-j1"), stdout = log, stderr = log)
  if (status != 0) { say("  ", p, ": the C++17 install failed, log ", log, ":\n", tail_log(log, 8)); return(NULL) }
  writeLines(want, stamp)
  lib
}

one_process_main <- function(args = commandArgs(TRUE)) {
  who <- "real-packages-one-process"
  opts <- tryCatch(parse_args(args, extra = list(calls = "30")), error = function(e) { say(who, ": ", conditionMessage(e)); NULL })
  if (is.null(opts)) return(2L)
  calls <- suppressWarnings(as.integer(opts$calls))
  if (is.na(calls) || calls < 3) { say(who, ": --calls must be a whole number >= 3"); return(2L) }
  if (!file.exists("/proc/self/stat")) { say(who, ": needs Linux (/proc)"); return(2L) }
  spool_lib <- spool_lib_of(opts$`spool-lib`, who)
  if (is.null(spool_lib)) return(2L)
  ctx <- builds_ctx(spool_lib, "real-packages-one-")
  on.exit(unlink(ctx$work, recursive = TRUE), add = TRUE)
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
    lib17 <- install_cxx17(p, ctx)
    if (is.null(lib17)) next
    so <- paste0(p, .Platform$dynlib.ext)
    spec$copies <- file.path(ctx$work, paste0(c("cxx17_build", "migrated_build"), .Platform$dynlib.ext))
    file.copy(c(file.path(lib17, p, "libs", so), file.path(ctx$libs$migrated, p, "libs", so)), spec$copies, overwrite = TRUE)
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
  say(sprintf("\nthe builds in one R process, %d calls each, alternating; seconds: medians; ratio: median of", calls))
  say("the per-call ratios migrated/original [quartiles]; cxx17_ratio: the same for the original compiled as")
  say("C++17; faults, sys_ms: the process's page faults and system time a call (original/C++17/migrated)")
  print(tab[, setdiff(names(tab), "same")], row.names = FALSE, right = FALSE)
  if (!all(tab$same)) { say("RESULTS DIFFER between the builds: ", paste(tab$call[!tab$same], collapse = ", ")); return(1L) }
  say("results: the same in both builds")
  0L
}

if (sys.nframe() == 0L) quit(status = one_process_main(), save = "no")
