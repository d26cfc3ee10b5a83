#!/usr/bin/env Rscript
# Drop-in check on real code: CRAN packages written for RcppThread, migrated
# mechanically to RcppSpool, must pass the examples and tests that the
# originals pass.
#
#   Rscript tools/compat-packages.R [LIB]
#
# LIB is the library that holds the RcppSpool under test (default: where
# RcppSpool is found on R_LIBS / .libPaths()). For each package below the
# script downloads its source with download.packages() (from the configured
# repository, getOption("repos")), installs dependencies it lacks, installs the
# original (against RcppThread) and the migrated copy (migrate_package(): the
# RcppSpool under test's use_rcppspool(), against RcppSpool) into separate
# libraries, runs the examples of every Rd
# page (as R CMD check: \dontrun and \donttest left out) and the testthat
# tests (NOT_CRAN=true) under both, prints a table, and exits with status
#   0  no regression: the migrated packages pass everything the originals pass
#   1  a regression: some install, example or test passes with the original
#      and fails with the migrated package
#   2  nothing could be compared (RcppSpool or RcppThread missing, every
#      download failed, ...)
#
# Environment:
#   RCPPSPOOL_COMPAT_CACHE     downloaded tarballs, installed dependencies and
#                              the original packages (they do not depend on
#                              RcppSpool) are kept here; default build/compat-cache
#                              of this source tree
#   RCPPSPOOL_COMPAT_PACKAGES  comma-separated subset of the packages below
#   RCPPSPOOL_COMPAT_REFRESH   true: download the current versions again
#   RCPPSPOOL_COMPAT_FRESH     true: reinstall the originals too
#   RCPPSPOOL_COMPAT_RESULTS   also write the table to this CSV file
#   RCPPSPOOL_COMPAT_KEEP      true: keep the work directory (sources, logs)
#
# Sourcing the file defines the functions (migrate_package(), compat_main(),
# ...) without running anything.

# The packages: small, quick to build here, and between them they use most of
# what RcppThread code uses. The slowest come first (they are scheduled in
# this order). `deps` are requirements their DESCRIPTION does
# not state; `drop_tests` are test files that need the internet.
compat_packages <- list(
  earthtide = list(
    uses = "ThreadPool(n) + pool.parallelFor() + join(), importFrom(RcppThread, detectCores); tests",
    deps = c(RcppEigen = "0.3.4"),  # its code needs Eigen 3.4 (RcppEigen 0.3.4)
    drop_tests = "test-get_iers.R"  # downloads IERS data
  ),
  natcpp = list(
    uses = "parallelFor with [&] and [=] bodies, subclass of ProgressPrinter, configure + Makevars.in; tests"
  ),
  lacunr = list(
    uses = "parallelFor (unsigned long index) with RcppArmadillo; tests"
  ),
  mvrsquared = list(
    uses = "parallelFor + checkUserInterrupt in the body; RCPPTHREAD_FLAGS and a version requirement; tests"
  ),
  lingdist = list(
    uses = "parallelFor (int32_t index, n_threads) + ProgressBar from workers; examples"
  )
)

# ---------------------------------------------------------------------------
# The mechanical migration: use_rcppspool() of the RcppSpool under test (in
# the library `lib`; NULL: .libPaths()), in place. It rewrites the sources and
# headers, Makevars*, configure/cleanup, R/, NAMESPACE and DESCRIPTION
# (LinkingTo and Imports: RcppSpool, importFrom(RcppSpool, ...), C++17) and
# removes MD5: see ?RcppSpool::use_rcppspool. Returns (invisibly) its lines of
# changes ("file: what"), then one "file: left: line: text" for each place
# it could not migrate (it warns about them: here they are kept instead).

migrate_package <- function(dir, lib = NULL) {
  use_rcppspool <- getExportedValue(loadNamespace("RcppSpool", lib.loc = lib), "use_rcppspool")
  changes <- suppressWarnings(suppressMessages(use_rcppspool(dir, from = "RcppThread", dry_run = FALSE)))
  invisible(c(changes, sub("^([^:]*): ?", "\\1: left: ", attr(changes, "left"))))
}

# ---------------------------------------------------------------------------
# Helpers

read_text <- function(f) readLines(f, warn = FALSE, encoding = "UTF-8")
is_true <- function(x) tolower(Sys.getenv(x)) %in% c("true", "1", "yes")
say <- function(...) { cat(..., "\n", sep = ""); utils::flush.console() }
secs <- function(t0) as.numeric(difftime(Sys.time(), t0, units = "secs"))
r_exe <- function(what = "R") file.path(R.home("bin"), what)
lib_path <- function(libs) paste(unique(libs), collapse = .Platform$path.sep)

# This file's directory, when run with Rscript or sourced.
script_dir <- function() {
  arg <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  if (length(arg)) return(dirname(normalizePath(sub("^--file=", "", arg[1]))))
  for (i in rev(seq_len(sys.nframe()))) {
    f <- sys.frame(i)$ofile
    if (!is.null(f)) return(dirname(normalizePath(f)))
  }
  getwd()
}

# Parses a dependency field into a named vector of minimum versions ("" if none).
parse_deps <- function(field) {
  if (is.null(field) || is.na(field)) return(character())
  parts <- trimws(strsplit(gsub("\n", " ", field), ",")[[1]])
  parts <- parts[nzchar(parts)]
  name <- sub("^([A-Za-z0-9.]+).*$", "\\1", parts)
  ver <- ifelse(grepl(">=", parts), trimws(sub("^.*>=[[:space:]]*([^)]*)\\).*$", "\\1", parts)), "")
  stats::setNames(ver, name)
}

base_pkgs <- c("R", rownames(utils::installed.packages(priority = "base")))

# The first errors and the last lines of a log.
tail_log <- function(log, n = 12) {
  if (!file.exists(log)) return("(no log)")
  lines <- read_text(log)
  err <- utils::head(grep("error:|Error:|ERROR:|Error in", lines, value = TRUE), 5)
  paste(c(err, if (length(err)) "...", utils::tail(lines, n)), collapse = "\n")
}

# ---------------------------------------------------------------------------
# Running commands: up to `slots` at a time (processx), in list order as far
# as their prerequisites allow; sequentially without processx.
#
# A task: list(id, cmd, args, env (named character), log, wd, timeout, needs
# (ids of tasks that must have succeeded first)). `on_done(task)` is called
# with task$status (exit status; 124 timeout; NA never started, because a
# prerequisite failed) and task$seconds when it ends.
run_tasks <- function(tasks, slots = 2L, on_done = function(task) NULL) {
  if (!length(tasks)) return(list())
  names(tasks) <- vapply(tasks, function(t) t$id, "")
  state <- stats::setNames(rep("waiting", length(tasks)), names(tasks))
  procs <- list()
  use_px <- requireNamespace("processx", quietly = TRUE)
  if (!use_px) slots <- 1L
  done <- function(id, status, seconds) {
    tasks[[id]]$status <<- status
    tasks[[id]]$seconds <<- seconds
    state[[id]] <<- if (is.na(status)) "skipped" else if (status == 0) "ok" else "failed"
    on_done(tasks[[id]])
  }
  repeat {
    for (id in names(procs)) {
      p <- procs[[id]]
      took <- secs(tasks[[id]]$t0)
      if (p$is_alive() && took <= tasks[[id]]$timeout) next
      status <- if (p$is_alive()) { p$kill_tree(); 124L } else p$get_exit_status()
      procs[[id]] <- NULL
      done(id, status, took)
    }
    for (id in names(tasks)[state == "waiting"])        # a prerequisite failed
      if (any(state[tasks[[id]]$needs] %in% c("failed", "skipped"))) done(id, NA_integer_, 0)
    while (length(procs) < slots) {
      ready <- Filter(function(id) all(state[tasks[[id]]$needs] == "ok"), names(tasks)[state == "waiting"])
      if (!length(ready)) break
      id <- ready[[1]]
      t <- tasks[[id]]
      state[[id]] <- "running"
      tasks[[id]]$t0 <- Sys.time()
      if (use_px) {
        procs[[id]] <- processx::process$new(t$cmd, t$args, env = c("current", t$env), wd = t$wd,
                                             stdout = t$log, stderr = "2>&1", cleanup_tree = TRUE)
      } else {
        old <- setwd(t$wd)
        status <- system2(t$cmd, t$args, env = paste0(names(t$env), "=", t$env),
                          stdout = t$log, stderr = t$log, timeout = t$timeout)
        setwd(old)
        done(id, status, secs(tasks[[id]]$t0))
      }
    }
    if (!length(procs) && !any(state == "waiting")) break
    Sys.sleep(0.2)
  }
  tasks
}

# ---------------------------------------------------------------------------
# Downloads and dependencies

# The newest cached tarball of `pkg`, or a fresh download (NULL, with a
# message, if that fails).
get_tarball <- function(pkg, cache, refresh) {
  have <- list.files(cache, pattern = paste0("^", pkg, "_.*\\.tar\\.gz$"), full.names = TRUE)
  if (length(have)) {
    ver <- package_version(sub(paste0("^", pkg, "_(.*)\\.tar\\.gz$"), "\\1", basename(have)))
    have <- have[order(ver, decreasing = TRUE)]
    if (!refresh) return(have[1])
  }
  got <- tryCatch(
    suppressWarnings(utils::download.packages(pkg, destdir = cache, repos = getOption("repos"),
                                              type = "source", quiet = TRUE)),
    error = function(e) { say("  download of ", pkg, " failed: ", conditionMessage(e)); NULL })
  if (is.null(got) || !nrow(got) || !file.exists(got[1, 2])) {
    say("  could not download ", pkg, " from ", paste(getOption("repos"), collapse = ", "),
        " (no network, or no longer in the repository)",
        if (length(have)) paste0(": using the cached ", basename(have[1])) else ": not compared")
    return(if (length(have)) have[1] else NULL)
  }
  got[1, 2]
}

# Installs into `deps_lib` what `desc` needs (Depends, Imports, LinkingTo,
# testthat if it has tests, and `extra`) and `libs` lack or have too old.
ensure_deps <- function(desc, extra, has_tests, libs, deps_lib) {
  need <- c(parse_deps(desc[["Depends"]]), parse_deps(desc[["Imports"]]),
            parse_deps(desc[["LinkingTo"]]), if (has_tests) c(testthat = ""), extra)
  need <- need[!names(need) %in% c(base_pkgs, "RcppThread", "RcppSpool")]
  missing <- character()
  for (p in unique(names(need))) {
    vmin <- need[names(need) == p]
    vmin <- vmin[nzchar(vmin)]
    path <- find.package(p, lib.loc = libs, quiet = TRUE)
    ok <- length(path) > 0
    if (ok && length(vmin)) {
      have <- package_version(read.dcf(file.path(path[1], "DESCRIPTION"), "Version")[1, 1])
      ok <- all(have >= package_version(vmin))
    }
    if (!ok) missing <- c(missing, p)
  }
  if (!length(missing)) return(TRUE)
  t0 <- Sys.time()
  say("  installing dependencies into ", deps_lib, ": ", paste(missing, collapse = ", "))
  old <- .libPaths()
  on.exit(.libPaths(old))
  .libPaths(unique(c(deps_lib, libs)))
  if (!nzchar(Sys.getenv("MAKEFLAGS"))) {  # nothing else runs meanwhile: use the cores
    Sys.setenv(MAKEFLAGS = paste0("-j", Sys.getenv("RCPPSPOOL_COMPAT_JOBS", "2")))
    on.exit(Sys.unsetenv("MAKEFLAGS"), add = TRUE)
  }
  tryCatch(utils::install.packages(missing, lib = deps_lib, repos = getOption("repos"), quiet = TRUE,
                                   dependencies = c("Depends", "Imports", "LinkingTo")),
           warning = function(w) say("  ", conditionMessage(w)),
           error = function(e) say("  ", conditionMessage(e)))
  ok <- all(vapply(missing, function(p) length(find.package(p, lib.loc = deps_lib, quiet = TRUE)) > 0, TRUE))
  say(sprintf("  dependencies %s (%.0f s)", if (ok) "installed" else "NOT installed", secs(t0)))
  ok
}

# ---------------------------------------------------------------------------
# Examples and tests of one installed package, in a child R process

# The child's program: runs the example files in `exdir` (one per Rd page),
# then the testthat tests in `testdir`; saves list(examples, tests).
child_code <- r"--(
args <- commandArgs(trailingOnly = TRUE)
pkg <- args[1]; exdir <- args[2]; testdir <- args[3]; out <- args[4]
options(warn = 1, device = function(...) grDevices::pdf(file = NULL, ...))
ex <- data.frame(name = character(), ok = logical(), message = character(), output = character())
suppressPackageStartupMessages(library(pkg, character.only = TRUE))
for (f in sort(list.files(exdir, full.names = TRUE))) {
  cat("## example", basename(f), "\n")
  set.seed(1)
  msg <- ""
  output <- utils::capture.output(ok <- tryCatch({
    source(f, local = new.env(parent = globalenv()), echo = TRUE, max.deparse.length = Inf)
    TRUE
  }, error = function(e) { msg <<- conditionMessage(e); FALSE }))
  cat(output, sep = "\n")
  if (!ok) cat("## example", basename(f), "FAILED:", msg, "\n")
  grDevices::graphics.off()
  ex[nrow(ex) + 1, ] <- list(sub("\\.R$", "", basename(f)), ok, msg, paste(output, collapse = "\n"))
}
tests <- data.frame(file = character(), test = character(), passed = integer(), failed = integer(),
                    skipped = logical(), message = character())
if (nzchar(testdir) && dir.exists(testdir)) {
  Sys.setenv(NOT_CRAN = "true")
  res <- tryCatch(testthat::test_dir(testdir, package = pkg, load_package = "installed",
                                     reporter = "summary", stop_on_failure = FALSE,
                                     stop_on_warning = FALSE),
                  error = function(e) e)
  if (inherits(res, "error")) {
    tests[1, ] <- list("(all)", "(the test run)", 0L, 1L, FALSE, conditionMessage(res))
  } else {
    df <- as.data.frame(res)
    why <- vapply(res, function(t) {
      bad <- Filter(function(r) inherits(r, c("expectation_failure", "expectation_error")), t$results)
      if (length(bad)) conditionMessage(bad[[1]]) else ""
    }, "")
    tests <- data.frame(file = df$file, test = df$test, passed = as.integer(df$passed),
                        failed = as.integer(df$failed + df$error), skipped = df$skipped,
                        message = why)
  }
}
saveRDS(list(examples = ex, tests = tests), out)
)--"

# The same examples, of all packages at once: every package is loaded first,
# then the examples of each run in turn, in one session (packages built from
# the same headers must not disturb each other). The migrated packages all
# import RcppSpool (use_rcppspool() adds Imports), so they share the runtime
# that RcppSpool's shared library serves.
# Arguments: out, then pairs of package and example directory.
together_code <- r"--(
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
pkgs <- args[seq(2, length(args), by = 2)]; exdirs <- args[seq(3, length(args), by = 2)]
options(warn = 1, device = function(...) grDevices::pdf(file = NULL, ...))
for (p in pkgs) suppressPackageStartupMessages(library(p, character.only = TRUE))
ex <- data.frame(package = character(), name = character(), ok = logical(), message = character())
for (k in seq_along(pkgs)) for (f in sort(list.files(exdirs[k], full.names = TRUE))) {
  cat("## example", pkgs[k], basename(f), "\n")
  set.seed(1)
  msg <- ""
  ok <- tryCatch({
    source(f, local = new.env(parent = globalenv()), echo = TRUE, max.deparse.length = Inf)
    TRUE
  }, error = function(e) { msg <<- conditionMessage(e); FALSE })
  if (!ok) cat("## example", pkgs[k], basename(f), "FAILED:", msg, "\n")
  grDevices::graphics.off()
  ex[nrow(ex) + 1, ] <- list(pkgs[k], sub("\\.R$", "", basename(f)), ok, msg)
}
saveRDS(ex, out)
)--"

# Writes the example files of the Rd pages of `srcdir` into `exdir` (as R CMD
# check: \dontrun and \donttest commented out).
write_examples <- function(srcdir, exdir) {
  dir.create(exdir, showWarnings = FALSE)
  db <- tools::Rd_db(dir = srcdir)
  for (n in names(db))
    tools::Rd2ex(db[[n]], file.path(exdir, sub("\\.[Rr]d$", ".R", n)),
                 commentDontrun = TRUE, commentDonttest = TRUE)
}

# Progress lines vary from run to run; the rest of an example's output should
# be the same with the original and the migrated package.
normalize_output <- function(x) {
  vapply(strsplit(x, "\n", fixed = TRUE), function(l) {
    l <- unlist(strsplit(l, "\r", fixed = TRUE))
    paste(l[!grepl("Computing|remaining|elapsed|%", l)], collapse = "\n")
  }, "")
}

test_keys <- function(t) {
  key <- paste(t$file, t$test, sep = " :: ")
  paste(key, stats::ave(seq_along(key), key, FUN = seq_along), sep = " #")
}

summarize <- function(res) {
  if (is.null(res)) return(c(ex_pass = NA, ex_fail = NA, t_pass = NA, t_fail = NA, t_skip = NA))
  c(ex_pass = sum(res$examples$ok), ex_fail = sum(!res$examples$ok),
    t_pass = sum(res$tests$passed), t_fail = sum(res$tests$failed), t_skip = sum(res$tests$skipped))
}

# What passes with the original and not with the migrated package (each
# reason in at most 8 lines).
regressions <- function(orig, mig) {
  out <- character()
  e0 <- orig$examples; e1 <- mig$examples
  for (n in e0$name[e0$ok]) {
    i <- match(n, e1$name)
    if (is.na(i) || !e1$ok[i])
      out <- c(out, paste0("example ", n, ": ", if (is.na(i)) "not run" else e1$message[i]))
  }
  t0 <- orig$tests; t1 <- mig$tests
  k0 <- test_keys(t0); k1 <- test_keys(t1)
  for (j in which(t0$failed == 0 & !t0$skipped)) {
    i <- match(k0[j], k1)
    if (is.na(i)) out <- c(out, paste0("test ", k0[j], ": not run"))
    else if (t1$failed[i] > 0 || t1$skipped[i])
      out <- c(out, paste0("test ", k0[j], ": ", if (t1$skipped[i]) "skipped" else t1$message[i]))
  }
  vapply(strsplit(out, "\n"), function(l) paste(utils::head(l, 8), collapse = "\n"), "")
}

# ---------------------------------------------------------------------------
# One package: prepare (download, unpack twice, migrate, dependencies,
# example files), then four tasks, then the verdict

prepare_package <- function(pkg, spec, ctx) {
  t0 <- Sys.time()
  row <- list(package = pkg, version = NA_character_, verdict = "not compared", details = "",
              same_output = "-", times = c(), orig = NULL, mig = NULL)
  tarball <- get_tarball(pkg, ctx$cache, is_true("RCPPSPOOL_COMPAT_REFRESH"))
  if (is.null(tarball)) { row$details <- "download failed"; return(row) }
  row$version <- sub(paste0("^", pkg, "_(.*)\\.tar\\.gz$"), "\\1", basename(tarball))
  row$tarball <- tarball
  work <- row$work <- file.path(ctx$work, pkg)
  dir.create(work, recursive = TRUE, showWarnings = FALSE)
  for (side in c("original", "migrated")) {
    dir.create(file.path(work, side), showWarnings = FALSE)
    utils::untar(tarball, exdir = file.path(work, side))
  }
  row$odir <- file.path(work, "original", pkg)
  row$mdir <- file.path(work, "migrated", pkg)
  for (d in c(row$odir, row$mdir)) for (f in spec$drop_tests) unlink(file.path(d, "tests", "testthat", f))
  changes <- migrate_package(row$mdir, ctx$spool_lib)
  writeLines(changes, file.path(work, "migration.txt"))
  left <- grep(": left:", changes, value = TRUE)
  if (length(left)) say("  ", pkg, ": the migration left code it could not migrate in ",
                        paste(unique(sub(":.*", "", left)), collapse = ", "))
  write_examples(row$odir, file.path(work, "ex-original"))
  write_examples(row$mdir, file.path(work, "ex-migrated"))

  desc <- as.list(read.dcf(file.path(row$odir, "DESCRIPTION"))[1, ])
  row$has_tests <- dir.exists(file.path(row$odir, "tests", "testthat"))
  if (!ensure_deps(desc, spec$deps, row$has_tests, .libPaths(), ctx$deps_lib)) {
    row$details <- "its dependencies could not be installed"
    return(row)
  }
  stamp_text <- paste(basename(tarball), "RcppThread", ctx$rcppthread, R.version.string)
  row$stamp <- file.path(ctx$orig_lib, paste0(pkg, ".compat-stamp"))
  row$stamp_text <- stamp_text
  row$cached <- !ctx$fresh && file.exists(row$stamp) && identical(read_text(row$stamp), stamp_text) &&
    dir.exists(file.path(ctx$orig_lib, pkg))
  if (!row$cached) unlink(c(row$stamp, file.path(ctx$orig_lib, pkg)), recursive = TRUE)
  row$mig_lib <- file.path(work, "lib-migrated")
  dir.create(row$mig_lib, showWarnings = FALSE)
  row$times["prepare"] <- secs(t0)
  row$ready <- TRUE
  row
}

package_tasks <- function(row, ctx) {
  install <- function(lib, what) c("CMD", "INSTALL", "--no-docs", "--no-multiarch", "--no-test-load",
                                   paste0("--library=", lib), what)
  libs_orig <- c(ctx$orig_lib, ctx$deps_lib, .libPaths())
  libs_mig <- c(row$mig_lib, ctx$spool_lib, ctx$deps_lib, .libPaths())
  check <- function(side, srcdir, libs) {
    dir.create(file.path(row$work, paste0("run-", side)), showWarnings = FALSE)
    testdir <- file.path(srcdir, "tests", "testthat")
    list(cmd = r_exe("Rscript"),
         args = c(ctx$child, row$package, file.path(row$work, paste0("ex-", side)),
                  if (dir.exists(testdir)) testdir else "", file.path(row$work, paste0("results-", side, ".rds"))),
         env = c(R_LIBS = lib_path(libs)), wd = file.path(row$work, paste0("run-", side)),
         log = file.path(row$work, paste0("checks-", side, ".log")), timeout = 600)
  }
  id <- function(what) paste(row$package, what)
  tasks <- list(
    c(list(id = id("install original"), needs = character(), cmd = r_exe(),
           args = install(ctx$orig_lib, row$tarball), env = c(R_LIBS = lib_path(c(ctx$deps_lib, .libPaths()))),
           wd = row$work, log = file.path(row$work, "install-original.log"), timeout = 900)),
    c(list(id = id("install migrated"), needs = character(), cmd = r_exe(),
           args = install(row$mig_lib, row$mdir), env = c(R_LIBS = lib_path(c(ctx$spool_lib, ctx$deps_lib, .libPaths()))),
           wd = row$work, log = file.path(row$work, "install-migrated.log"), timeout = 900)),
    c(list(id = id("checks original"), needs = if (!row$cached) id("install original") else character()),
      check("original", row$odir, libs_orig)),
    c(list(id = id("checks migrated"), needs = id("install migrated")),
      check("migrated", row$mdir, libs_mig))
  )
  if (row$cached) tasks[[1]] <- NULL
  tasks
}

# The examples of all packages in one session, for the originals and for the
# migrated packages; each needs every install of its side.
together_tasks <- function(rows, ctx) {
  prog <- file.path(ctx$work, "together.R")
  writeLines(together_code, prog)
  one <- function(side, libs) {
    dir <- file.path(ctx$work, paste0("together-", side))
    dir.create(dir, showWarnings = FALSE)
    pairs <- unlist(lapply(rows, function(r) c(r$package, file.path(r$work, paste0("ex-", side)))))
    needs <- if (side == "original") {
      unlist(lapply(rows, function(r) if (!r$cached) paste(r$package, "install original")))
    } else paste(names(rows), "install migrated")
    list(id = paste("together", side), needs = as.character(needs), cmd = r_exe("Rscript"),
         args = c(prog, file.path(ctx$work, paste0("together-", side, ".rds")), pairs),
         env = c(R_LIBS = lib_path(libs)), wd = dir, log = file.path(ctx$work, paste0("together-", side, ".log")),
         timeout = 600)
  }
  list(one("original", c(ctx$orig_lib, ctx$deps_lib, .libPaths())),
       one("migrated", c(vapply(rows, function(r) r$mig_lib, ""), ctx$spool_lib, ctx$deps_lib, .libPaths())))
}

# The verdict of the run with all packages in one session, as a row of the
# table (NULL if it did not run).
finish_together <- function(tasks, ctx) {
  t <- tasks[c("together original", "together migrated")]
  if (any(vapply(t, is.null, TRUE))) return(NULL)
  no_tests <- data.frame(passed = integer(), failed = integer(), skipped = logical())
  load <- function(side) {
    f <- file.path(ctx$work, paste0("together-", side, ".rds"))
    if (identical(tasks[[paste("together", side)]]$status, 0L) && file.exists(f))
      list(examples = readRDS(f), tests = no_tests)
  }
  row <- list(package = "(together)", version = "", verdict = "not compared", details = "", same_output = "-",
              orig = load("original"), mig = load("migrated"), orig_install = NA, mig_install = NA)
  if (anyNA(c(t[[1]]$status, t[[2]]$status))) {
    row$details <- "not run: an install failed"
  } else if (is.null(row$orig)) {
    row$details <- paste0("the originals' run did not complete:\n",
                          tail_log(file.path(ctx$work, "together-original.log")))
  } else if (is.null(row$mig)) {
    row$verdict <- "REGRESSION"
    row$details <- paste0("the migrated packages' run did not complete:\n",
                          tail_log(file.path(ctx$work, "together-migrated.log")))
  } else {
    o <- row$orig$examples; m <- row$mig$examples
    ko <- paste(o$package, o$name); km <- paste(m$package, m$name)
    bad <- ko[o$ok & !(ko %in% km[m$ok])]
    row$verdict <- if (length(bad)) "REGRESSION" else "ok"
    if (length(bad)) row$details <- paste(paste0("example ", bad, ": ", m$message[match(bad, km)]), collapse = "\n")
  }
  say(sprintf("  all packages in one session: %s  [examples original %.0f s, migrated %.0f s]",
              row$verdict, t[[1]]$seconds, t[[2]]$seconds))
  if (nzchar(row$details)) say(gsub("(^|\n)", "\\1    ", row$details))
  row
}

finish_package <- function(row, tasks) {
  st <- function(what) { t <- tasks[[paste(row$package, what)]]; if (is.null(t)) 0L else t$status }
  tm <- function(what) { t <- tasks[[paste(row$package, what)]]; if (is.null(t)) NA else t$seconds }
  row$times <- c(row$times, install_original = tm("install original"), install_migrated = tm("install migrated"),
                 checks_original = tm("checks original"), checks_migrated = tm("checks migrated"))
  row$orig_install <- identical(st("install original"), 0L)
  row$mig_install <- identical(st("install migrated"), 0L)
  if (!row$cached && row$orig_install) writeLines(row$stamp_text, row$stamp)
  load <- function(side) {
    f <- file.path(row$work, paste0("results-", side, ".rds"))
    if (identical(st(paste("checks", side)), 0L) && file.exists(f)) readRDS(f)
  }
  row$orig <- load("original")
  row$mig <- load("migrated")
  log <- function(what) file.path(row$work, paste0(what, ".log"))
  if (!row$orig_install) {
    row$details <- paste0("the original does not install here:\n", tail_log(log("install-original")))
  } else if (is.null(row$orig)) {
    row$details <- paste0("the original's examples/tests did not complete:\n", tail_log(log("checks-original")))
  } else if (!row$mig_install) {
    row$verdict <- "REGRESSION"
    row$details <- paste0("the migrated package does not install:\n", tail_log(log("install-migrated"), 3))
  } else if (is.null(row$mig)) {
    row$verdict <- "REGRESSION"
    row$details <- paste0("the migrated package's examples/tests did not complete:\n", tail_log(log("checks-migrated")))
  } else {
    reg <- regressions(row$orig, row$mig)
    row$verdict <- if (length(reg)) "REGRESSION" else "ok"
    row$details <- paste(reg, collapse = "\n")
    e0 <- row$orig$examples; e1 <- row$mig$examples
    both <- intersect(e0$name[e0$ok], e1$name[e1$ok])
    same <- normalize_output(e0$output[match(both, e0$name)]) == normalize_output(e1$output[match(both, e1$name)])
    row$same_output <- sprintf("%d/%d", sum(same), length(both))
    if (any(!same)) row$details <- paste(c(row$details[nzchar(row$details)], paste0(
      "(informational) examples printing differently: ", paste(both[!same], collapse = ", "))), collapse = "\n")
  }
  f <- function(x) if (is.na(x)) "-" else sprintf("%.0f s", x)
  say(sprintf("  %s %s: %s  [install original %s, migrated %s; examples+tests original %s, migrated %s]",
              row$package, row$version, row$verdict,
              if (row$cached) "cached" else f(row$times[["install_original"]]), f(row$times[["install_migrated"]]),
              f(row$times[["checks_original"]]), f(row$times[["checks_migrated"]])))
  if (nzchar(row$details)) say(gsub("(^|\n)", "\\1    ", row$details))
  row
}

# ---------------------------------------------------------------------------
# Main

format_counts <- function(s, installed) {
  if (isFALSE(installed)) return("no install")
  if (anyNA(s)) return("-")
  sprintf("%d/%d  %d/%d/%d", s[["ex_pass"]], s[["ex_fail"]], s[["t_pass"]], s[["t_fail"]], s[["t_skip"]])
}

compat_main <- function(lib = NULL, packages = NULL) {
  t_all <- Sys.time()
  repos <- getOption("repos")
  if (!length(repos) || any(repos == "@CRAN@")) {
    say("no repository configured: getOption(\"repos\") is ", paste(repos, collapse = ", "))
    return(2L)
  }
  if (is.null(lib) || !nzchar(lib)) {
    found <- find.package("RcppSpool", quiet = TRUE)
    lib <- if (length(found)) dirname(found[1]) else ""
  }
  if (!nzchar(lib) || !file.exists(file.path(lib, "RcppSpool", "include", "RcppSpool.h"))) {
    say("RcppSpool is not installed in ", if (nzchar(lib)) lib else "the library paths",
        ": give its library as the argument or on R_LIBS")
    return(2L)
  }
  lib <- normalizePath(lib)
  rt <- find.package("RcppThread", quiet = TRUE)
  if (!length(rt)) {
    say("RcppThread is not installed: the originals cannot be built (install.packages(\"RcppThread\"))")
    return(2L)
  }
  cache <- Sys.getenv("RCPPSPOOL_COMPAT_CACHE", file.path(dirname(script_dir()), "build", "compat-cache"))
  dir.create(cache, recursive = TRUE, showWarnings = FALSE)
  cache <- normalizePath(cache)
  rver <- paste(R.version$major, R.version$minor, sep = ".")
  ctx <- list(
    spool_lib = lib, cache = cache,
    rcppthread = read.dcf(file.path(rt[1], "DESCRIPTION"), "Version")[1, 1],
    deps_lib = file.path(cache, paste0("deps-R", rver)),
    fresh = is_true("RCPPSPOOL_COMPAT_FRESH"),
    # kept: outside R's session directory, which R removes at exit
    work = tempfile("compat-", tmpdir = if (is_true("RCPPSPOOL_COMPAT_KEEP")) dirname(tempdir()) else tempdir())
  )
  ctx$orig_lib <- file.path(cache, paste0("originals-R", rver, "-RcppThread", ctx$rcppthread))
  for (d in c(ctx$deps_lib, ctx$orig_lib, ctx$work)) dir.create(d, showWarnings = FALSE)
  ctx$child <- file.path(ctx$work, "child.R")
  writeLines(child_code, ctx$child)
  .libPaths(unique(c(ctx$deps_lib, .libPaths())))

  if (is.null(packages)) {
    sel <- trimws(strsplit(Sys.getenv("RCPPSPOOL_COMPAT_PACKAGES"), ",")[[1]])
    packages <- if (any(nzchar(sel))) sel[nzchar(sel)] else names(compat_packages)
  }
  unknown <- setdiff(packages, names(compat_packages))
  if (length(unknown)) { say("unknown packages: ", paste(unknown, collapse = ", ")); return(2L) }
  slots <- max(1L, as.integer(Sys.getenv("RCPPSPOOL_COMPAT_JOBS", "2")), na.rm = TRUE)

  say(sprintf("RcppSpool %s from %s; originals against RcppThread %s\ncache %s; work %s%s",
              read.dcf(file.path(lib, "RcppSpool", "DESCRIPTION"), "Version")[1, 1], lib,
              ctx$rcppthread, cache, ctx$work, if (is_true("RCPPSPOOL_COMPAT_KEEP")) " (kept)" else ""))
  if (!is_true("RCPPSPOOL_COMPAT_KEEP")) on.exit(unlink(ctx$work, recursive = TRUE), add = TRUE)

  say("== preparing: download, unpack, migrate, dependencies")
  rows <- list()
  for (pkg in packages) {
    rows[[pkg]] <- tryCatch(prepare_package(pkg, compat_packages[[pkg]], ctx), error = function(e) {
      list(package = pkg, version = NA_character_, verdict = "not compared", same_output = "-",
           details = paste("internal error while preparing:", conditionMessage(e)), times = c())
    })
  }
  say(sprintf("== installing and running, %d at a time", slots))
  ready <- Filter(function(r) isTRUE(r$ready), rows)
  tasks <- unlist(lapply(ready, package_tasks, ctx = ctx), recursive = FALSE)
  if (length(ready) > 1) tasks <- c(tasks, together_tasks(ready, ctx))
  tasks <- run_tasks(tasks, slots, on_done = function(task) {
    if (!is.na(task$status) && task$status != 0)
      say(sprintf("  %s: exit status %d after %.0f s (log %s)", task$id, task$status, task$seconds, task$log))
  })
  names(tasks) <- vapply(tasks, function(t) t$id, character(1))
  for (pkg in names(ready)) rows[[pkg]] <- finish_package(rows[[pkg]], tasks)
  together <- finish_together(tasks, ctx)
  if (!is.null(together)) rows[["(together)"]] <- together

  tab <- data.frame(
    package = names(rows),
    version = vapply(rows, function(r) as.character(r$version), ""),
    original = vapply(rows, function(r) format_counts(summarize(r$orig), r$orig_install), ""),
    migrated = vapply(rows, function(r) format_counts(summarize(r$mig), r$mig_install), ""),
    same_output = vapply(rows, function(r) r$same_output, ""),
    verdict = vapply(rows, function(r) r$verdict, ""),
    stringsAsFactors = FALSE, row.names = NULL
  )
  say("")
  say("original, migrated: examples pass/fail (Rd pages)  tests: expectations pass/fail, skipped tests")
  say("same_output: examples that print the same with both (progress lines aside)")
  say("(together): the examples of all packages, loaded at once into one session")
  print(tab, right = FALSE, row.names = FALSE)
  for (r in rows) if (r$verdict != "ok" && nzchar(r$details))   # in short; in full above
    say(r$package, ": ", r$verdict, ": ", strsplit(r$details, "\n")[[1]][1])
  say(sprintf("total %.0f s", secs(t_all)))

  csv <- Sys.getenv("RCPPSPOOL_COMPAT_RESULTS")
  if (nzchar(csv)) {
    counts <- function(side) {
      m <- do.call(rbind, lapply(rows, function(r) summarize(r[[side]])))
      stats::setNames(as.data.frame(m), paste0(side, "_", colnames(m)))
    }
    full <- cbind(tab[, c("package", "version", "verdict", "same_output")], counts("orig"), counts("mig"),
                  details = vapply(rows, function(r) r$details, ""), stringsAsFactors = FALSE)
    utils::write.csv(full, csv, row.names = FALSE)
  }
  if (any(tab$verdict == "REGRESSION")) return(1L)
  if (!any(tab$verdict == "ok")) return(2L)
  0L
}

if (sys.nframe() == 0L) {
  args <- commandArgs(trailingOnly = TRUE)
  quit(status = compat_main(lib = if (length(args)) args[1] else NULL), save = "no")
}
