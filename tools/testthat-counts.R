# Runs tests/testthat against the installed package and writes "passed failed"
# to the file named by the first argument (skips are neither), and the failed
# tests' names, a line each, to the file named by the second.
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
library(testthat)
Sys.setenv(NOT_CRAN = "true")  # run the slow, real-process tests too
res <- testthat::test_dir("tests/testthat", package = "RcppSpool", load_package = "installed",
                          reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                          stop_on_failure = FALSE)
df <- as.data.frame(res)
failed <- sum(df$failed) + sum(df$error)
passed <- sum(df$passed)
cat(sprintf("== r: %d expectations passed, %d failed, %d skipped\n", passed, failed, sum(df$skipped)))
bad <- df[df$failed > 0 | df$error, , drop = FALSE]
writeLines(sprintf("%s: %s", bad$file, bad$test), args[2])
writeLines(paste(passed, failed), out)
