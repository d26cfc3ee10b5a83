// RcppParallel's four documented examples (the Rcpp Gallery's "Parallel
// Vector Sum", "Parallel Matrix Transformation" (square root), "Parallel
// Distance Matrix Calculation" (Jensen-Shannon) and "Parallel Inner
// Product"), written as RcppParallel's documentation writes them, plus a
// reduce with an explicit grain size and thread count. test-rcppparallel-compat.R
// compiles this file as it is (against RcppParallel) and migrated
// mechanically (against RcppSpool), and compares the results.

// [[Rcpp::depends(RcppParallel)]]
#include <Rcpp.h>
#include <RcppParallel.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace Rcpp;
using namespace RcppParallel;

// --- parallel vector sum ---------------------------------------------------

struct Sum : public Worker {
    const RVector<double> input;
    double value;

    Sum(const NumericVector input) : input(input), value(0) {}
    Sum(const Sum& sum, Split) : input(sum.input), value(0) {}

    void operator()(std::size_t begin, std::size_t end) {
        value += std::accumulate(input.begin() + begin, input.begin() + end, 0.0);
    }

    void join(const Sum& rhs) { value += rhs.value; }
};

// [[Rcpp::export]]
double parallelVectorSum(NumericVector x) {
    Sum sum(x);
    parallelReduce(0, x.length(), sum);
    return sum.value;
}

// [[Rcpp::export]]
double parallelVectorSumGrain(NumericVector x, int grainSize, int numThreads) {
    Sum sum(x);
    RcppParallel::parallelReduce(0, x.length(), sum, grainSize, numThreads);
    return sum.value;
}

// --- matrix square root ----------------------------------------------------

struct SquareRoot : public Worker {
    const RMatrix<double> input;
    RMatrix<double> output;

    SquareRoot(const NumericMatrix input, NumericMatrix output) : input(input), output(output) {}

    void operator()(std::size_t begin, std::size_t end) {
        std::transform(input.begin() + begin, input.begin() + end, output.begin() + begin, ::sqrt);
    }
};

// [[Rcpp::export]]
NumericMatrix parallelMatrixSqrt(NumericMatrix x) {
    NumericMatrix output(x.nrow(), x.ncol());
    SquareRoot squareRoot(x, output);
    parallelFor(0, x.length(), squareRoot);
    return output;
}

// --- distance matrix (Jensen-Shannon) --------------------------------------

template <typename InputIterator1, typename InputIterator2>
inline double kl_divergence(InputIterator1 begin1, InputIterator1 end1, InputIterator2 begin2) {
    double rval = 0;
    InputIterator1 it1 = begin1;
    InputIterator2 it2 = begin2;
    while (it1 != end1) {
        double d1 = *it1++;
        double d2 = *it2++;
        if (d1 > 0 && d2 > 0) rval += std::log(d1 / d2) * d1;
    }
    return rval;
}

inline double average(double val1, double val2) { return (val1 + val2) / 2.0; }

struct JsDistance : public Worker {
    const RMatrix<double> mat;
    RMatrix<double> rmat;

    JsDistance(const NumericMatrix mat, NumericMatrix rmat) : mat(mat), rmat(rmat) {}

    void operator()(std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; i++) {
            for (std::size_t j = 0; j < i; j++) {
                RMatrix<double>::Row row1 = mat.row(i);
                RMatrix<double>::Row row2 = mat.row(j);
                std::vector<double> avg(row1.length());
                std::transform(row1.begin(), row1.end(), row2.begin(), avg.begin(), average);
                double d1 = kl_divergence(row1.begin(), row1.end(), avg.begin());
                double d2 = kl_divergence(row2.begin(), row2.end(), avg.begin());
                rmat(i, j) = std::sqrt(.5 * (d1 + d2));
                rmat(j, i) = rmat(i, j);
            }
        }
    }
};

// [[Rcpp::export]]
NumericMatrix rcpp_parallel_js_distance(NumericMatrix mat) {
    NumericMatrix rmat(mat.nrow(), mat.nrow());
    JsDistance jsDistance(mat, rmat);
    parallelFor(0, mat.nrow(), jsDistance);
    return rmat;
}

// --- inner product ---------------------------------------------------------

struct InnerProduct : public Worker {
    const RVector<double> x;
    const RVector<double> y;
    double product;

    InnerProduct(const NumericVector x, const NumericVector y) : x(x), y(y), product(0) {}
    InnerProduct(const InnerProduct& innerProduct, Split)
        : x(innerProduct.x), y(innerProduct.y), product(0) {}

    void operator()(std::size_t begin, std::size_t end) {
        product += std::inner_product(x.begin() + begin, x.begin() + end, y.begin() + begin, 0.0);
    }

    void join(const InnerProduct& rhs) { product += rhs.product; }
};

// [[Rcpp::export]]
double parallelInnerProduct(NumericVector x, NumericVector y) {
    InnerProduct innerProduct(x, y);
    parallelReduce(0, x.length(), innerProduct);
    return innerProduct.product;
}
