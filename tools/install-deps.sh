#!/usr/bin/env bash
# Installs everything the build, tests, benchmarks and demo need.
# As root with apt: Debian's prebuilt r-cran-* and -dev packages (fast).
# Otherwise, or for what apt lacks: install.packages() from R's configured
# repository (getOption("repos")) into the user library. RcppThread's source
# tarball goes to .deps/ (for the tests that build it).
# A second run only checks and returns quickly.
set -euo pipefail

# clang..wine64: the C++ suites' extra toolchains (clang++ with libc++, and
# mingw-w64 whose Windows test programs run under wine).
apt_pkgs=(cmake libgtest-dev libtbb-dev pandoc qpdf
          clang libc++-dev libc++abi-dev g++-mingw-w64-x86-64-posix wine wine64
          r-cran-rcpp r-cran-rcppparallel r-cran-cpp11 r-cran-parallelly r-cran-future
          r-cran-future.apply r-cran-knitr r-cran-rmarkdown r-cran-testthat r-cran-callr
          r-cran-processx r-cran-ps r-cran-roxygen2 r-cran-markdown r-cran-pkgdown)
# R packages that must be importable afterwards (RcppThread is only on CRAN).
r_pkgs=(Rcpp RcppParallel cpp11 parallelly future future.apply knitr rmarkdown testthat
        callr processx ps roxygen2 pkgdown RcppThread)

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

# R's own repository settings (getOption("repos"), e.g. from Rprofile.site) are
# used, so Rscript runs without --vanilla (which would skip the site profile).
# .deps/ keeps RcppThread's source tarball for the tests that compare with it.
deps_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps"
Rscript --no-save --no-restore - "$deps_dir" "${r_pkgs[@]}" <<'REOF'
args <- commandArgs(trailingOnly = TRUE)
deps_dir <- args[1]
pkgs <- args[-1]
# The configured repositories, or a clear error: asked only when something
# must be fetched, so a second run needs neither a network nor a repository.
configured_repos <- function() {
  repos <- getOption("repos")
  repos <- repos[!is.na(repos) & nzchar(repos) & repos != "@CRAN@"]
  if (!length(repos))
    stop("install-deps: no R package repository is configured (getOption(\"repos\") is ",
         paste(deparse(getOption("repos")), collapse = ""), "). Set one, e.g. in ",
         file.path(R.home("etc"), "Rprofile.site"), " or ~/.Rprofile:\n",
         "  options(repos = c(CRAN = \"https://<your CRAN mirror>\"))", call. = FALSE)
  repos
}
need <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
if (length(need)) {
  repos <- configured_repos()
  lib <- Sys.getenv("R_LIBS_USER")
  dir.create(lib, recursive = TRUE, showWarnings = FALSE)
  .libPaths(c(lib, .libPaths()))
  message("install-deps: install.packages(", paste(need, collapse = ", "), ") from ",
          paste(repos, collapse = ", "))
  options(Ncpus = 2L)
  install.packages(need, lib = lib, repos = repos, quiet = TRUE)
  still <- need[!vapply(need, requireNamespace, logical(1), quietly = TRUE)]
  if (length(still)) stop("install-deps: could not install ", paste(still, collapse = ", "), call. = FALSE)
}
if (!length(Sys.glob(file.path(deps_dir, "RcppThread_*.tar.gz")))) {
  repos <- configured_repos()
  dir.create(deps_dir, recursive = TRUE, showWarnings = FALSE)
  message("install-deps: downloading RcppThread's source package into ", deps_dir)
  got <- download.packages("RcppThread", destdir = deps_dir, repos = repos, type = "source", quiet = TRUE)
  if (!NROW(got) || !file.exists(got[1, 2]))
    stop("install-deps: could not download RcppThread's source package from ", paste(repos, collapse = ", "), call. = FALSE)
}
REOF
echo "install-deps: all dependencies present"
