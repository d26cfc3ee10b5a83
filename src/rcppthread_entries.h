// RcppThread's internal testGlobal(), which RcppThread's own test suite calls
// first (RcppThread:::testGlobal()): a loop on the global pool. It is here so
// that suite runs against RcppSpool with the names swapped (see
// tests/testthat/test-rcppthread-suite.R).
#pragma once

#include "r_values.h"

namespace {

SEXP testGlobal()
{
    return native::callFromR([] {
        RcppSpool::parallelFor(0, 100, [](std::ptrdiff_t) {});
        return Rf_ScalarInteger(1);
    });
}

}  // namespace
