#!/usr/bin/env bash
# Installs everything the build, tests, benchmarks and demo need.
# As root with apt: Debian's prebuilt r-cran-* and -dev packages (fast).
# Otherwise, or for what apt lacks: install.packages() from CRAN into the user library.
# A second run only checks and returns quickly.
set -euo pipefail

apt_pkgs=(cmake libgtest-dev libtbb-dev pandoc qpdf
          r-cran-rcpp r-cran-rcppparallel r-cran-cpp11 r-cran-parallelly r-cran-future
          r-cran-future.apply r-cran-knitr r-cran-rmarkdown r-cran-testthat r-cran-callr
          r-cran-processx r-cran-ps r-cran-roxygen2 r-cran-markdown)
# R packages that must be importable afterwards (RcppThread is only on CRAN).
r_pkgs=(Rcpp RcppParallel cpp11 parallelly future future.apply knitr rmarkdown testthat
        callr processx ps roxygen2 RcppThread)

missing_apt=()
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  for p in "${apt_pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing_apt+=("$p")
  done
  if [ ${#missing_apt[@]} -gt 0 ]; then
    echo "install-deps: apt-get install ${missing_apt[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_apt[@]}" >/dev/null 2>&1 ||
        echo "install-deps: some apt packages failed; falling back to CRAN for R packages" >&2
    fi
  fi
fi

Rscript --vanilla - "${r_pkgs[@]}" <<'REOF'
pkgs <- commandArgs(trailingOnly = TRUE)
need <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) {
  lib <- Sys.getenv("R_LIBS_USER")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  .libPaths(c(lib, .libPaths()))
  message("install-deps: install.packages(", paste(need, collapse = ", "), ")")
  options(Ncpus = 2L)
  install.packages(need, lib = lib, repos = "https://cloud.r-project.org", quiet = TRUE)
  still <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still)) stop("install-deps: could not install ", paste(still, collapse = ", "))
}
REOF
echo "install-deps: all dependencies present"
