#' RcppSpool: R-friendly, fast work-stealing threads for C++
#'
#' RcppSpool is a C++17 library for the C++ code of R packages: a
#' work-stealing thread pool, parallel loops and reductions, task groups and an
#' `async()` that scales to recursive task parallelism. `Rcout`/`Rcerr`,
#' progress bars, user interrupts and exceptions work from any thread; forked
#' children never hang; only the cores the process may use are used. Packages
#' include its headers, and every package of an R session shares one runtime
#' (its workers, output queue and interrupt), compiled once in RcppSpool's
#' shared library (see `vignette("design")`).
#'
#' Use it from a package with `LinkingTo: RcppSpool (>= x)` and
#' `Imports: RcppSpool (>= x)`, x the version you build against (see
#' [LdFlags()] and [use_rcppspool()]), from
#' `Rcpp::sourceCpp()` with `// [[Rcpp::depends(RcppSpool)]]`, or from
#' `cpp11::cpp_source()` with `[[cpp11::linking_to("RcppSpool")]]`, and
#' `#include <RcppSpool.h>`. See `vignette("RcppSpool")`.
#'
#' @keywords internal
#' @useDynLib RcppSpool, .registration = TRUE
#' @importFrom Rcpp sourceCpp
"_PACKAGE"
