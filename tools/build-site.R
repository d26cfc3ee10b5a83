# Builds the pkgdown site (_pkgdown.yml) into site/, offline, from the
# installed RcppSpool (make site installs it into .Rlib first, and the
# articles run against it). Fails, with each warning shown, if pkgdown warns.
#   Rscript tools/build-site.R
options(pkgdown.internet = FALSE)  # no CRAN or Bioconductor look-ups
if (!requireNamespace("pkgdown", quietly = TRUE)) {
  stop("pkgdown is not installed: tools/install-deps.sh installs it (Debian's r-cran-pkgdown)", call. = FALSE)
}
# The C++ API reference must match the headers (tools/cpp-reference.R).
ref <- system2(file.path(R.home("bin"), "Rscript"), c("tools/cpp-reference.R", "--check"))
if (ref != 0) stop("the C++ API reference is out of date or incomplete (see above)", call. = FALSE)
warnings_seen <- character()
t0 <- proc.time()[["elapsed"]]
withCallingHandlers(
  pkgdown::build_site(".", install = FALSE, new_process = FALSE, preview = FALSE, devel = FALSE),
  warning = function(w) {
    warnings_seen <<- c(warnings_seen, conditionMessage(w))
  }
)
if (length(warnings_seen)) {
  message("build-site: ", length(warnings_seen), " warning(s):\n  ", paste(warnings_seen, collapse = "\n  "))
  quit(status = 1)
}
cat(sprintf("build-site: site/ built with no warnings (%.0f s)\n", proc.time()[["elapsed"]] - t0))
