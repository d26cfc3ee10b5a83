# The output matrix of issue 36: each host service, from each kind of thread,
# for each way a client reaches the runtime. Every cell is checked for the
# same four things: its lines arrive whole, on the right stream, none lost
# (nor doubled), and in order for each writer.
#
# One source, src/output_cells.h, implements every cell (services, kinds of
# thread and the tags of the lines are described there). It is compiled
#   own        in RcppSpool's own shared library (RcppSpool:::.spool_output_cells):
#              the runtime's entry points called directly;
#   imports    in a package with `Imports: RcppSpool` (a client through the
#              table, found when the package is loaded);
#   linkingto  in a package with `LinkingTo: RcppSpool` only, loaded while
#              RcppSpool's namespace is not: the table is found at its first
#              call on R's main thread;
#   abi10      in a package built against the headers of ABI 10
#              (tests/testthat/fixtures), which borrows the runtime's workers
#              and shares its output queue;
#   module     in a sourceCpp() module compiled by an earlier R process into
#              a cache directory and loaded from there while RcppSpool's
#              namespace is not loaded (the case issue 36 saw tear lines).
# Standalone C++ (no R) runs the same cells in cpp/tests/test_output_matrix.cpp.
# The cells that cannot apply (om_not_applicable, om_client_not_applicable)
# are skipped by name, with the reason.
#
# Each client kind runs in two child R processes, stdout and stderr to files:
#   A: first (before anything else touched the runtime) the writers of the
#      services in `om_first` on plain std::threads, all at once (label
#      "firststdthread"), then every cell of the matrix, one after the other;
#   B: first the same services on RcppSpool::Threads (label "firstthread").
# For linkingto and module, those first calls are where the client has no
# table yet (its threads' text waits in client/early_output.h).

skip_on_cran()
skip_on_os("windows")
skip_if_not_installed("processx")
skip_if_not_installed("callr")
skip_if_not(nzchar(base::system.file("include", "RcppSpool.h", package = "RcppSpool")),
            "RcppSpool is not installed")

om_services <- c("rcout", "rcerr", "endl", "tail", "counter", "bar", "interrupt", "main", "late")
om_kinds <- c("main", "loop", "pool", "group", "thread", "stdthread")
om_first <- c("rcout", "rcerr", "endl", "tail", "interrupt", "late")
om_writers <- 4L
om_lines <- 100L  # even: the tail service ends each writer with one unfinished line per stream

# The cells that cannot apply, and why. They are skipped below by name.
om_not_applicable <- c(
  "tail/main" = paste("a line without a final newline at thread exit: R's main thread does not exit",
                      "(its text is written at once; a line it leaves open is its own to finish)"),
  "tail/loop" = paste("a line without a final newline at thread exit: a global pool's worker does not",
                      "exit with the loop; its unfinished line is continued by the next body it runs"),
  "tail/pool" = paste("a line without a final newline at thread exit: a local pool's worker runs many",
                      "tasks (its unfinished line is shared by them) and exits only with the pool"),
  "tail/group" = paste("a line without a final newline at thread exit: TaskGroup tasks run on the global",
                       "pool's workers, which do not exit"),
  "late/main" = "lines written while the thread ends (a thread_local's destructor): R's main thread does not end",
  "late/loop" = "lines written while the thread ends: a global pool's worker does not end with the loop",
  "late/pool" = paste("lines written while the thread ends: a local pool's worker ends with the pool, not",
                      "with the task that made the thread_local (which would outlive the cell)"),
  "late/group" = "lines written while the thread ends: TaskGroup tasks run on the global pool's workers"
)

# Services that cannot apply to one client kind, and why.
om_client_not_applicable <- c(
  abi10 = paste("late (lines written while the thread ends): a client built against the headers of ABI 10",
                "has their per-thread output state compiled in, which such text used after it was destroyed",
                "(the text lost, freed memory written); fixed in these headers, a client gets it when rebuilt")
)
om_client_excluded <- list(abi10 = "late")

# The cells a client kind runs (without the services `exclude`).
om_cells <- function(exclude = character()) {
  first <- setdiff(om_first, exclude)
  cells <- expand.grid(service = setdiff(om_services, exclude), label = om_kinds, stringsAsFactors = FALSE)
  cells <- cells[!paste(cells$service, cells$label, sep = "/") %in% names(om_not_applicable), ]
  rbind(data.frame(service = first, label = rep("firststdthread", length(first))),
        data.frame(service = first, label = rep("firstthread", length(first))), cells)
}

# What writer w of a cell writes to each stream: the indexes, in order.
om_expected <- function(service, n = om_lines) {
  i <- seq_len(n) - 1L
  even <- i[i %% 2L == 0L]
  odd <- i[i %% 2L == 1L]
  switch(service,
         rcout = , counter = , interrupt = list(out = i, err = integer()),
         rcerr = , bar = list(out = integer(), err = i),
         endl = , tail = , late = list(out = even, err = odd),
         main = list(out = seq_len(2L * n) - 1L, err = integer()))
}

# The pieces of one stream's text: writer lines, progress lines (in place,
# "\r..."), and anything else (torn text).
om_parse <- function(text, stream) {
  segs <- strsplit(text, "[\r\n]")[[1]]
  # A tail (no newline at its thread's end) may be followed on its line by
  # whatever comes next.
  segs <- unlist(strsplit(segs, "(?<= tail)(?=.)", perl = TRUE))
  segs <- segs[nzchar(segs)]
  mid_re <- "^@(counter|bar)/([a-z]+): (\\[[= ]{40}\\] )?[0-9]+%  \\(~[0-9dhms]+ remaining\\)       "
  final_re <- "^@(counter|bar)/([a-z]+): (\\[[= ]{40}\\] )?100% \\(done\\) {25}$"
  line_re <- "^@([a-z]+)/([a-z]+)/w([0-9]+)/([0-9]+) (end|tail)$"
  is_final <- grepl(final_re, segs)
  finals <- sub(final_re, "\\1/\\2", segs[is_final])
  segs <- segs[!is_final]
  has_mid <- grepl(mid_re, segs)
  mids <- sub(paste0(mid_re, ".*"), "\\1/\\2", segs[has_mid])
  segs <- sub(mid_re, "", segs)
  segs <- segs[nzchar(segs)]
  ok <- grepl(line_re, segs)
  lines <- data.frame(stream = rep(stream, sum(ok)),
                      service = sub(line_re, "\\1", segs[ok]), label = sub(line_re, "\\2", segs[ok]),
                      w = as.integer(sub(line_re, "\\3", segs[ok])), i = as.integer(sub(line_re, "\\4", segs[ok])),
                      ending = sub(line_re, "\\5", segs[ok]), stringsAsFactors = FALSE)
  list(lines = lines, finals = finals, mids = mids, garbage = segs[!ok])
}

# Checks every cell of one client kind from its children's output and what
# the cells reported; returns a data frame: one row per cell, `problem` ""
# where the cell passed.
om_check <- function(runs, exclude = character()) {
  out <- lapply(runs, function(r) om_parse(r$stdout, "out"))
  err <- lapply(runs, function(r) om_parse(r$stderr, "err"))
  lines <- do.call(rbind, c(lapply(out, `[[`, "lines"), lapply(err, `[[`, "lines")))
  garbage <- c(unlist(lapply(out, `[[`, "garbage")), unlist(lapply(err, `[[`, "garbage")))
  reported <- do.call(c, lapply(runs, function(r) r$problems))
  cells <- om_cells(exclude)
  cells$problem <- ""
  for (k in seq_len(nrow(cells))) {
    svc <- cells$service[k]
    lab <- cells$label[k]
    key <- paste(svc, lab, sep = "/")
    why <- character()
    if (!is.null(reported[[key]]) && nzchar(reported[[key]])) why <- c(why, reported[[key]])
    if (is.null(reported[[key]])) why <- c(why, "the cell did not run")
    exp <- om_expected(svc)
    mine <- lines[lines$service == svc & lines$label == lab, , drop = FALSE]
    for (w in seq_len(om_writers) - 1L) {
      for (s in c("out", "err")) {
        got <- mine$i[mine$w == w & mine$stream == s]
        if (!identical(got, exp[[s]])) {
          lost <- setdiff(exp[[s]], got)
          extra <- setdiff(got, exp[[s]])
          what <- c(if (length(lost)) sprintf("%d of %d lost", length(lost), length(exp[[s]])),
                    if (length(extra)) sprintf("%d that belong elsewhere", length(extra)),
                    if (anyDuplicated(got)) sprintf("%d doubled", sum(duplicated(got))),
                    if (!length(lost) && !length(extra) && !anyDuplicated(got)) "out of order")
          why <- c(why, sprintf("writer %d on std%s: %s", w, s, paste(what, collapse = ", ")))
        }
      }
      tails <- mine$i[mine$w == w & mine$ending == "tail"]
      want <- if (svc %in% c("tail", "late")) om_lines - 2:1 else integer()
      if (!setequal(tails, want)) why <- c(why, sprintf("writer %d: unfinished lines %s", w, paste(tails, collapse = ",")))
    }
    torn <- garbage[grepl(paste0("@", svc, "/", lab, "/"), garbage, fixed = TRUE)]
    if (length(torn)) why <- c(why, paste0("torn: ", paste(utils::head(sQuote(torn, FALSE), 3), collapse = " ")))
    if (svc %in% c("counter", "bar")) {
      right <- if (svc == "counter") out else err
      wrong <- if (svc == "counter") err else out
      pid <- paste(svc, lab, sep = "/")
      n_right <- sum(unlist(lapply(right, `[[`, "finals")) == pid)
      n_wrong <- sum(unlist(lapply(wrong, function(p) c(p$finals, p$mids))) == pid)
      if (n_right != 1) why <- c(why, sprintf("%d final \"100%% (done)\" lines on the right stream", n_right))
      if (n_wrong) why <- c(why, sprintf("%d progress lines on the wrong stream", n_wrong))
    }
    cells$problem[k] <- paste(why, collapse = "; ")
  }
  attr(cells, "garbage") <- garbage
  cells
}

# Runs `setup` (R code that defines `cells(services, kind, label, writers,
# lines)`) in a child R process that then runs `body`; returns its stdout
# and stderr (text) and the problems the cells reported, named service/label.
om_child <- function(setup, which, libpaths = .libPaths(), exclude = character()) {
  dir <- tempfile("om-child")
  dir.create(dir)
  files <- file.path(dir, c("child.R", "out.txt", "err.txt", "res.rds"))
  first_kind <- if (which == "A") "stdthread" else "thread"
  first <- setdiff(om_first, exclude)
  todo <- om_cells(exclude)
  todo <- todo[!grepl("^first", todo$label), ]
  writeLines(c(
    sprintf(".libPaths(%s)", paste(deparse(libpaths), collapse = "")),
    setup,
    "res <- list(loaded = isNamespaceLoaded('RcppSpool'), problems = list())",
    "run <- function(services, kind, label) {",
    sprintf("  p <- cells(services, kind, label, %dL, %dL)", om_writers, om_lines),
    "  res$problems[paste(services, label, sep = '/')] <<- as.list(p)",
    "}",
    sprintf("run(%s, '%s', 'first%s')", paste(deparse(first), collapse = ""), first_kind, first_kind),
    if (which == "A") c(
      sprintf("cells_todo <- %s", paste(deparse(todo), collapse = "")),
      "for (k in seq_len(nrow(cells_todo))) run(cells_todo$service[k], cells_todo$label[k], cells_todo$label[k])"),
    sprintf("saveRDS(res, '%s')", files[4])
  ), files[1])
  r <- processx::run(file.path(R.home("bin"), "Rscript"), c("--vanilla", files[1]),
                     stdout = files[2], stderr = files[3], error_on_status = FALSE, timeout = 300)
  read <- function(f) if (file.exists(f) && file.size(f) > 0) readChar(f, file.size(f), useBytes = TRUE) else ""
  res <- if (file.exists(files[4])) readRDS(files[4]) else list(problems = list())
  list(status = r$status, stdout = read(files[2]), stderr = read(files[3]), problems = res$problems,
       loaded = res$loaded)
}

# Expects every cell of a client kind to pass: one expectation per cell.
expect_cells_pass <- function(runs, client, exclude = character()) {
  for (r in runs) {
    expect_identical(r$status, 0L, info = paste(client, "child's stderr:", substr(r$stderr, max(1, nchar(r$stderr) - 2000), nchar(r$stderr))))
  }
  cells <- om_check(runs, exclude)
  for (k in seq_len(nrow(cells))) {
    expect(!nzchar(cells$problem[k]),
           sprintf("%s: %s/%s: %s", client, cells$service[k], cells$label[k], cells$problem[k]))
  }
  garbage <- attr(cells, "garbage")
  expect(length(garbage) == 0,
         sprintf("%s: %d pieces of text belong to no cell: %s", client, length(garbage),
                 paste(utils::head(sQuote(garbage, FALSE), 5), collapse = " ")))
  invisible(cells)
}

# --- the throwaway clients, built while RcppSpool's own cells run ----------

om_source <- test_path("..", "..", "src", "output_cells.h")
om_have_source <- file.exists(om_source)

om_package <- function(root, name, imports, include = NULL) {
  pkg <- file.path(root, name)
  dir.create(file.path(pkg, "src"), recursive = TRUE)
  dir.create(file.path(pkg, "R"))
  writeLines(c(paste("Package:", name), "Version: 0.1", "Title: Throwaway client of RcppSpool",
               "Description: Built by RcppSpool's tests (the output matrix).", "License: MIT",
               if (imports) "Imports: RcppSpool", "LinkingTo: RcppSpool"),
             file.path(pkg, "DESCRIPTION"))
  writeLines(c(sprintf("useDynLib(%s, .registration = TRUE)", name), "export(cells)",
               if (imports) "importFrom(RcppSpool, availableCores)"),
             file.path(pkg, "NAMESPACE"))
  writeLines("cells <- function(s, k, l, w, n) .Call(om_cells, s, k, l, as.integer(w), as.integer(n))",
             file.path(pkg, "R", "cells.R"))
  writeLines(c("CXX_STD = CXX17", if (!is.null(include)) paste0("PKG_CPPFLAGS = -I", include),
               "PKG_LIBS = -pthread"), file.path(pkg, "src", "Makevars"))
  file.copy(om_source, file.path(pkg, "src", "output_cells.h"))
  writeLines(c(
    '#include "output_cells.h"',
    "#include <R_ext/Rdynload.h>",
    'extern "C" SEXP om_cells(SEXP s, SEXP k, SEXP l, SEXP w, SEXP n) { return output_cells::runCellsR(s, k, l, w, n); }',
    'static const R_CallMethodDef calls[] = {{"om_cells", (DL_FUNC)&om_cells, 5}, {NULL, NULL, 0}};',
    sprintf('extern "C" void R_init_%s(DllInfo* dll) {', name),
    "  R_registerRoutines(dll, NULL, calls, NULL, NULL);",
    "  R_useDynamicSymbols(dll, FALSE);",
    "}"), file.path(pkg, "src", "cells.cpp"))
  pkg
}

om_install <- function(pkg, lib) {
  processx::process$new(file.path(R.home("bin"), "R"),
                        c("CMD", "INSTALL", "--no-test-load", "--no-docs", paste0("--library=", lib), pkg),
                        stdout = "|", stderr = "2>&1",
                        env = c("current", R_LIBS = paste(c(lib, .libPaths()), collapse = ":")))
}
om_finish <- function(p, what) {
  p$wait(600000)
  log <- p$read_all_output()
  if (p$is_alive() || p$get_exit_status() != 0) stop("building ", what, " failed:\n", log)
  invisible(TRUE)
}

# The module, compiled into a cache directory by an R process of its own.
om_module_code <- function() {
  c("// [[Rcpp::depends(RcppSpool)]]",
    "#include <Rcpp.h>",
    sprintf('#include "%s"', normalizePath(om_source)),
    "// [[Rcpp::export]]",
    "SEXP cells(SEXP s, SEXP k, SEXP l, SEXP w, SEXP n) { return output_cells::runCellsR(s, k, l, w, n); }")
}

if (om_have_source) {
  om_root <- tempfile("om-clients")
  om_lib <- file.path(om_root, "lib")
  dir.create(om_lib, recursive = TRUE)
  om_module_file <- file.path(om_root, "cells.cpp")
  om_module_cache <- file.path(om_root, "cache")
  writeLines(om_module_code(), om_module_file)
  om_builds <- list(
    imports = om_install(om_package(om_root, "omImports", imports = TRUE), om_lib),
    linkingto = om_install(om_package(om_root, "omLinkingTo", imports = FALSE), om_lib)
  )
}

test_that("the cells that cannot apply are listed with the reason", {
  for (cell in names(om_not_applicable)) {
    expect_true(cell %in% paste(om_services, rep(om_kinds, each = length(om_services)), sep = "/"))
  }
  # 9 services x 6 kinds, less those, plus the first calls on each kind of thread.
  expect_identical(nrow(om_cells()), length(om_services) * length(om_kinds) - length(om_not_applicable) +
                     2L * length(om_first))
})

for (cell in names(om_not_applicable)) {
  test_that(sprintf("output matrix, %s: cannot apply", cell), {
    skip(om_not_applicable[[cell]])
  })
}

test_that("output matrix, RcppSpool's own code: every cell", {
  setup <- "cells <- RcppSpool:::.spool_output_cells"
  runs <- list(om_child(setup, "A"), om_child(setup, "B"))
  expect_cells_pass(runs, "RcppSpool's own code")
})

if (om_have_source) {
  om_finish(om_builds$imports, "the client with Imports")
  om_finish(om_builds$linkingto, "the client with LinkingTo only")
  om_builds <- list(
    abi10 = om_install(om_package(om_root, "omAbi10", imports = TRUE,
                                  include = abi10_headers(om_root, "include-abi10")), om_lib),
    module = callr::r_bg(function(file, cache) {
      Rcpp::sourceCpp(file, cacheDir = cache, env = new.env())
      TRUE
    }, list(om_module_file, om_module_cache), libpath = .libPaths(),
    stdout = file.path(om_root, "module.log"), stderr = "2>&1")
  )
}

test_that("output matrix, a client package through the table (Imports): every cell", {
  skip_if_not(om_have_source, paste("src/output_cells.h is not there (", om_source, "): the tests run",
                                    "outside RcppSpool's source tree"))
  setup <- "invisible(loadNamespace('omImports')); cells <- asNamespace('omImports')$cells"
  runs <- list(om_child(setup, "A", c(om_lib, .libPaths())), om_child(setup, "B", c(om_lib, .libPaths())))
  expect_true(runs[[1]]$loaded)
  expect_cells_pass(runs, "Imports client")
})

test_that("output matrix, a package with LinkingTo only, loaded before RcppSpool: every cell", {
  skip_if_not(om_have_source, "src/output_cells.h is not there: the tests run outside RcppSpool's source tree")
  setup <- "invisible(loadNamespace('omLinkingTo')); cells <- asNamespace('omLinkingTo')$cells"
  runs <- list(om_child(setup, "A", c(om_lib, .libPaths())), om_child(setup, "B", c(om_lib, .libPaths())))
  # RcppSpool's namespace was not loaded when the package was, nor before its first call.
  expect_false(runs[[1]]$loaded)
  expect_false(runs[[2]]$loaded)
  expect_cells_pass(runs, "LinkingTo-only client")
})

if (om_have_source) {
  om_finish(om_builds$abi10, "the client of ABI 10")
  om_builds$module$wait(600000)
  om_module_log <- paste(readLines(file.path(om_root, "module.log")), collapse = "\n")
  om_module_built <- tryCatch(isTRUE(om_builds$module$get_result()), error = function(e) FALSE)
}

test_that("output matrix, a client built against the headers of ABI 10: every cell", {
  skip_if_not(om_have_source, "src/output_cells.h is not there: the tests run outside RcppSpool's source tree")
  setup <- "invisible(loadNamespace('omAbi10')); cells <- asNamespace('omAbi10')$cells"
  exclude <- om_client_excluded$abi10
  runs <- list(om_child(setup, "A", c(om_lib, .libPaths()), exclude),
               om_child(setup, "B", c(om_lib, .libPaths()), exclude))
  expect_cells_pass(runs, "ABI 10 client", exclude)
})

test_that("output matrix, the ABI 10 client's late cells: cannot apply", {
  skip(om_client_not_applicable[["abi10"]])
})

test_that("output matrix, a sourceCpp() module loaded from its cache before RcppSpool: every cell", {
  skip_if_not(om_have_source, "src/output_cells.h is not there: the tests run outside RcppSpool's source tree")
  expect(om_module_built, paste("compiling the module failed:", om_module_log))
  setup <- sprintf("Rcpp::sourceCpp('%s', cacheDir = '%s')", om_module_file, om_module_cache)
  runs <- list(om_child(setup, "A"), om_child(setup, "B"))
  # Loaded from the cache: RcppSpool's namespace was not loaded at the module's load.
  expect_false(runs[[1]]$loaded)
  expect_false(runs[[2]]$loaded)
  expect_cells_pass(runs, "sourceCpp module")
})
