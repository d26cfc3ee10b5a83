#!/usr/bin/env Rscript
# What migrating real CRAN packages from RcppThread to RcppSpool costs at
# install time: for each source tarball, the original (against RcppThread) and
# the copy migrated by the installed RcppSpool's use_rcppspool() are installed
# with `R CMD INSTALL --no-test-load --preclean` into throwaway libraries, one
# make job (MAKEFLAGS=-j1), R's default flags (a ~/.R/Makevars applies to both).
# Measured: CPU seconds of the whole install (user+sys of R CMD INSTALL and its
# children, /usr/bin/time), wall seconds, and the size of the installed
# libs/<pkg>.so. Each round installs both copies of a package one after the
# other, the order turning each round. Printed per package: medians over the
# rounds; ratio: migrated's median over the original's; ratio_rounds: the
# median of the per-round ratios; "!" flags a ratio above 1.1.
#
#   Rscript bench/install-cost.R [TARBALLS] [ROUNDS] [LIB] [--deps=DIR] [--csv=FILE] [--keep]
#
# TARBALLS: folder of <pkg>_<version>.tar.gz (default build/compat-cache, where
#   tools/compat-packages.R caches earthtide, lacunr, lingdist, mvrsquared,
#   natcpp); the newest version of each package is used.
# ROUNDS: default 3. LIB: the library holding the RcppSpool under test (default:
#   the first of .libPaths() that has it, e.g. the checkout's .Rlib on R_LIBS).
# --deps=DIR: a library with the packages' own dependencies (RcppEigen 0.3.4
#   for earthtide, ...; default TARBALLS/deps-R<version>, where
#   tools/compat-packages.R installs them, if it exists), searched after LIB.
# --csv=FILE: every raw row (round, package, side, user_s, sys_s, cpu_s,
#   wall_s, so_bytes). --keep: keep the work folder (sources with their objects).
# Needs RcppThread, the RcppSpool under test, the packages' dependencies and
# GNU time (/usr/bin/time). 1 round of the five packages: about 5 minutes.

args <- commandArgs(TRUE)
opt <- function(name) sub(paste0("^--", name, "="), "", grep(paste0("^--", name, "="), args, value = TRUE))
pos <- grep("^--", args, value = TRUE, invert = TRUE)
die <- function(...) { cat("install-cost: ", ..., "\n", sep = "", file = stderr()); quit(status = 2, save = "no") }
here <- tryCatch(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))),
                 error = function(e) "bench")
tarballs <- if (length(pos) >= 1) pos[1] else file.path(here, "..", "build", "compat-cache")
rounds <- if (length(pos) >= 2) suppressWarnings(as.integer(pos[2])) else 3L
if (is.na(rounds) || rounds < 1) die("ROUNDS must be a positive whole number, not ", pos[2])
if (!dir.exists(tarballs)) die("no tarball folder ", tarballs, " (run tools/compat-packages.R, or name the folder)")
tarballs <- normalizePath(tarballs)
files <- list.files(tarballs, pattern = "^[A-Za-z0-9.]+_[0-9.-]+\\.tar\\.gz$", full.names = TRUE)
if (!length(files)) die("no <pkg>_<version>.tar.gz in ", tarballs)
pkg_of <- sub("_.*$", "", basename(files))
ver_of <- package_version(sub("^[^_]+_(.*)\\.tar\\.gz$", "\\1", basename(files)))
files <- files[order(pkg_of, ver_of, decreasing = TRUE)]
files <- files[!duplicated(sub("_.*$", "", basename(files)))]        # the newest of each
files <- files[order(basename(files))]

spool_lib <- if (length(pos) >= 3) pos[3] else {
  found <- find.package("RcppSpool", quiet = TRUE)
  if (length(found)) dirname(found[1]) else die("RcppSpool is not installed on .libPaths(): give its library as LIB")
}
if (!file.exists(file.path(spool_lib, "RcppSpool", "include", "RcppSpool.h")))
  die("RcppSpool is not installed in ", spool_lib)
spool_lib <- normalizePath(spool_lib)
if (!length(find.package("RcppThread", quiet = TRUE)))
  die("RcppThread is not installed: the originals cannot be built (install.packages(\"RcppThread\"))")
deps <- opt("deps")
if (!length(deps)) deps <- file.path(tarballs, paste0("deps-R", R.version$major, ".", R.version$minor))
deps <- normalizePath(deps[dir.exists(deps)])
if (!file.exists("/usr/bin/time")) die("GNU time (/usr/bin/time) is missing (apt-get install time)")
csv <- opt("csv")
version_of <- function(lib, p) read.dcf(file.path(lib, p, "DESCRIPTION"), "Version")[1, 1]

work <- tempfile("install-cost-", tmpdir = if ("--keep" %in% args) dirname(tempdir()) else tempdir())
dir.create(work)
cat(sprintf("RcppSpool %s (%s), RcppThread %s; deps: %s; %d round(s); work %s\n",
            version_of(spool_lib, "RcppSpool"), spool_lib, version_of(dirname(find.package("RcppThread")), "RcppThread"),
            if (length(deps)) paste(deps, collapse = ", ") else "(.libPaths() only)", rounds, work))

# Unpacks each tarball twice and migrates one copy (warnings about what the
# migration leaves are counted, not shown).
use_rcppspool <- getExportedValue(loadNamespace("RcppSpool", lib.loc = spool_lib), "use_rcppspool")
pkgs <- character()
for (f in files) {
  p <- sub("_.*$", "", basename(f))
  for (side in c("original", "migrated")) utils::untar(f, exdir = file.path(work, side))
  left <- 0L
  ok <- tryCatch({
    withCallingHandlers(suppressMessages(use_rcppspool(file.path(work, "migrated", p), dry_run = FALSE)),
                        RcppSpool_migration_left = function(w) { left <<- left + length(w$left); invokeRestart("muffleWarning") })
    TRUE
  }, error = function(e) { cat("  ", p, ": migration failed: ", conditionMessage(e), "\n", sep = ""); FALSE })
  if (ok) pkgs <- c(pkgs, p)
  if (left) cat("  ", p, ": the migration left ", left, " line(s) unchanged\n", sep = "")
}
if (!length(pkgs)) die("no package could be migrated")

# One install: the CPU and wall seconds and the .so's size (NA if it failed).
install <- function(p, side, r) {
  lib <- file.path(work, paste0("lib-", side, "-", p))
  unlink(lib, recursive = TRUE)
  dir.create(lib)
  libs <- c(lib, if (side == "migrated") spool_lib, deps, .libPaths())
  tf <- file.path(work, "time.txt")
  log <- file.path(work, paste0(p, "-", side, "-", r, ".log"))
  unlink(tf)
  status <- system2("/usr/bin/time", c("-f", shQuote("%U %S %e"), "-o", shQuote(tf), shQuote(file.path(R.home("bin"), "R")),
                                       "CMD", "INSTALL", "--no-test-load", "--preclean", paste0("--library=", shQuote(lib)),
                                       shQuote(file.path(work, side, p))),
                    env = c(paste0("R_LIBS=", shQuote(paste(unique(libs), collapse = .Platform$path.sep))), "MAKEFLAGS=-j1"),
                    stdout = log, stderr = log)
  so <- file.path(lib, p, "libs", paste0(p, ".so"))
  t <- if (file.exists(tf)) suppressWarnings(as.numeric(strsplit(utils::tail(readLines(tf), 1), " ")[[1]])) else rep(NA, 3)
  if (status != 0 || !file.exists(so)) {
    cat("  ", p, " ", side, ": install FAILED (status ", status, "); the log ends:\n    ",
        paste(utils::tail(readLines(log), 8), collapse = "\n    "), "\n", sep = "")
    t <- rep(NA, 3)
  }
  data.frame(round = r, package = p, side = side, user_s = t[1], sys_s = t[2], cpu_s = t[1] + t[2], wall_s = t[3],
             so_bytes = if (file.exists(so)) file.size(so) else NA_real_)
}

raw <- list()
for (r in seq_len(rounds)) for (p in pkgs) {
  sides <- if (r %% 2) c("original", "migrated") else c("migrated", "original")
  for (s in sides) {
    row <- install(p, s, r)
    cat(sprintf("  round %d %-11s %-8s cpu %6.1f s  wall %6.1f s  .so %6.2f MB\n",
                r, p, s, row$cpu_s, row$wall_s, row$so_bytes / 1e6))
    raw[[length(raw) + 1]] <- row
  }
}
raw <- do.call(rbind, raw)
if (length(csv)) utils::write.csv(raw, csv[1], row.names = FALSE)

med <- function(x) stats::median(x, na.rm = TRUE)
tab <- do.call(rbind, lapply(pkgs, function(p) {
  o <- raw[raw$package == p & raw$side == "original", ]
  m <- raw[raw$package == p & raw$side == "migrated", ]
  m <- m[match(o$round, m$round), ]
  ratio <- function(col) med(m[[col]]) / med(o[[col]])
  rounds_ratio <- function(col) med(m[[col]] / o[[col]])
  flag <- function(x) ifelse(!is.na(x) & x > 1.1, "!", "")
  data.frame(package = p, version = version_of(file.path(work, "original"), p),
             cpu_orig = med(o$cpu_s), cpu_mig = med(m$cpu_s),
             cpu_ratio = paste0(round(ratio("cpu_s"), 2), flag(ratio("cpu_s"))),
             cpu_ratio_rounds = paste0(round(rounds_ratio("cpu_s"), 2), flag(rounds_ratio("cpu_s"))),
             wall_orig = med(o$wall_s), wall_mig = med(m$wall_s),
             so_MB_orig = round(med(o$so_bytes) / 1e6, 2), so_MB_mig = round(med(m$so_bytes) / 1e6, 2),
             so_ratio = paste0(round(ratio("so_bytes"), 2), flag(ratio("so_bytes"))),
             so_ratio_rounds = paste0(round(rounds_ratio("so_bytes"), 2), flag(rounds_ratio("so_bytes"))))
}))
cat(sprintf("\n%d round(s), medians; CPU = user+sys s of R CMD INSTALL (-j1); ratio: migrated/original, ! above 1.1\n",
            rounds))
print(tab, row.names = FALSE, right = FALSE)
if (!"--keep" %in% args) unlink(work, recursive = TRUE)
