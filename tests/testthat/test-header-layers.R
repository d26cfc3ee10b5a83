# The headers' layers (vignette("design")): the engine, the lowest floor,
# includes nothing of the client, the host or the runtime; the table's fixed
# types (table/) include nothing but themselves. Checked on the installed
# headers, as a client compiles them.

# The project headers `dir`'s files include ("..." includes), as paths
# relative to inst/include/RcppSpool, by including file.
quoted_includes <- function(dir) {
  root <- system.file("include", "RcppSpool", package = "RcppSpool")
  files <- list.files(file.path(root, dir), pattern = "\\.h$", full.names = TRUE)
  expect_gt(length(files), 0L)
  out <- list()
  for (f in files) {
    lines <- readLines(f, warn = FALSE)
    inc <- sub('^\\s*#\\s*include\\s+"([^"]+)".*$', "\\1", grep('^\\s*#\\s*include\\s+"', lines, value = TRUE))
    # normalised against the including file's folder, without the file system
    out[[basename(f)]] <- vapply(inc, function(i) {
      parts <- c(strsplit(dir, "/")[[1]], strsplit(i, "/")[[1]])
      kept <- character()
      for (p in parts) if (p == "..") kept <- head(kept, -1L) else if (p != ".") kept <- c(kept, p)
      paste(kept, collapse = "/")
    }, character(1), USE.NAMES = FALSE)
  }
  out
}

test_that("the engine includes only the engine, the table's types and abi.h", {
  inc <- quoted_includes("engine")
  for (f in names(inc)) {
    bad <- inc[[f]][!grepl("^(engine|table)/", inc[[f]]) & inc[[f]] != "abi.h"]
    expect_identical(bad, character(), info = paste0("engine/", f))
  }
  # the task record the engine queues is the table's
  expect_true("table/task_unit.h" %in% inc[["task.h"]])
})

test_that("the table's types include only themselves and abi.h", {
  inc <- quoted_includes("table")
  expect_setequal(names(inc), c("api_table.h", "task_unit.h"))
  for (f in names(inc)) {
    bad <- inc[[f]][!grepl("^table/", inc[[f]]) & inc[[f]] != "abi.h"]
    expect_identical(bad, character(), info = paste0("table/", f))
  }
})
