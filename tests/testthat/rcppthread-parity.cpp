// RcppThread 2.4.0's names that rcppthread-example.cpp does not use, written
// as RcppThread's users write them: RMatrix with its rows, columns and
// iterators; a progress printer derived from ProgressPrinter; loops with int,
// size_t and ptrdiff_t indices; mainThreadID, RMonitor, RErrPrinter and
// UserInterruptException. test-rcppthread-compat.R compiles it as it is
// against RcppThread and, migrated, against RcppSpool, and compares.
// [[Rcpp::plugins(cpp11)]]
// [[Rcpp::depends(RcppThread)]]
#include <Rcpp.h>
#include <RcppThread.h>

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <numeric>
#include <sstream>
#include <vector>

// As CRAN packages do: their own line, drawn with RcppThread's helpers.
class StepsProgress : public RcppThread::ProgressPrinter {
public:
    StepsProgress(size_t numIt, size_t printEvery) : RcppThread::ProgressPrinter(numIt, printEvery) {}
    void printProgress() override
    {
        // Two threads may both see the count at its end (each increments,
        // then checks): without the lock both print the last line, with
        // RcppThread as with RcppSpool, so the two outputs would differ by chance.
        std::lock_guard<std::mutex> lock(mutex_);
        if (isDone_) return;
        if (it_ == numIt_) isDone_ = true;
        std::ostringstream msg;
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - startTime_).count();
        msg << "\rSteps " << it_ << "/" << numIt_ << " " << (secs >= 0 ? "" : "?") << progressString();
        RcppThread::Rcout << msg.str();
    }
    bool finished() const { return isDone_; }
    std::string time(size_t s) { return formatTime(s); }

private:
    std::mutex mutex_;
};

// [[Rcpp::export]]
Rcpp::List rmatrixViews(Rcpp::NumericMatrix m)
{
    RcppThread::RMatrix<double> view(m);
    const size_t nr = view.nrow(), nc = view.ncol();
    Rcpp::NumericVector rowSums(nr), colMax(nc), rowSorted(nc);
    Rcpp::NumericMatrix doubled(nr, nc);
    RcppThread::RMatrix<double> out(doubled);
    RcppThread::parallelFor(0, static_cast<int>(nr), [&](int i) {
        RcppThread::RMatrix<double>::Row row = view.row(i);
        double s = 0;
        for (auto it = row.begin(); it != row.end(); ++it) s += *it;
        rowSums[i] = s;
        size_t j = 0;
        for (double x : row) out(i, j++) = 2 * x;
    });
    RcppThread::parallelFor(0, static_cast<int>(nc), [&](int j) {
        RcppThread::RMatrix<double>::Column col = view.column(j);
        colMax[j] = *std::max_element(col.begin(), col.end());
    });
    std::vector<double> first(view.row(0).begin(), view.row(0).end());
    std::sort(first.begin(), first.end());
    std::copy(first.begin(), first.end(), rowSorted.begin());
    const RcppThread::RMatrix<double>& cview = view;
    double viaIndex = 0;
    for (size_t k = 0; k < cview.length(); ++k) viaIndex += cview[k];
    return Rcpp::List::create(
        Rcpp::Named("rowSums") = rowSums, Rcpp::Named("colMax") = colMax, Rcpp::Named("doubled") = doubled,
        Rcpp::Named("rowSorted") = rowSorted, Rcpp::Named("total") = viaIndex,
        Rcpp::Named("rowLength") = (int)view.row(1).length(), Rcpp::Named("colSize") = (int)view.column(1).size(),
        Rcpp::Named("corner") = cview(nr - 1, nc - 1),
        Rcpp::Named("rowElem") = view.row(1)[2], Rcpp::Named("colElem") = view.column(2)[1],
        Rcpp::Named("iterDistance") = (int)(view.row(0).end() - view.row(0).begin()));
}

// [[Rcpp::export]]
Rcpp::List derivedProgress(int n)
{
    StepsProgress progress(n, 100);
    RcppThread::parallelFor(0, n, [&](int) { progress++; });
    RcppThread::Rcout << "";
    return Rcpp::List::create(Rcpp::Named("finished") = progress.finished(),
                              Rcpp::Named("time") = progress.time(3725));
}

// [[Rcpp::export]]
Rcpp::List indexForms(int n)
{
    std::vector<double> a(n), b(n), c(n), d(n), e(n);
    RcppThread::parallelFor(0, n, [&](int i) { a[i] = i; });
    RcppThread::parallelFor(0, a.size(), [&](size_t i) { b[i] = 2.0 * i; }, 2);
    RcppThread::parallelFor(0, static_cast<std::ptrdiff_t>(n), [&](std::ptrdiff_t i) { c[i] = 3.0 * i; }, 2, 4);
    RcppThread::ThreadPool pool(2);
    pool.parallelFor(0, d.size(), [&](size_t i) { d[i] = 4.0 * i; });
    pool.parallelFor(0, n, [&](int i) { e[i] = 5.0 * i; }, 3);
    pool.wait();
    std::vector<int> items(n);
    std::iota(items.begin(), items.end(), 0);
    double sum = 0;
    std::mutex m;
    RcppThread::parallelForEach(items, [&](int x) { std::lock_guard<std::mutex> lk(m); sum += x; }, 2);
    pool.parallelForEach(items, [&](int& x) { x *= 2; });
    pool.join();
    return Rcpp::List::create(Rcpp::Named("a") = a, Rcpp::Named("b") = b, Rcpp::Named("c") = c,
                              Rcpp::Named("d") = d, Rcpp::Named("e") = e, Rcpp::Named("sum") = sum,
                              Rcpp::Named("items") = items);
}

// [[Rcpp::export]]
Rcpp::List otherNames()
{
    RcppThread::RMonitor::instance();
    bool mainHere = std::this_thread::get_id() == RcppThread::mainThreadID;
    bool mainThere = true;
    std::thread t([&] { mainThere = std::this_thread::get_id() == RcppThread::mainThreadID; });
    t.join();
    RcppThread::RErrPrinter& err = RcppThread::Rcerr;
    err << "to the error stream" << std::endl;
    RcppThread::UserInterruptException e;
    std::string what = static_cast<const std::exception&>(e).what();  // what() is private in RcppThread
    return Rcpp::List::create(Rcpp::Named("mainHere") = mainHere, Rcpp::Named("mainThere") = mainThere,
                              Rcpp::Named("what") = what);
}
