# Used by test-runtime.R and test-output-matrix.R.

# The headers kept in tests/testthat/fixtures (headers-<abi>.tar.gz, the
# inst/include of an earlier commit), unpacked into `dir`/`name`: their
# include folder.
fixture_headers <- function(dir, name, abi) {
  inc <- file.path(dir, name)
  dir.create(inc)
  fixture <- test_path("fixtures", paste0("headers-", abi, ".tar.gz"))
  if (!file.exists(fixture)) stop("the headers of ", abi, " are missing: ", normalizePath(fixture, mustWork = FALSE))
  if (utils::untar(fixture, exdir = inc) != 0) stop("could not unpack ", fixture)
  inc <- file.path(inc, "include")
  stopifnot(file.exists(file.path(inc, "RcppSpool.h")))
  inc
}

# The headers of ABI 12 (inst/include of f6b1399, the last commit before ABI
# 13): a package built against them reaches the runtime through its table
# (version 5) and keeps a TaskGroup's state in the group itself, 256 bytes
# whose first word the runtime wrote; since table version 6 the runtime
# makes the state elsewhere and writes only that word (its address).
abi12_headers <- function(dir, name) fixture_headers(dir, name, "abi12")

# The headers of ABI 10 (inst/include of the last commit before ABI 11, kept
# in tests/testthat/fixtures): a package built against them compiles the
# engine inline and, finding no runtime of its ABI version, borrows the
# runtime's workers (engine/thread_lender.h). With `lender_version`, it
# asks for a ThreadLender table of that version, which the installed runtime
# does not have: what a package built against a release that needs more of
# the lender than the installed RcppSpool lends has.
abi10_headers <- function(dir, name, lender_version = NULL) {
  inc <- fixture_headers(dir, name, "abi10")
  if (!is.null(lender_version)) {
    path <- file.path(inc, "RcppSpool", "host", "r_runtime.h")
    x <- readLines(path)
    hit <- grep("get(1));", x, fixed = TRUE)
    stopifnot(length(hit) == 1)
    x[hit] <- sub("get(1));", sprintf("get(%d));", lender_version), x[hit], fixed = TRUE)
    writeLines(x, path)
  }
  inc
}
