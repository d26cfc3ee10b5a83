#' RcppSpool: R-friendly, fast work-stealing threads for C++
#'
#' RcppSpool is a header-only C++17 library for the C++ code of R packages: a
#' work-stealing thread pool, parallel loops and reductions, task groups and an
#' `async()` that scales to recursive task parallelism. `Rcout`/`Rcerr`,
#' progress bars, user interrupts and exceptions work from any thread; forked
#' children never hang; only the cores the process may use are used.
#'
#' Use it from a package with `LinkingTo: RcppSpool` (see [LdFlags()]), from
#' `Rcpp::sourceCpp()` with `// [[Rcpp::depends(RcppSpool)]]`, or from
#' `cpp11::cpp_source()` with `[[cpp11::linking_to("RcppSpool")]]`, and
#' `#include <RcppSpool.h>`. See `vignette("RcppSpool")`.
#'
#' @keywords internal
#' @useDynLib RcppSpool, .registration = TRUE
#' @importFrom Rcpp sourceCpp
"_PACKAGE"
