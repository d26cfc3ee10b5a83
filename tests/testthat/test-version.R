# Versions (inst/include/RcppSpool/version.h, client/api.h): the headers'
# version is the package's, and a package built against headers newer than
# the installed RcppSpool (a later version, or a table version the runtime
# does not have) fails at its first call with an error that names both
# versions: the one it was built with and the one installed.

version_macros <- function(include) {
  lines <- readLines(file.path(include, "RcppSpool", "version.h"))
  get <- function(name) {
    hit <- grep(paste0("^#define ", name, " "), lines, value = TRUE)
    expect_length(hit, 1L)
    trimws(sub(paste0("^#define ", name, " "), "", hit))
  }
  list(major = get("RCPPSPOOL_VERSION_MAJOR"), minor = get("RCPPSPOOL_VERSION_MINOR"),
       patch = get("RCPPSPOOL_VERSION_PATCH"), string = gsub("\"", "", get("RCPPSPOOL_VERSION_STRING")))
}

test_that("the headers' version is DESCRIPTION's Version", {
  include <- base::system.file("include", package = "RcppSpool")
  skip_if_not(nzchar(include), "RcppSpool's headers are not installed")
  v <- version_macros(include)
  desc <- as.character(utils::packageVersion("RcppSpool", lib.loc = dirname(system.file(package = "RcppSpool"))))
  expect_identical(v$string, desc)
  expect_identical(paste(v$major, v$minor, v$patch, sep = "."), desc)
  # The source tree's DESCRIPTION too, where the tests run from it.
  src <- test_path("..", "..", "DESCRIPTION")
  if (file.exists(src) && identical(unname(read.dcf(src)[1, "Package"]), "RcppSpool"))
    expect_identical(unname(read.dcf(src)[1, "Version"]), v$string)
})

test_that("a package built against newer headers names both versions in its error", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if_not_installed("callr")
  include <- base::system.file("include", package = "RcppSpool")
  skip_if_not(nzchar(include), "RcppSpool's headers are not installed")
  installed <- as.character(utils::packageVersion("RcppSpool", lib.loc = dirname(system.file(package = "RcppSpool"))))

  dir <- tempfile("newer")
  lib <- file.path(dir, "lib")
  dir.create(lib, recursive = TRUE)
  # A copy of the installed headers with one line changed: what a package
  # built against a later release has.
  headers <- function(name, file, from, to) {
    inc <- file.path(dir, name)
    dir.create(inc)
    file.copy(include, inc, recursive = TRUE)
    inc <- file.path(inc, "include")
    path <- file.path(inc, "RcppSpool", file)
    x <- readLines(path)
    hit <- grep(from, x, fixed = TRUE)
    stopifnot(length(hit) == 1L)
    x[hit] <- sub(from, to, x[hit], fixed = TRUE)
    writeLines(x, path)
    inc
  }
  v <- version_macros(include)
  newer <- headers("include-newer", "version.h", paste0("#define RCPPSPOOL_VERSION_MINOR ", v$minor),
                   "#define RCPPSPOOL_VERSION_MINOR 999")
  x <- readLines(file.path(newer, "RcppSpool", "version.h"))
  x <- sub(paste0("\"", v$string, "\""), paste0("\"", v$major, ".999.", v$patch, "\""), x, fixed = TRUE)
  writeLines(x, file.path(newer, "RcppSpool", "version.h"))
  table <- headers("include-table", "table/api_table.h", "constexpr std::uint32_t kApiVersion = ",
                   "constexpr std::uint32_t kApiVersion = 99; //")
  client <- function(name, inc) {
    pkg <- file.path(dir, name)
    dir.create(file.path(pkg, "src"), recursive = TRUE)
    dir.create(file.path(pkg, "R"))
    writeLines(c(paste("Package:", name), "Version: 0.1", "Title: Throwaway client of RcppSpool",
                 "Description: Built by RcppSpool's tests.", "License: MIT",
                 "Imports: Rcpp, RcppSpool", "LinkingTo: Rcpp, RcppSpool"), file.path(pkg, "DESCRIPTION"))
    writeLines(c(sprintf("useDynLib(%s, .registration = TRUE)", name), "importFrom(Rcpp, evalCpp)",
                 "import(RcppSpool)", "export(threads)"), file.path(pkg, "NAMESPACE"))
    writeLines(c("CXX_STD = CXX17", paste0("PKG_CPPFLAGS = -I", inc)), file.path(pkg, "src", "Makevars"))
    writeLines(c("#include <Rcpp.h>", "#include <RcppSpool.h>", "// [[Rcpp::export]]",
                 "double threads() { return static_cast<double>(RcppSpool::defaultThreads()); }"),
               file.path(pkg, "src", "client.cpp"))
    Rcpp::compileAttributes(pkg)
    install_client(pkg, lib, file.path(dir, paste0(name, ".log")))
  }
  client("spoolNewer", newer)
  client("spoolTable", table)

  first_call <- function(name) {
    callr::r(function(name, lib) {
      .libPaths(c(lib, .libPaths()))
      ns <- loadNamespace(name, lib.loc = lib)
      tryCatch({ ns$threads(); "no error" }, error = function(e) conditionMessage(e))
    }, list(name, lib), libpath = c(lib, .libPaths()))
  }
  msg <- first_call("spoolNewer")
  expect_match(msg, paste0("built with RcppSpool ", v$major, ".999.", v$patch), fixed = TRUE)
  expect_match(msg, paste0("the installed RcppSpool is ", installed, ", older than that"), fixed = TRUE)
  expect_match(msg, paste0("install RcppSpool ", v$major, ".999.", v$patch, " or later"), fixed = TRUE)

  msg <- first_call("spoolTable")
  expect_match(msg, paste0("built with RcppSpool ", v$string, " (runtime table version 99)"), fixed = TRUE)
  expect_match(msg, paste0("the installed RcppSpool is ", installed), fixed = TRUE)
  unlink(dir, recursive = TRUE)
})
