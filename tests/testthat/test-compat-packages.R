# Real code written for RcppThread: tools/compat-packages.R downloads a few
# CRAN packages that have `LinkingTo: RcppThread`, migrates them mechanically
# to RcppSpool (migrate_package()), installs the original (against RcppThread)
# and the migrated copy (against the RcppSpool under test), runs their
# examples and tests under both, and compares. The migrated packages must pass
# everything the originals pass.
#
# It compiles five packages (twice the first time: the originals are then
# cached in build/compat-cache) and needs the configured CRAN repository, so it
# runs only when RCPPSPOOL_COMPAT=true, as the project's test runner sets it.
# The script also runs the examples of all the packages in one session (the
# row "(together)").

skip_if(!identical(tolower(Sys.getenv("RCPPSPOOL_COMPAT")), "true"),
        "the CRAN packages check runs only with RCPPSPOOL_COMPAT=true (it builds 5 packages: 3-6 minutes)")
skip_if_not_installed("processx")
skip_if_not_installed("RcppThread")

script <- normalizePath(test_path("..", "..", "tools", "compat-packages.R"), mustWork = FALSE)
skip_if(!file.exists(script), "tools/compat-packages.R is not here (the tests run outside the source tree)")

test_that("CRAN packages migrated from RcppThread pass what the originals pass", {
  lib <- dirname(find.package("RcppSpool"))
  results <- tempfile(fileext = ".csv")
  # Rscript without --vanilla (unlike run_child_r()): the child must see the
  # repository configured in the site profile.
  res <- processx::run(
    file.path(R.home("bin"), "Rscript"), c(script, lib),
    env = c("current", R_LIBS = child_libpaths(), RCPPSPOOL_COMPAT_RESULTS = results),
    error_on_status = FALSE, timeout = 1500
  )
  out <- paste(utils::tail(strsplit(paste0(res$stdout, res$stderr), "\n")[[1]], 60), collapse = "\n")
  if (isTRUE(res$timeout)) {
    fail(paste0("tools/compat-packages.R did not finish in 25 minutes:\n", out))
    return(invisible())
  }
  if (identical(res$status, 2L))
    skip(paste0("nothing could be compared (no network, or RcppThread missing):\n", out))

  if (!file.exists(results)) {
    fail(paste0("tools/compat-packages.R ended (status ", res$status, ") without results:\n", out))
    return(invisible())
  }
  tab <- utils::read.csv(results, stringsAsFactors = FALSE)
  # A copy for the developer (make test leaves it in build/results/).
  kept <- file.path(dirname(dirname(script)), "build", "results")
  if (dir.exists(kept)) file.copy(results, file.path(kept, "compat-packages.csv"), overwrite = TRUE)
  compared <- tab[tab$verdict %in% c("ok", "REGRESSION"), ]
  expect_gt(nrow(compared), 0)
  for (i in seq_len(nrow(compared))) {
    r <- compared[i, ]
    info <- paste0(r$package, " ", r$version, ": ", r$details, "\n--- the script's output ---\n", out)
    expect_identical(r$verdict, "ok", info = info)
    expect_gte(r$mig_ex_pass, r$orig_ex_pass)   # examples (Rd pages) that run without error
    expect_gte(r$mig_t_pass, r$orig_t_pass)     # test expectations that pass
  }
  expect_identical(res$status, 0L, info = "the exit status of tools/compat-packages.R")
})
