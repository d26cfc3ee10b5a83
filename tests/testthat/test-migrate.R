# use_rcppspool() on small package folders written here (under tempdir()):
# a client of RcppThread, one of RcppParallel, variants with roxygen2, with
# both, with RcppSpool already, and with code it cannot migrate. Nothing is
# compiled or installed.

# Writes a package folder from a list of file name = lines; returns its path.
write_pkg <- function(files, name = "pkg") {
  dir <- file.path(tempfile("migrate-"), name)
  for (f in names(files)) {
    dir.create(dirname(file.path(dir, f)), recursive = TRUE, showWarnings = FALSE)
    writeLines(files[[f]], file.path(dir, f))
  }
  dir
}

# Every file of a folder, as bytes, by name.
folder_bytes <- function(dir) {
  f <- sort(list.files(dir, recursive = TRUE, all.files = TRUE))
  stats::setNames(lapply(file.path(dir, f), function(x) readBin(x, "raw", file.size(x))), f)
}

read_file <- function(dir, f) readLines(file.path(dir, f), warn = FALSE)
field <- function(dir, name) unname(read.dcf(file.path(dir, "DESCRIPTION"))[1, name])

# What a migrated package requires: this RcppSpool's version or later.
spool_req <- paste0("RcppSpool (>= ", getNamespaceVersion("RcppSpool"), ")")

ldflags <- "`\"$(R_HOME)/bin/Rscript\" -e \"RcppSpool::LdFlags()\"`"

thread_pkg <- function() write_pkg(list(
  DESCRIPTION = c(
    "Package: threadpkg",
    "Version: 0.1.0",
    "Title: A Client of RcppThread",
    "Description: Fills vectors in parallel.",
    "License: MIT",
    "Imports: Rcpp (>= 1.0.0), RcppThread (>= 2.1.0)",
    "LinkingTo: Rcpp, RcppThread (>= 2.1.0)"
  ),
  NAMESPACE = c(
    "useDynLib(threadpkg, .registration = TRUE)",
    "importFrom(Rcpp, evalCpp)",
    "export(fill)"
  ),
  "R/threads.R" = c(
    "# The cores to use",
    "cores <- function() RcppThread::detectCores()"
  ),
  "src/Makevars" = c(
    "CXX_STD = CXX11",
    "PKG_LIBS = `\"$(R_HOME)/bin/Rscript\" -e \"RcppThread::LdFlags()\"`"
  ),
  "src/fill.cpp" = c(
    "// [[Rcpp::depends(RcppThread)]]",
    "#define RCPPTHREAD_OVERRIDE_COUT 1",
    "#include <Rcpp.h>",
    "#include <RcppThread.h>",
    "",
    "// [[Rcpp::export]]",
    "Rcpp::NumericVector fill(int n) {",
    "  std::vector<double> x(n);",
    "  RcppThread::parallelFor(0, n, [&](int i) { x[i] = i; });",
    "  RcppThread::Rcout << \"filled \" << n << \"\\n\";",
    "  return Rcpp::wrap(x);",
    "}"
  ),
  MD5 = "0123456789abcdef0123456789abcdef *DESCRIPTION"
), "threadpkg")

parallel_pkg <- function() write_pkg(list(
  DESCRIPTION = c(
    "Package: parpkg",
    "Version: 0.1.0",
    "Title: A Client of RcppParallel",
    "Description: Sums vectors in parallel.",
    "License: MIT",
    "Imports: Rcpp, RcppParallel (>= 5.0.0), stats",
    "LinkingTo: Rcpp, RcppParallel",
    "SystemRequirements: GNU make"
  ),
  NAMESPACE = c(
    "useDynLib(parpkg, .registration = TRUE)",
    "importFrom(Rcpp, evalCpp)",
    "importFrom(RcppParallel, RcppParallelLibs)",
    "export(vector_sum, set_threads)"
  ),
  "R/threads.R" = "set_threads <- function(n) RcppParallel::setThreadOptions(numThreads = n)",
  "src/Makevars" = c(
    "CXX_STD = CXX11",
    "PKG_CXXFLAGS += -DRCPP_PARALLEL_USE_TBB=1",
    "PKG_LIBS += $(shell \"${R_HOME}/bin/Rscript\" -e \"RcppParallel::RcppParallelLibs()\")"
  ),
  "src/Makevars.win" = c(
    "PKG_CXXFLAGS += -DRCPP_PARALLEL_USE_TBB=1",
    "",
    "PKG_LIBS += $(shell \"${R_HOME}/bin${R_ARCH_BIN}/Rscript.exe\" \\",
    "              -e \"RcppParallel::RcppParallelLibs()\")"
  ),
  "src/sum.cpp" = c(
    "// [[Rcpp::depends(RcppParallel)]]",
    "#include <Rcpp.h>",
    "#include <RcppParallel.h>",
    "using namespace Rcpp;",
    "using namespace RcppParallel;",
    "",
    "struct Sum : public Worker {",
    "  const RVector<double> input;",
    "  double value;",
    "  Sum(const NumericVector input) : input(input), value(0) {}",
    "  Sum(const Sum& sum, Split) : input(sum.input), value(0) {}",
    "  void operator()(std::size_t begin, std::size_t end) {",
    "    value += std::accumulate(input.begin() + begin, input.begin() + end, 0.0);",
    "  }",
    "  void join(const Sum& rhs) { value += rhs.value; }",
    "};",
    "",
    "// [[Rcpp::export]]",
    "double vector_sum(NumericVector x) {",
    "  Sum sum(x);",
    "  RcppParallel::parallelReduce(0, x.length(), sum);",
    "  return sum.value;",
    "}"
  )
), "parpkg")

test_that("a dry run prints the diff of each file and writes nothing", {
  dir <- thread_pkg()
  before <- folder_bytes(dir)
  out <- capture.output(changes <- use_rcppspool(dir))
  expect_identical(folder_bytes(dir), before)

  expect_true(all(c("--- a/DESCRIPTION", "+++ b/DESCRIPTION", "--- a/src/fill.cpp", "+++ b/src/fill.cpp",
                    "--- a/src/Makevars", "--- a/NAMESPACE", "--- a/R/threads.R", "--- a/MD5") %in% out))
  expect_true(all(c("-#include <RcppThread.h>", "+#include <RcppSpool.h>",
                    "-  RcppThread::parallelFor(0, n, [&](int i) { x[i] = i; });",
                    "+  RcppSpool::parallelFor(0, n, [&](int i) { x[i] = i; });",
                    "-LinkingTo: Rcpp, RcppThread (>= 2.1.0)", paste0("+LinkingTo: Rcpp, ", spool_req),
                    "+SystemRequirements: C++17", "+importFrom(RcppSpool, availableCores)",
                    "-CXX_STD = CXX11", "+CXX_STD = CXX17",
                    " #include <Rcpp.h>") %in% out))  # a line of context
  expect_true(any(grepl("^@@ -[0-9]+,[0-9]+ \\+[0-9]+,[0-9]+ @@$", out)))
  expect_true(any(grepl("dry run, nothing written", out, fixed = TRUE)))
  # What it would change is what it changes.
  expect_true("src/fill.cpp: RcppThread -> RcppSpool" %in% changes)
  expect_message(written <- use_rcppspool(dir, dry_run = FALSE), "use_rcppspool() changed", fixed = TRUE)
  expect_identical(written, changes)
})

test_that("an RcppThread client gets RcppSpool in DESCRIPTION, NAMESPACE, Makevars, R/ and src/", {
  dir <- thread_pkg()
  expect_silent(changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE)))
  expect_identical(field(dir, "LinkingTo"), paste("Rcpp,", spool_req))
  expect_identical(field(dir, "Imports"), paste("Rcpp (>= 1.0.0),", spool_req))
  expect_identical(field(dir, "SystemRequirements"), "C++17")
  expect_identical(read_file(dir, "NAMESPACE"), c(
    "useDynLib(threadpkg, .registration = TRUE)",
    "importFrom(Rcpp, evalCpp)",
    "export(fill)",
    "importFrom(RcppSpool, availableCores)"
  ))
  expect_identical(read_file(dir, "src/Makevars"), c("CXX_STD = CXX17", paste("PKG_LIBS =", ldflags)))
  expect_false(file.exists(file.path(dir, "src", "Makevars.win")))  # only without any Makevars
  src <- read_file(dir, "src/fill.cpp")
  expect_identical(src[1:4], c("// [[Rcpp::depends(RcppSpool)]]", "#define RCPPSPOOL_OVERRIDE_COUT 1",
                               "#include <Rcpp.h>", "#include <RcppSpool.h>"))
  expect_true(all(c("  RcppSpool::parallelFor(0, n, [&](int i) { x[i] = i; });",
                    "  RcppSpool::Rcout << \"filled \" << n << \"\\n\";") %in% src))
  expect_false(any(grepl("RcppThread|RCPPTHREAD", src)))
  expect_identical(read_file(dir, "R/threads.R")[2], "cores <- function() RcppSpool::detectCores()")
  expect_false(file.exists(file.path(dir, "MD5")))
  expect_true(all(c(
    "DESCRIPTION: LinkingTo: RcppThread -> RcppSpool",
    "DESCRIPTION: Imports: RcppThread -> RcppSpool",
    "DESCRIPTION: SystemRequirements: C++17",
    "NAMESPACE: importFrom(RcppSpool, availableCores) added",
    "R/threads.R: RcppThread -> RcppSpool",
    "src/fill.cpp: RcppThread -> RcppSpool",
    "src/Makevars: CXX_STD = CXX17",
    "MD5: removed (its checksums no longer match)"
  ) %in% changes))
})

test_that("an RcppParallel client gets the compatibility header and loses RcppParallel's and TBB's flags", {
  dir <- parallel_pkg()
  expect_silent(changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE)))
  expect_identical(field(dir, "LinkingTo"), paste("Rcpp,", spool_req))
  expect_identical(field(dir, "Imports"), paste("Rcpp, stats,", spool_req))
  expect_identical(field(dir, "SystemRequirements"), "GNU make, C++17")
  expect_identical(read_file(dir, "NAMESPACE"), c(
    "useDynLib(parpkg, .registration = TRUE)",
    "importFrom(Rcpp, evalCpp)",
    "export(vector_sum, set_threads)",
    "importFrom(RcppSpool, availableCores)"
  ))
  expect_identical(read_file(dir, "src/Makevars"), c("CXX_STD = CXX17", paste("PKG_LIBS +=", ldflags)))
  expect_identical(read_file(dir, "src/Makevars.win"), c("CXX_STD = CXX17", "", paste("PKG_LIBS +=", ldflags)))
  src <- read_file(dir, "src/sum.cpp")
  expect_identical(src[1:5], c("// [[Rcpp::depends(RcppSpool)]]", "#include <Rcpp.h>",
                               "#include <RcppSpool/RcppParallel.h>", "using namespace Rcpp;",
                               "using namespace RcppSpool::RcppParallel;"))
  expect_true("  RcppSpool::RcppParallel::parallelReduce(0, x.length(), sum);" %in% src)
  expect_identical(read_file(dir, "R/threads.R"),
                   "set_threads <- function(n) RcppSpool::setThreadOptions(numThreads = n)")
  expect_true(all(c(
    "DESCRIPTION: LinkingTo: RcppParallel -> RcppSpool",
    "DESCRIPTION: Imports: RcppParallel removed",
    "DESCRIPTION: Imports: RcppSpool added",
    "NAMESPACE: imports of RcppParallel removed",
    "src/sum.cpp: RcppParallel -> RcppSpool::RcppParallel",
    "src/Makevars: RcppParallel's and TBB's flags removed or replaced by RcppSpool::LdFlags()"
  ) %in% changes))
})

test_that("a second run changes nothing", {
  for (make in list(thread_pkg, parallel_pkg)) {
    dir <- make()
    suppressMessages(use_rcppspool(dir, dry_run = FALSE))
    after <- folder_bytes(dir)
    expect_message(again <- use_rcppspool(dir, dry_run = FALSE), "nothing to change")
    expect_identical(again, character())
    expect_identical(folder_bytes(dir), after)
    expect_output(again <- use_rcppspool(dir), "nothing to change")
    expect_identical(again, character())
    # Also when told what the package came from.
    from <- if (grepl("threadpkg", dir)) "RcppThread" else "RcppParallel"
    expect_identical(suppressMessages(use_rcppspool(dir, from = from, dry_run = FALSE)), character())
    expect_identical(folder_bytes(dir), after)
  }
})

test_that("with roxygen2, NAMESPACE keeps roxygen's order and the tags follow", {
  # RcppParallel: the tag that imported RcppParallelLibs imports availableCores.
  dir <- parallel_pkg()
  writeLines(c("# Generated by roxygen2: do not edit by hand", "",
               "export(set_threads)", "export(vector_sum)",
               "importFrom(Rcpp,evalCpp)", "importFrom(RcppParallel,RcppParallelLibs)",
               "importFrom(stats,sd)", "useDynLib(parpkg, .registration = TRUE)"),
             file.path(dir, "NAMESPACE"))
  writeLines(c("#' @keywords internal", "#' @importFrom RcppParallel RcppParallelLibs",
               "#' @importFrom stats sd", "\"_PACKAGE\""), file.path(dir, "R", "parpkg-package.R"))
  changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(read_file(dir, "NAMESPACE")[5:8], c(
    "importFrom(Rcpp,evalCpp)", "importFrom(RcppSpool,availableCores)",
    "importFrom(stats,sd)", "useDynLib(parpkg, .registration = TRUE)"))
  expect_identical(read_file(dir, "R/parpkg-package.R")[2], "#' @importFrom RcppSpool availableCores")
  expect_false(any(grepl("roxygen2 writes it", changes)))

  # RcppThread without a tag: the changes say which tag to add.
  dir <- thread_pkg()
  writeLines(c("# Generated by roxygen2: do not edit by hand", "", "export(fill)",
               "importFrom(Rcpp,evalCpp)", "useDynLib(threadpkg, .registration = TRUE)"),
             file.path(dir, "NAMESPACE"))
  changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(read_file(dir, "NAMESPACE")[4:6], c(
    "importFrom(Rcpp,evalCpp)", "importFrom(RcppSpool,availableCores)",
    "useDynLib(threadpkg, .registration = TRUE)"))
  note <- grep("^NAMESPACE: roxygen2 writes it", changes, value = TRUE)
  expect_length(note, 1)
  expect_match(note, "@importFrom RcppSpool availableCores", fixed = TRUE)

  # An import of RcppSpool that is there already is enough.
  dir <- thread_pkg()
  writeLines(c("useDynLib(threadpkg, .registration = TRUE)", "importFrom(RcppThread, detectCores)"),
             file.path(dir, "NAMESPACE"))
  suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(read_file(dir, "NAMESPACE"),
                   c("useDynLib(threadpkg, .registration = TRUE)", "importFrom(RcppSpool, detectCores)"))
})

test_that("from = \"auto\" reads LinkingTo: both, RcppSpool already, or neither", {
  dir <- parallel_pkg()
  desc <- read_file(dir, "DESCRIPTION")
  desc[desc == "LinkingTo: Rcpp, RcppParallel"] <- "LinkingTo: Rcpp,\n    RcppParallel,\n    RcppThread"
  writeLines(desc, file.path(dir, "DESCRIPTION"))
  writeLines(c("#include <RcppThread.h>", "void f() { RcppThread::Rcout << 1; }"),
             file.path(dir, "src", "print.cpp"))
  suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(read_file(dir, "src/print.cpp")[1], "#include <RcppSpool.h>")
  expect_identical(read_file(dir, "src/sum.cpp")[3], "#include <RcppSpool/RcppParallel.h>")
  expect_identical(field(dir, "LinkingTo"), paste0("Rcpp,\n", spool_req))

  # A package that links to RcppSpool only gets Imports, NAMESPACE and C++17;
  # without src/Makevars, a Makevars and a Makevars.win.
  dir <- write_pkg(list(
    DESCRIPTION = c("Package: spoolpkg", "Version: 1.0", "LinkingTo: Rcpp, RcppSpool"),
    NAMESPACE = "useDynLib(spoolpkg, .registration = TRUE)",
    "src/loop.cpp" = "#include <RcppSpool.h>"
  ))
  changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(field(dir, "Imports"), spool_req)
  expect_identical(read_file(dir, "DESCRIPTION")[3:4], paste0(c("Imports: ", "LinkingTo: Rcpp, "), spool_req))
  expect_identical(read_file(dir, "NAMESPACE")[2], "importFrom(RcppSpool, availableCores)")
  for (f in c("src/Makevars", "src/Makevars.win"))
    expect_identical(read_file(dir, f), c("CXX_STD = CXX17", paste("PKG_LIBS =", ldflags)))
  expect_identical(grep("^src/Makevars", changes, value = TRUE), paste0(
    c("src/Makevars", "src/Makevars.win"), ": created, with CXX_STD = CXX17 and RcppSpool::LdFlags() in PKG_LIBS"))
  expect_identical(read_file(dir, "src/loop.cpp"), "#include <RcppSpool.h>")

  dir <- write_pkg(list(DESCRIPTION = c("Package: plain", "Version: 1.0", "LinkingTo: Rcpp")))
  expect_error(use_rcppspool(dir), "names neither RcppThread nor RcppParallel", fixed = TRUE)
})

test_that("what it cannot migrate is named in a warning, file and line", {
  dir <- parallel_pkg()
  writeLines(c("#include <RcppParallel.h>", "#include <tbb/parallel_sort.h>",
               "// tbb:: in a comment is fine",
               "void sort(std::vector<double>& x) { tbb::parallel_sort(x.begin(), x.end()); }"),
             file.path(dir, "src", "sort.cpp"))
  dir.create(file.path(dir, "tests"))
  writeLines("RcppParallel::setThreadOptions(2)", file.path(dir, "tests", "threads.R"))
  w <- tryCatch(capture.output(use_rcppspool(dir)), RcppSpool_migration_left = function(w) w)
  expect_s3_class(w, "warning")
  expect_identical(w$left, c(
    "src/sort.cpp:2: #include <tbb/parallel_sort.h>",
    "src/sort.cpp:4: void sort(std::vector<double>& x) { tbb::parallel_sort(x.begin(), x...",
    "tests/threads.R:1: RcppParallel::setThreadOptions(2)"
  ))
  expect_match(conditionMessage(w), "change it by hand:\n  src/sort.cpp:2: ", fixed = TRUE)

  # RcppParallel still used by the R code: it stays in Imports, with a warning.
  dir <- parallel_pkg()
  writeLines("libs <- function() RcppParallel::tbbLibraryPath()", file.path(dir, "R", "tbb.R"))
  expect_warning(suppressMessages(use_rcppspool(dir, dry_run = FALSE)),
                 "R/tbb.R:1: libs <- function() RcppParallel::tbbLibraryPath()", fixed = TRUE)
  expect_identical(field(dir, "Imports"), paste("Rcpp, RcppParallel (>= 5.0.0), stats,", spool_req))

  dir <- thread_pkg()
  writeLines(c("library(RcppThread)", "detectCores()"), file.path(dir, "R", "old.R"))
  dir.create(file.path(dir, "tests"))
  writeLines("stopifnot(RcppThread::detectCores() > 0)", file.path(dir, "tests", "cores.R"))
  w <- tryCatch(capture.output(use_rcppspool(dir)), RcppSpool_migration_left = function(w) w)
  expect_identical(w$left, "tests/cores.R:1: stopifnot(RcppThread::detectCores() > 0)")
  # The same lines come back with the changes, as their attribute "left".
  changes <- suppressWarnings(suppressMessages(use_rcppspool(dir, dry_run = FALSE)))
  expect_identical(attr(changes, "left"), w$left)
  expect_identical(read_file(dir, "R/old.R")[1], "library(RcppSpool)")
})

test_that("line endings, other fields and multi-line dependency fields are kept", {
  dir <- thread_pkg()
  desc <- c("Package: threadpkg", "Version: 0.1.0", "Depends: R (>= 4.1)", "Imports:",
            "    Rcpp,", "    RcppThread (>= 2.1.0),", "    stats", "LinkingTo:", "    Rcpp,",
            "    RcppThread", "Suggests: RcppThread, testthat", "SystemRequirements: C++11, GNU make")
  con <- file(file.path(dir, "DESCRIPTION"), "wb")
  writeLines(desc, con, sep = "\r\n")
  close(con)
  suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  raw <- readBin(file.path(dir, "DESCRIPTION"), "raw", 1e4)
  expect_identical(strsplit(rawToChar(raw), "\r\n", fixed = TRUE)[[1]], c(
    "Package: threadpkg", "Version: 0.1.0", "Depends: R (>= 4.1)", "Imports:",
    "    Rcpp,", paste0("    ", spool_req, ","), "    stats", "LinkingTo:", "    Rcpp,",
    paste0("    ", spool_req), "Suggests: RcppSpool, testthat", "SystemRequirements: C++17, GNU make"))

  # RcppSpool in Depends: no Imports added.
  dir <- thread_pkg()
  writeLines(c("Package: threadpkg", "Version: 0.1.0", "Depends: RcppThread", "LinkingTo: RcppThread"),
             file.path(dir, "DESCRIPTION"))
  suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(read_file(dir, "DESCRIPTION"), c(
    "Package: threadpkg", "Version: 0.1.0", paste("Depends:", spool_req), paste("LinkingTo:", spool_req),
    "SystemRequirements: C++17"))
})

test_that("LinkingTo and Imports require this RcppSpool's version: a later requirement stays, an earlier goes", {
  version <- unname(getNamespaceVersion("RcppSpool"))
  dir <- write_pkg(list(
    DESCRIPTION = c("Package: spoolpkg", "Version: 1.0", "Imports: RcppSpool (>= 0.1.0)",
                    "LinkingTo: Rcpp, RcppSpool (>= 99.0.0)"),
    NAMESPACE = c("useDynLib(spoolpkg, .registration = TRUE)", "importFrom(RcppSpool, availableCores)"),
    "src/loop.cpp" = "#include <RcppSpool.h>"
  ))
  changes <- suppressMessages(use_rcppspool(dir, dry_run = FALSE))
  expect_identical(field(dir, "Imports"), spool_req)
  expect_identical(field(dir, "LinkingTo"), "Rcpp, RcppSpool (>= 99.0.0)")
  expect_true(paste0("DESCRIPTION: Imports: RcppSpool (>= ", version, ")") %in% changes)
  expect_false(any(grepl("DESCRIPTION: LinkingTo", changes, fixed = TRUE)))
  # A second run changes nothing.
  expect_length(suppressMessages(use_rcppspool(dir, dry_run = FALSE)), 0L)
})

test_that("bad arguments are errors that show them", {
  dir <- thread_pkg()
  nowhere <- tempfile("no-such-folder")
  expect_error(use_rcppspool(nowhere), paste("path", nowhere, "is not a folder"), fixed = TRUE)
  empty <- tempfile("empty-")
  dir.create(empty)
  expect_error(use_rcppspool(empty), paste(empty, "is not the folder of a package: it has no DESCRIPTION file"),
               fixed = TRUE)
  expect_error(use_rcppspool(1), "path must be the folder of a package, not 1", fixed = TRUE)
  expect_error(use_rcppspool(NA_character_), "path must be the folder of a package, not NA", fixed = TRUE)
  expect_error(use_rcppspool(c(dir, dir)), paste0("not c(\"", dir, "\", \""), fixed = TRUE)
  expect_error(use_rcppspool(list(dir)), "not an object of class list and length 1", fixed = TRUE)

  expect_error(use_rcppspool(dir, from = "Rcpp"), "from must be \"auto\", \"RcppThread\", \"RcppParallel\"",
               fixed = TRUE)
  expect_error(use_rcppspool(dir, from = "Rcpp"), "not \"Rcpp\"", fixed = TRUE)
  expect_error(use_rcppspool(dir, from = NA), "not NA", fixed = TRUE)
  expect_error(use_rcppspool(dir, from = c("auto", "RcppThread")), "not c(\"auto\", \"RcppThread\")", fixed = TRUE)
  expect_error(use_rcppspool(dir, from = character()), "not an object of class character and length 0", fixed = TRUE)

  expect_error(use_rcppspool(dir, dry_run = "yes"), "dry_run must be TRUE or FALSE, not \"yes\"", fixed = TRUE)
  expect_error(use_rcppspool(dir, dry_run = NA), "dry_run must be TRUE or FALSE, not NA", fixed = TRUE)
  expect_error(use_rcppspool(dir, dry_run = 0), "dry_run must be TRUE or FALSE, not 0", fixed = TRUE)
  expect_error(use_rcppspool(dir, dry_run = c(TRUE, FALSE)), "not an object of class logical and length 2",
               fixed = TRUE)
  # A folder whose DESCRIPTION is not one.
  writeLines(c("this is not", "a DESCRIPTION"), file.path(empty, "DESCRIPTION"))
  expect_error(use_rcppspool(empty), "cannot read", fixed = TRUE)
})

test_that("the diff is a shortest edit script that turns the old lines into the new", {
  line_diff <- getFromNamespace("line_diff", "RcppSpool")
  expect_identical(line_diff(c("a", "b", "c"), c("a", "x", "c")), c("=", "-", "+", "="))
  expect_identical(line_diff(character(), c("a", "b")), c("+", "+"))
  expect_identical(line_diff(c("a", "b"), character()), c("-", "-"))
  expect_identical(line_diff(c("a", "b"), c("a", "b")), c("=", "="))
  lcs <- function(x, y) {  # the length of a longest common subsequence
    m <- matrix(0L, length(x) + 1L, length(y) + 1L)
    for (p in seq_along(x)) for (q in seq_along(y))
      m[p + 1L, q + 1L] <- if (x[p] == y[q]) m[p, q] + 1L else max(m[p, q + 1L], m[p + 1L, q])
    m[length(x) + 1L, length(y) + 1L]
  }
  set.seed(1)
  bad <- character()
  for (i in 1:200) {
    a <- sample(letters[1:4], sample(0:12, 1), replace = TRUE)
    b <- sample(letters[1:4], sample(0:12, 1), replace = TRUE)
    ops <- line_diff(a, b)
    # Replaying the script on a gives b, keeping a longest common subsequence.
    ia <- cumsum(ops != "+")
    ib <- cumsum(ops != "-")
    ok <- sum(ops != "+") == length(a) && sum(ops != "-") == length(b) &&
      all(a[ia[ops == "="]] == b[ib[ops == "="]]) && sum(ops == "=") == lcs(a, b)
    if (!ok) bad <- c(bad, paste(paste(a, collapse = ""), "->", paste(b, collapse = ""), ":",
                                 paste(ops, collapse = "")))
  }
  expect_identical(bad, character())
})
