#!/usr/bin/env Rscript
# RcppParallel code on real packages: small CRAN packages written for
# RcppParallel, migrated mechanically to RcppSpool's compatibility header
# (RcppSpool/RcppParallel.h), must pass the examples and tests that the
# originals pass. A development check, not part of `make test` (it installs
# eight packages: several minutes).
#
#   Rscript tools/rcppparallel-packages.R [LIB]
#
# LIB holds the RcppSpool under test (default: where .libPaths() finds it).
# For each package below the script downloads its source with
# download.packages() (the configured repository, getOption("repos")),
# installs the original (against RcppParallel) and the migrated copy
# (migrate_rcppparallel_package(): the RcppSpool under test's
# use_rcppspool()) into separate libraries, runs the examples
# of every Rd page and the files tests/*.R of both, prints a table,
# and exits with status 0 when the migrated packages pass everything the
# originals pass, 1 otherwise, 2 when nothing could be compared.
#
# Environment: RCPPSPOOL_RCPPPARALLEL_PACKAGES (comma-separated subset),
# RCPPSPOOL_RCPPPARALLEL_WORK (work directory, default a temporary one).
#
# Sourcing the file defines the functions without running anything.

# The packages: small, no TBB-specific code, dependencies already installed.
rcppparallel_packages <- list(
  lamW = "parallelFor with a Worker over RVector<double>; tinytest tests",
  StMoSim = "parallelFor with a Worker and RMatrix rows; examples",
  NormGen = "parallelFor with RVector/RMatrix, OpenMP beside it, -DRCPP_PARALLEL_USE_TBB=1; testthat tests",
  missknn = "RcppParallel::parallelFor over RMatrix/RVector, links TBB by hand in Makevars; testthat tests"
)

# Migrates the unpacked package in `dir` in place with use_rcppspool() of the
# RcppSpool under test (in the library `lib`; NULL: .libPaths()): C++ sources,
# Makevars (C++17, RcppSpool::LdFlags(), no TBB), R/, DESCRIPTION (LinkingTo
# and Imports: RcppSpool, no Imports: RcppParallel) and NAMESPACE (no
# importFrom(RcppParallel, ...), an import of RcppSpool). Returns its lines of
# changes ("file: what"), then one "file: left: line: text" for each place it
# could not migrate.
migrate_rcppparallel_package <- function(dir, lib = NULL) {
  use_rcppspool <- getExportedValue(loadNamespace("RcppSpool", lib.loc = lib), "use_rcppspool")
  changes <- suppressWarnings(suppressMessages(use_rcppspool(dir, from = "RcppParallel", dry_run = FALSE)))
  c(changes, sub("^([^:]*): ?", "\\1: left: ", attr(changes, "left")))
}

# Installs `dir` into `lib` and runs its examples and tests; a one-row data frame.
check_rcppparallel_package <- function(dir, lib, label, libs) {
  pkg <- basename(dir)
  log <- file.path(dirname(dir), paste0(pkg, "-", label, "-install.log"))
  t0 <- Sys.time()
  status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "--no-test-load", "-l", shQuote(lib), shQuote(dir)),
                    stdout = log, stderr = log, env = paste0("R_LIBS=", paste(libs, collapse = .Platform$path.sep)))
  installed <- status == 0
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- c(paste0("R_LIBS=", paste(c(lib, libs), collapse = .Platform$path.sep)), "NOT_CRAN=true")
  # The examples of every Rd page, as R CMD check runs them (no \dontrun,
  # no \donttest), in a child R process; TRUE when none fails.
  examples <- function() {
    code <- sprintf(paste0(
      "library(%1$s); db <- tools::Rd_db('%1$s', lib.loc = '%2$s'); ",
      "for (n in names(db)) { f <- tempfile(fileext = '.R'); ",
      "tools::Rd2ex(db[[n]], f, commentDontrun = TRUE, commentDonttest = TRUE); ",
      "if (file.exists(f)) { message('example ', n); source(f, echo = FALSE) } }"), pkg, lib)
    out <- file.path(dirname(dir), paste0(pkg, "-", label, "-examples.log"))
    system2(rscript, c("-e", shQuote(code)), stdout = out, stderr = out, env = env) == 0
  }
  # The files tests/*.R of the sources, each in a child R process run from
  # tests/ (as R CMD check does); TRUE when none fails, NA without tests.
  tests <- function() {
    files <- list.files(file.path(dir, "tests"), pattern = "\\.[Rr]$", full.names = TRUE)
    if (!length(files)) return(NA)
    out <- file.path(dirname(dir), paste0(pkg, "-", label, "-tests.log"))
    ok <- vapply(files, function(f) {
      system2("sh", c("-c", shQuote(sprintf("cd %s && %s %s", shQuote(dirname(f)), shQuote(rscript),
                                            shQuote(basename(f))))),
              stdout = out, stderr = out, env = env) == 0
    }, TRUE)
    all(ok)
  }
  ex <- if (installed) examples() else NA
  tests <- if (installed) tests() else NA
  data.frame(package = pkg, build = label, installed = installed, examples = ex, tests = tests,
             seconds = round(as.numeric(difftime(Sys.time(), t0, units = "secs"))))
}

rcppparallel_main <- function(args = commandArgs(TRUE)) {
  spool_lib <- if (length(args)) normalizePath(args[1]) else dirname(find.package("RcppSpool"))
  libs <- unique(c(spool_lib, .libPaths()))
  which <- Sys.getenv("RCPPSPOOL_RCPPPARALLEL_PACKAGES")
  pkgs <- if (nzchar(which)) strsplit(which, ",")[[1]] else names(rcppparallel_packages)
  work <- Sys.getenv("RCPPSPOOL_RCPPPARALLEL_WORK", tempfile("rcppparallel-packages"))
  dir.create(work, showWarnings = FALSE, recursive = TRUE)
  lib_orig <- file.path(work, "lib-original")
  lib_mig <- file.path(work, "lib-migrated")
  dir.create(lib_orig, showWarnings = FALSE)
  dir.create(lib_mig, showWarnings = FALSE)
  tarballs <- utils::download.packages(pkgs, destdir = work, quiet = TRUE)
  rows <- list()
  for (i in seq_len(nrow(tarballs))) {
    pkg <- tarballs[i, 1]
    for (label in c("original", "migrated")) {
      d <- file.path(work, label)
      dir.create(d, showWarnings = FALSE)
      utils::untar(tarballs[i, 2], exdir = d)
      src <- file.path(d, pkg)
      changed <- if (label == "migrated") migrate_rcppparallel_package(src, spool_lib) else character()
      left <- grep(": left:", changed, value = TRUE)
      done <- setdiff(changed, left)
      if (length(done)) message(pkg, ": changed ", paste(unique(sub(":.*", "", done)), collapse = ", "))
      if (length(left)) message(pkg, ": not migrated:\n  ", paste(left, collapse = "\n  "))
      lib <- if (label == "original") lib_orig else lib_mig
      rows[[length(rows) + 1]] <- check_rcppparallel_package(src, lib, label, libs)
    }
  }
  res <- do.call(rbind, rows)
  print(res, row.names = FALSE)
  if (!length(rows)) return(invisible(2L))
  o <- res[res$build == "original", ]
  m <- res[res$build == "migrated", ]
  worse <- function(a, b) !is.na(a) & a & (is.na(b) | !b)
  regress <- worse(o$installed, m$installed) | worse(o$examples, m$examples) | worse(o$tests, m$tests)
  message(if (any(regress)) paste("regressions:", paste(o$package[regress], collapse = ", ")) else
    "no regression: the migrated packages pass everything the originals pass")
  invisible(if (any(regress)) 1L else 0L)
}

if (sys.nframe() == 0L) quit(status = rcppparallel_main())
