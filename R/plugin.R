#' Linker flags for packages using RcppSpool
#'
#' RcppSpool's headers need the platform's thread library. In a package's
#' `src/Makevars`, write
#' ``PKG_LIBS = `"$(R_HOME)/bin/Rscript" -e "RcppSpool::LdFlags()"` ``
#' (as with RcppThread), or simply `PKG_LIBS = $(SHLIB_PTHREAD_FLAGS)`.
#'
#' @return The flags, invisibly; they are printed (without a newline) so that
#'   the backticks in Makevars pick them up.
#' @export
#' @examples
#' LdFlags()
LdFlags <- function() {
  flags <- if (.Platform$OS.type == "windows") "" else "-pthread"
  cat(flags)
  invisible(flags)
}

# Plugin for Rcpp::sourceCpp(): `// [[Rcpp::depends(RcppSpool)]]`.
#
# It asks for C++17 even when the code also names `Rcpp::plugins(cpp11)`, as
# RcppThread code does: R before 4.3 defaults to C++14, and R CMD SHLIB picks
# the newest standard whose USE_CXX* variable is set.
inlineCxxPlugin <- function(...) {
  settings <- Rcpp::Rcpp.plugin.maker(package = "RcppSpool", libs = LdFlags_quiet())()
  settings$env$USE_CXX17 <- "yes"
  settings
}

LdFlags_quiet <- function() {
  if (.Platform$OS.type == "windows") "" else "-pthread"
}
