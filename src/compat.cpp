// RcppThread's internal testGlobal(), which RcppThread's own test suite calls
// first (RcppThread:::testGlobal()): a loop on the global pool. It is here so
// that suite runs against RcppSpool with the names swapped (see
// tests/testthat/test-rcppthread-suite.R).
#include <Rcpp.h>
#include <RcppSpool.h>

// [[Rcpp::export(testGlobal, rng = false)]]
int testGlobal()
{
    RcppSpool::parallelFor(0, 100, [](std::ptrdiff_t) {});
    return 1;
}
