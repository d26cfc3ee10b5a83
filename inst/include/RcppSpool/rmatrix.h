// RMatrix: a view of an R matrix's memory that worker threads may use.
#pragma once

#include "abi.h"

#include <cstddef>
#include <iterator>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! A view of a column-major matrix (an R matrix: Rcpp::NumericMatrix,
//! IntegerMatrix, ...), as RcppThread's and RcppParallel's RMatrix.
//!
//! Workers must never call R's API, and Rcpp's matrix classes may (their
//! element access can check bounds or allocate). An RMatrix, made on R's main
//! thread, only holds the data pointer and the dimensions, so any thread may
//! read and write elements through it. It owns nothing: the R object must
//! stay alive (and must not be reallocated) while the view is used. Writes
//! to distinct elements from different threads are safe; to the same
//! element, as for any memory, they are not.
//!
//!     Rcpp::NumericMatrix m(n, k);
//!     RcppSpool::RMatrix<double> view(m);
//!     RcppSpool::parallelFor(0, n, [&](ptrdiff_t i) {
//!         for (auto& x : view.row(i)) x = i;    // row i, column by column
//!     });
template <typename T>
class RMatrix {
public:
    //! One row: a strided view (consecutive elements are nrow() apart).
    class Row {
    public:
        //! A random-access iterator over a row's elements (V is T or const T).
        template <typename V>
        class row_iterator {
        public:
            using iterator_category = std::random_access_iterator_tag;
            using value_type = V;
            using difference_type = std::ptrdiff_t;
            using pointer = V*;
            using reference = V&;

            //! The element `i` of `row`.
            row_iterator(Row& row, std::size_t i) : start_(row.start_), stride_(row.parent_.nrow()), index_(i) {}
            row_iterator(pointer start, std::size_t stride, std::size_t index)
                : start_(start), stride_(stride), index_(index)
            {}

            row_iterator& operator++() { ++index_; return *this; }
            row_iterator operator++(int) { row_iterator t(*this); ++index_; return t; }
            row_iterator& operator--() { --index_; return *this; }
            row_iterator operator--(int) { row_iterator t(*this); --index_; return t; }
            row_iterator operator+(difference_type n) const { return row_iterator(start_, stride_, index_ + n); }
            row_iterator operator-(difference_type n) const { return row_iterator(start_, stride_, index_ - n); }
            difference_type operator-(const row_iterator& o) const
            {
                return static_cast<difference_type>(index_) - static_cast<difference_type>(o.index_);
            }
            row_iterator& operator+=(difference_type n) { index_ += n; return *this; }
            row_iterator& operator-=(difference_type n) { index_ -= n; return *this; }
            bool operator==(const row_iterator& o) const { return index_ == o.index_; }
            bool operator!=(const row_iterator& o) const { return index_ != o.index_; }
            bool operator<(const row_iterator& o) const { return index_ < o.index_; }
            bool operator>(const row_iterator& o) const { return index_ > o.index_; }
            bool operator<=(const row_iterator& o) const { return index_ <= o.index_; }
            bool operator>=(const row_iterator& o) const { return index_ >= o.index_; }
            reference operator*() const { return start_[index_ * stride_]; }
            pointer operator->() const { return &start_[index_ * stride_]; }
            reference operator[](difference_type i) const { return start_[(index_ + i) * stride_]; }

        private:
            pointer start_;
            std::size_t stride_;
            std::size_t index_;
        };
        //! The row's iterators (strided).
        using iterator = row_iterator<T>;
        //! Its const iterators.
        using const_iterator = row_iterator<const T>;

        //! Row `i` of `parent`.
        Row(RMatrix& parent, std::size_t i) : parent_(parent), start_(parent.begin() + i) {}
        Row(const Row& other) = default;

        //! The first element (column 0).
        iterator begin() { return iterator(*this, 0); }
        //! Past the last element.
        iterator end() { return iterator(*this, parent_.ncol()); }
        const_iterator begin() const { return const_iterator(start_, parent_.nrow(), 0); }
        const_iterator end() const { return const_iterator(start_, parent_.nrow(), parent_.ncol()); }
        //! The number of elements: ncol() of the matrix.
        std::size_t length() const { return parent_.ncol(); }
        //! The same as length().
        std::size_t size() const { return parent_.ncol(); }
        //! The element in column `j`.
        T& operator[](std::size_t j) { return start_[j * parent_.nrow()]; }
        const T& operator[](std::size_t j) const { return start_[j * parent_.nrow()]; }

    private:
        RMatrix& parent_;
        T* start_;
    };

    //! One column: contiguous memory.
    class Column {
    public:
        //! The column's iterators (pointers).
        using iterator = T*;
        //! Its const iterators.
        using const_iterator = const T*;

        //! Column `j` of `parent`.
        Column(RMatrix& parent, std::size_t j)
            : begin_(parent.begin() + j * parent.nrow()), end_(begin_ + parent.nrow())
        {}
        Column(const Column& other) = default;
        Column& operator=(const Column& other) = default;

        //! The element in row 0.
        iterator begin() { return begin_; }
        //! Past the last element.
        iterator end() { return end_; }
        const_iterator begin() const { return begin_; }
        const_iterator end() const { return end_; }
        //! The number of elements: nrow() of the matrix.
        std::size_t length() const { return static_cast<std::size_t>(end_ - begin_); }
        //! The same as length().
        std::size_t size() const { return length(); }
        //! The element in row `i`.
        T& operator[](std::size_t i) { return begin_[i]; }
        const T& operator[](std::size_t i) const { return begin_[i]; }

    private:
        T* begin_;
        T* end_;
    };

    //! The matrix's iterators: pointers, in column-major order.
    using iterator = T*;
    //! Its const iterators.
    using const_iterator = const T*;

    //! A view of `source`, any matrix with begin(), nrow() and ncol() (Rcpp's
    //! matrices). Make it on R's main thread.
    template <typename Source>
    explicit RMatrix(const Source& source)
        : data_(const_cast<Source&>(source).begin()),
          nrow_(static_cast<std::size_t>(source.nrow())),
          ncol_(static_cast<std::size_t>(source.ncol()))
    {}
    //! A view of `nrow` x `ncol` elements at `data`, column-major.
    RMatrix(T* data, std::size_t nrow, std::size_t ncol) : data_(data), nrow_(nrow), ncol_(ncol) {}

    //! The first element (row 0, column 0).
    iterator begin() { return data_; }
    //! Past the last element.
    iterator end() { return data_ + length(); }
    const_iterator begin() const { return data_; }
    const_iterator end() const { return data_ + length(); }

    //! nrow() * ncol().
    std::size_t length() const { return nrow_ * ncol_; }
    //! The number of rows.
    std::size_t nrow() const { return nrow_; }
    //! The number of columns.
    std::size_t ncol() const { return ncol_; }

    //! The element in row `i`, column `j`.
    T& operator()(std::size_t i, std::size_t j) { return data_[i + j * nrow_]; }
    const T& operator()(std::size_t i, std::size_t j) const { return data_[i + j * nrow_]; }
    //! The element at `i` in column-major order.
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }

    //! Row `i`, a strided view.
    Row row(std::size_t i) { return Row(*this, i); }
    const Row row(std::size_t i) const { return Row(const_cast<RMatrix&>(*this), i); }
    //! Column `j`, contiguous.
    Column column(std::size_t j) { return Column(*this, j); }
    const Column column(std::size_t j) const { return Column(const_cast<RMatrix&>(*this), j); }

private:
    T* data_;
    std::size_t nrow_;
    std::size_t ncol_;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
