// kendall_matrix(): Kendall's tau-b for all pairs of columns, by Knight's
// O(n log n) algorithm (inst/bench/kernels.h, shared with benchmark()), in
// parallel with RcppSpool::parallelFor.
//
// The parallel loop is the paper's unbalanced nested loop: the outer loop over
// columns i runs in parallel, one iteration (task) per i, and each iteration
// computes tau(i, j) for every j > i serially after sorting column i once. Row
// i thus costs about d - i pair computations; RcppSpool's loop splits the range
// of i adaptively, so the threads that finish the cheap rows take over parts of
// the expensive ones.
#pragma once

#include "r_values.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "../inst/bench/kernels.h"

namespace {

//! Pair (i, j) with missing values in either column, on its complete rows.
//! NaN when fewer than 2 rows are complete; `constant` is set when there are
//! enough rows but one column is constant on them.
double pairwiseTau(const double* xi, const double* xj, std::ptrdiff_t n, spoolbench::KendallScratch& s,
                   bool& constant)
{
    std::vector<double> a, b;
    a.reserve(static_cast<std::size_t>(n));
    b.reserve(static_cast<std::size_t>(n));
    for (std::ptrdiff_t k = 0; k < n; ++k) {
        if (std::isnan(xi[k]) || std::isnan(xj[k])) continue;
        a.push_back(xi[k]);
        b.push_back(xj[k]);
    }
    const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(a.size());
    if (m < 2) return NA_REAL;
    spoolbench::KendallSorted sorted;
    sorted.prepare(a.data(), m);
    const double tau = spoolbench::kendallTau(sorted, b.data(), m, s);
    if (std::isnan(tau)) {
        constant = true;
        return NA_REAL;
    }
    return tau;
}

// The entry point behind kendall_matrix(), which checks the input first.
//   x         a double matrix
//   pairwise  true: a pair with missing values uses its complete rows (and the
//             diagonal is the column against itself there), as
//             use = "pairwise.complete.obs"; false: such pairs are NA and the
//             diagonal is 1, as use = "everything"
//   nThreads  threads of RcppSpool::parallelFor (0 or 1: serial)
// Returns list(tau = the d x d matrix, constant = whether some entry is NA
// because a column was constant, for cor()'s "standard deviation is zero").
// kendall_matrix() has checked x (a double matrix), pairwise (TRUE or FALSE)
// and nThreads (a count) already.
SEXP spoolKendall(SEXP x, SEXP pairwiseFlag, SEXP nThreadsValue)
{
    const std::ptrdiff_t n = Rf_nrows(x), d = Rf_ncols(x);
    const double* data = REAL(x);
    const bool pairwise = Rf_asLogical(pairwiseFlag) == TRUE;
    const int nThreads = Rf_asInteger(nThreadsValue);
    SEXP tau = PROTECT(Rf_allocMatrix(REALSXP, static_cast<int>(d), static_cast<int>(d)));
    double* out = REAL(tau);
    SEXP result = native::callFromR([&] {

    std::vector<char> hasNA(static_cast<std::size_t>(d), 0);
    for (std::ptrdiff_t j = 0; j < d; ++j) {
        const double* c = data + j * n;
        for (std::ptrdiff_t k = 0; k < n; ++k) {
            if (std::isnan(c[k])) {
                hasNA[j] = 1;
                break;
            }
        }
    }

    std::atomic<bool> constant{false};
    auto row = [&](std::ptrdiff_t i) {
        const double* xi = data + i * n;
        spoolbench::KendallScratch s;
        bool sawConstant = false;
        spoolbench::KendallSorted sorted;
        if (!hasNA[i]) sorted.prepare(xi, n);
        // The diagonal: 1, as cor() reports it, except with pairwise
        // deletion, where it is the column against itself on its complete
        // rows (NA when those are fewer than 2 or all equal).
        if (pairwise && hasNA[i]) {
            out[i + i * d] = pairwiseTau(xi, xi, n, s, sawConstant);
        } else if (pairwise && sorted.n1 == static_cast<std::int64_t>(n) * (n - 1) / 2) {
            sawConstant = true;  // every pair tied: a constant column
            out[i + i * d] = NA_REAL;
        } else {
            out[i + i * d] = 1.0;
        }
        for (std::ptrdiff_t j = i + 1; j < d; ++j) {
            const double* xj = data + j * n;
            double t;
            if (!hasNA[i] && !hasNA[j]) {
                t = spoolbench::kendallTau(sorted, xj, n, s);
                if (std::isnan(t)) {
                    sawConstant = true;
                    t = NA_REAL;
                }
            } else if (pairwise) {
                t = pairwiseTau(xi, xj, n, s, sawConstant);
            } else {
                t = NA_REAL;
            }
            out[i + j * d] = t;
            out[j + i * d] = t;
        }
        if (sawConstant) constant.store(true, std::memory_order_relaxed);
    };
    RcppSpool::parallelFor(0, d, row, static_cast<std::size_t>(std::max(nThreads, 0)));
    return native::namedList({"tau", "constant"}, [&](std::size_t i) {
        return i == 0 ? tau : Rf_ScalarLogical(constant.load());
    });
    });
    UNPROTECT(1);
    return result;
}

}  // namespace
