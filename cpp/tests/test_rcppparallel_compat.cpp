// RcppParallel's API on RcppSpool (RcppSpool/RcppParallel.h): Worker and
// parallelFor, parallelReduce (deterministic), RVector, RMatrix, settings.
#include <RcppSpool/RcppParallel.h>
#include <gtest/gtest.h>

#include "platform.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace RcppSpool::RcppParallel;

namespace {

// Sets (or with nullptr unsets) an environment variable for a test's scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name)
    {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        set(value);
    }
    ~ScopedEnv() { set(had_ ? old_.c_str() : nullptr); }

private:
    void set(const char* value)
    {
        if (value)
            test_platform::setEnv(name_.c_str(), value);
        else
            test_platform::unsetEnv(name_.c_str());
    }
    std::string name_;
    std::string old_;
    bool had_ = false;
};

// Records the pieces it is called with.
struct Recorder : Worker {
    std::mutex m;
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    std::set<std::thread::id> threads;
    void operator()(std::size_t begin, std::size_t end) override
    {
        std::lock_guard<std::mutex> lock(m);
        pieces.emplace_back(begin, end);
        threads.insert(std::this_thread::get_id());
    }
};

// Values whose floating-point sum depends on the order of the additions.
std::vector<double> unevenValues(std::size_t n)
{
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i)
        x[i] = (i % 2 ? -1.0 : 1.0) * std::pow(10.0, static_cast<double>(i % 9)) / static_cast<double>(i + 3);
    return x;
}

// RcppParallel's documented reducer (the gallery's "parallel vector sum").
struct Sum : Worker {
    const RVector<double> input;
    double value;
    static std::atomic<int> splits;
    explicit Sum(const std::vector<double>& x) : input(const_cast<double*>(x.data()), const_cast<double*>(x.data()) + x.size()), value(0) {}
    Sum(const Sum& sum, Split) : input(sum.input), value(0) { ++splits; }
    void operator()(std::size_t begin, std::size_t end) override
    {
        value += std::accumulate(input.begin() + begin, input.begin() + end, 0.0);
    }
    void join(const Sum& rhs) { value += rhs.value; }
};
std::atomic<int> Sum::splits{0};

// The same reduction, serially, over the tree parallelReduce() documents.
double sumOverTheDocumentedTree(const std::vector<double>& x, std::size_t begin, std::size_t end, std::size_t grain,
                                double initial)
{
    const std::size_t n = end - begin;
    const std::size_t leaves = std::min<std::size_t>((n + grain - 1) / grain, RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES);
    auto start = [&](std::size_t k) { return begin + (n / leaves) * k + std::min(k, n % leaves); };
    std::vector<double> v(leaves, 0.0);
    v[0] = initial;
    for (std::size_t k = 0; k < leaves; ++k) v[k] += std::accumulate(x.begin() + start(k), x.begin() + start(k + 1), 0.0);
    for (std::size_t s = 1; s < leaves; s *= 2)
        for (std::size_t k = 0; k + s < leaves; k += 2 * s) v[k] += v[k + s];
    return v[0];
}

// A stand-in for an Rcpp vector: begin() and length().
struct FakeRVector {
    std::vector<int> data;
    int* begin() { return data.data(); }
    std::size_t length() const { return data.size(); }
};

// A stand-in for an Rcpp matrix: begin(), nrow() and ncol().
struct FakeRMatrix {
    std::vector<double> data;
    int rows, cols;
    double* begin() { return data.data(); }
    int nrow() const { return rows; }
    int ncol() const { return cols; }
};

// Counts its live instances; throws on index 500.
struct Counted : Worker {
    static std::atomic<int> alive;
    Counted() { ++alive; }
    Counted(const Counted&, Split) { ++alive; }
    ~Counted() override { --alive; }
    void operator()(std::size_t b, std::size_t e) override
    {
        if (b <= 500 && 500 < e) throw std::runtime_error("reducer failed");
    }
    void join(const Counted&) {}
};
std::atomic<int> Counted::alive{0};

// A reducer whose splitting constructor copies the accumulator, as real
// RcppParallel code does (`m_result(other.m_result)`): right only when every
// split is made from a reducer that has not accumulated anything. Its leaves
// keep busy so that leaves overlap in time; the right sum is n.
struct CopyingReducer : Worker {
    long long acc[4] = {0, 0, 0, 0};
    CopyingReducer() = default;
    CopyingReducer(const CopyingReducer& other, Split) { std::copy(other.acc, other.acc + 4, acc); }
    void operator()(std::size_t begin, std::size_t end) override
    {
        for (std::size_t i = begin; i < end; ++i) {
            volatile unsigned spin = 0;
            for (int j = 0; j < 20; ++j) spin = spin + static_cast<unsigned>(j);
            acc[i % 4] += 1;
        }
    }
    void join(const CopyingReducer& rhs)
    {
        for (int j = 0; j < 4; ++j) acc[j] += rhs.acc[j];
    }
    long long total() const { return acc[0] + acc[1] + acc[2] + acc[3]; }
};

// Counts the split reducers alive, and the most alive at once; its leaves
// take uneven time (some a few hundred microseconds) so that halves finish
// out of order. `Payload` bytes of memory are held (and touched) by each.
template <std::size_t Payload>
struct AliveCounter : Worker {
    static std::atomic<int> alive, peak;
    const bool split = false;
    std::vector<char> payload;
    AliveCounter() = default;
    AliveCounter(const AliveCounter&, Split) : split(true), payload(Payload, 1)
    {
        const int now = ++alive;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {}
    }
    ~AliveCounter() override
    {
        if (split) --alive;
    }
    void operator()(std::size_t begin, std::size_t) override
    {
        if (begin % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * (begin % 7)));
    }
    void join(const AliveCounter&) {}
    static void reset() { alive = 0, peak = 0; }
};
template <std::size_t Payload>
std::atomic<int> AliveCounter<Payload>::alive{0};
template <std::size_t Payload>
std::atomic<int> AliveCounter<Payload>::peak{0};

// The bound the most split reducers alive at once must keep:
// 2 x threads x ceil(log2(leaves)) + 2.
int aliveBound(int threads, std::size_t leaves)
{
    int depth = 0;
    while ((std::size_t{1} << depth) < leaves) ++depth;
    return 2 * threads * depth + 2;
}

}  // namespace

TEST(RcppParallelFor, CoversEveryIndexOnceForGrainSizesAndThreadCounts)
{
    for (int threads : {-1, 1, 2, 3, 8}) {
        for (std::size_t grain : {1u, 3u, 64u, 1000u, 5000u}) {
            for (std::size_t begin : {0u, 17u}) {
                const std::size_t end = begin + 4099;
                Recorder rec;
                parallelFor(begin, end, rec, grain, threads);
                std::vector<int> seen(end, 0);
                for (auto& p : rec.pieces) {
                    ASSERT_LT(p.first, p.second);
                    for (std::size_t i = p.first; i < p.second; ++i) ++seen[i];
                    // Pieces are about grainSize long or longer; only the last may be shorter.
                    if (p.second != end) {
                        EXPECT_GE(p.second - p.first, (grain + 1) / 2) << "grain " << grain;
                    }
                }
                for (std::size_t i = 0; i < end; ++i) ASSERT_EQ(seen[i], i >= begin ? 1 : 0) << "index " << i;
                if (threads == 1) {
                    EXPECT_EQ(rec.threads.size(), 1u);
                }
                if (grain >= end - begin) {
                    EXPECT_EQ(rec.pieces.size(), 1u);
                }
            }
        }
    }
}

TEST(RcppParallelFor, EmptyRangeCallsNothing)
{
    Recorder rec;
    parallelFor(10, 10, rec);
    parallelFor(10, 3, rec, 2, 2);
    EXPECT_TRUE(rec.pieces.empty());
}

TEST(RcppParallelFor, OneThreadRunsOnTheCaller)
{
    Recorder rec;
    parallelFor(0, 100000, rec, 1, 1);
    ASSERT_EQ(rec.threads.size(), 1u);
    EXPECT_EQ(*rec.threads.begin(), std::this_thread::get_id());
}

TEST(RcppParallelFor, ExceptionsPropagateAndTheNextLoopWorks)
{
    struct Thrower : Worker {
        void operator()(std::size_t begin, std::size_t end) override
        {
            for (std::size_t i = begin; i < end; ++i)
                if (i == 777) throw std::invalid_argument("bad index 777");
        }
    } thrower;
    for (int threads : {1, 2, 4}) {
        try {
            parallelFor(0, 10000, thrower, 10, threads);
            FAIL() << "no exception";
        } catch (const std::invalid_argument& e) {
            EXPECT_STREQ(e.what(), "bad index 777");
        }
        Recorder rec;
        parallelFor(0, 1000, rec, 1, threads);
        std::size_t covered = 0;
        for (auto& p : rec.pieces) covered += p.second - p.first;
        EXPECT_EQ(covered, 1000u);
    }
}

TEST(RcppParallelFor, NestedLoopsWork)
{
    struct Inner : Worker {
        std::vector<std::atomic<int>>& hits;
        std::size_t row;
        Inner(std::vector<std::atomic<int>>& h, std::size_t r) : hits(h), row(r) {}
        void operator()(std::size_t b, std::size_t e) override
        {
            for (std::size_t j = b; j < e; ++j) ++hits[row * 50 + j];
        }
    };
    struct Outer : Worker {
        std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(40 * 50);
        void operator()(std::size_t b, std::size_t e) override
        {
            for (std::size_t i = b; i < e; ++i) {
                Inner inner(hits, i);
                parallelFor(0, 50, inner, 5);
            }
        }
    } outer;
    parallelFor(0, 40, outer, 1, 2);
    for (auto& h : outer.hits) ASSERT_EQ(h.load(), 1);
}

TEST(RcppParallelReduce, BitwiseTheSameForAnyThreadCountAndEqualToTheDocumentedTree)
{
    const auto x = unevenValues(100003);
    for (std::size_t grain : {1u, 7u, 1000u, 30000u, 200000u}) {
        const double expected = sumOverTheDocumentedTree(x, 5, x.size(), grain, 0.0);
        for (int threads : {1, 2, 3, 8, -1}) {
            for (int rep = 0; rep < 3; ++rep) {
                Sum sum(x);
                Sum::splits = 0;
                parallelReduce(5, x.size(), sum, grain, threads);
                const std::size_t n = x.size() - 5;
                const int leaves = static_cast<int>(
                    std::min<std::size_t>((n + grain - 1) / grain, RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES));
                // One pristine split of `sum`, then one split of it per leaf but the first.
                EXPECT_EQ(Sum::splits.load(), leaves > 1 ? leaves : 0);
                // Bitwise: the same additions in the same order.
                EXPECT_EQ(std::memcmp(&sum.value, &expected, sizeof(double)), 0)
                    << "grain " << grain << ", threads " << threads << ": " << sum.value << " vs " << expected;
            }
        }
    }
    // The tree matters: another grain size adds in another order.
    EXPECT_NE(sumOverTheDocumentedTree(x, 0, x.size(), 1, 0.0), sumOverTheDocumentedTree(x, 0, x.size(), 100003, 0.0));
}

TEST(RcppParallelReduce, KeepsTheReducersInitialValueAndHandlesSmallRanges)
{
    const auto x = unevenValues(10);
    for (std::size_t end : {1u, 2u, 3u, 10u}) {
        Sum sum(x);
        sum.value = 0.25;
        parallelReduce(0, end, sum, 1, 4);
        EXPECT_EQ(sum.value, sumOverTheDocumentedTree(x, 0, end, 1, 0.25)) << end;
    }
    Sum empty(x);
    empty.value = 3;
    Sum::splits = 0;
    parallelReduce(4, 4, empty);
    EXPECT_EQ(empty.value, 3);
    EXPECT_EQ(Sum::splits.load(), 0);
}

TEST(RcppParallelReduce, JoinsInIndexOrder)
{
    // A reducer that concatenates the indices: any join out of order shows.
    struct Concat : Worker {
        std::vector<std::size_t> seen;
        Concat() = default;
        Concat(const Concat&, Split) {}
        void operator()(std::size_t b, std::size_t e) override
        {
            for (std::size_t i = b; i < e; ++i) seen.push_back(i);
        }
        void join(const Concat& rhs) { seen.insert(seen.end(), rhs.seen.begin(), rhs.seen.end()); }
    };
    for (int threads : {1, 2, 8}) {
        Concat c;
        parallelReduce(3, 5003, c, 2, threads);
        std::vector<std::size_t> want(5000);
        std::iota(want.begin(), want.end(), 3u);
        EXPECT_EQ(c.seen, want);
    }
}

TEST(RcppParallelReduce, ExceptionsPropagateAndSplitsAreFreed)
{
    {
        Counted c;
        for (int threads : {1, 2, 4}) {
            EXPECT_THROW(parallelReduce(0, 1000, c, 1, threads), std::runtime_error);
            EXPECT_EQ(Counted::alive.load(), 1);
        }
    }
    EXPECT_EQ(Counted::alive.load(), 0);
}

TEST(RcppParallelReduce, SplitsOnlyFromAReducerThatHasNotRun)
{
    // A splitting constructor that copies the accumulator counted leaf 0's
    // work again in every leaf split while leaf 0 ran (2,016 for n = 1000 on
    // 2 threads; 13 for n = 7 on one), and raced with it.
    for (std::size_t n : {0u, 1u, 7u, 1000u, 100000u, 1000000u}) {
        for (int threads : {1, 2, 3, 8}) {
            for (std::size_t grain : {1u, 1000u}) {
                CopyingReducer r;
                if (grain == 1)
                    parallelReduce(0, n, r, 1, threads);  // no grain size given: the default, 1
                else
                    parallelReduce(0, n, r, grain, threads);
                EXPECT_EQ(r.total(), static_cast<long long>(n)) << "n " << n << ", threads " << threads << ", grain " << grain;
            }
        }
    }
    // A split copies only what the caller's reducer held before the call:
    // each of the 128 leaves starts from it, whatever the thread count.
    for (int threads : {1, 2}) {
        CopyingReducer r;
        r.acc[2] = 5;
        parallelReduce(0, 1000, r, 1, threads);
        EXPECT_EQ(r.total(), 1000 + 5 * 128);
    }
}

TEST(RcppParallelReduce, KeepsFewSplitReducersAliveAtOnce)
{
    using Counter = AliveCounter<0>;
    for (int threads : {1, 2, 3, 8}) {
        for (std::size_t n : {2u, 3u, 100u, 128u, 1000u, 100000u}) {
            for (std::size_t grain : {1u, 7u}) {
                Counter::reset();
                {
                    Counter c;
                    parallelReduce(0, n, c, grain, threads);
                }
                const std::size_t leaves = std::min<std::size_t>((n + grain - 1) / grain, RCPPSPOOL_RCPPPARALLEL_MAX_LEAVES);
                if (std::getenv("RCPPSPOOL_TEST_VERBOSE"))
                    std::printf("threads %d n %zu grain %zu leaves %zu: peak %d (bound %d)\n", threads, n, grain,
                                leaves, Counter::peak.load(), aliveBound(threads, leaves));
                EXPECT_LE(Counter::peak.load(), aliveBound(threads, leaves))
                    << "n " << n << ", grain " << grain << ", threads " << threads << ", leaves " << leaves;
                EXPECT_EQ(Counter::alive.load(), 0);
            }
        }
    }
    // One thread runs the leaves in order: the pristine split, the running
    // leaf's, and at most one waiting per level of the tree.
    Counter::reset();
    Counter c;
    parallelReduce(0, 128, c, 1, 1);
    EXPECT_LE(Counter::peak.load(), 2 + 7);
}

#if defined(__linux__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define RCPPSPOOL_TEST_PEAK_RSS 1
namespace {
// Peak resident set since `clear_refs` was last reset (Linux), in MB, or -1.
double peakRssMB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.compare(0, 6, "VmHWM:") == 0) return std::stod(line.substr(6)) / 1024.0;
    return -1;
}
}  // namespace
#endif

TEST(RcppParallelReduce, LargeReducersCostFewCopiesOfMemory)
{
#ifndef RCPPSPOOL_TEST_PEAK_RSS
    GTEST_SKIP() << "peak RSS is read on Linux without sanitizers (their allocators keep freed memory)";
#else
    constexpr std::size_t kMB = 1024 * 1024;
    using Big = AliveCounter<8 * kMB>;
    const int threads = 2;
    {  // once first, so that the allocator's own growth is not counted
        Big warm;
        parallelReduce(0, 128, warm, 1, threads);
    }
    std::ofstream reset("/proc/self/clear_refs");
    if (!(reset << "5" << std::flush)) GTEST_SKIP() << "cannot reset the peak RSS here";
    reset.close();
    const double before = peakRssMB();
    Big::reset();
    {
        Big big;
        parallelReduce(0, 128, big, 1, threads);
    }
    const double grown = peakRssMB() - before;
    const int copies = aliveBound(threads, 128);
    EXPECT_LE(Big::peak.load(), copies);
    // 128 leaves: 1 GB if every leaf's reducer were alive at once.
    if (std::getenv("RCPPSPOOL_TEST_VERBOSE"))
        std::printf("peak RSS grew by %.1f MB, %d split reducers alive at most (bound %d)\n", grown, Big::peak.load(), copies);
    EXPECT_LE(grown, copies * 8.0 + 16.0) << "peak RSS grew by " << grown << " MB; " << Big::peak.load() << " split reducers alive at most";
#endif
}

TEST(RcppParallelSettings, NumThreadsAndGrainSizeFromTheEnvironment)
{
    {
        ScopedEnv unset("RCPP_PARALLEL_NUM_THREADS", nullptr);
        EXPECT_EQ(defaultNumThreads(), static_cast<int>(RcppSpool::defaultThreads()));
    }
    {
        ScopedEnv three("RCPP_PARALLEL_NUM_THREADS", "3");
        EXPECT_EQ(defaultNumThreads(), 3);
        ScopedEnv one("RCPP_PARALLEL_NUM_THREADS", "1");
        Recorder rec;
        parallelFor(0, 100000, rec);  // numThreads -1: the variable decides
        EXPECT_EQ(rec.threads.size(), 1u);
    }
    {
        ScopedEnv bad("RCPP_PARALLEL_NUM_THREADS", "many");
        EXPECT_EQ(defaultNumThreads(), static_cast<int>(RcppSpool::defaultThreads()));
    }
    {
        ScopedEnv grain("RCPP_PARALLEL_GRAIN_SIZE", "1000");
        Recorder rec;
        parallelFor(0, 1000, rec, 1, 4);  // grain 1: the variable decides
        EXPECT_EQ(rec.pieces.size(), 1u);
        Recorder rec2;
        parallelFor(0, 1000, rec2, 10, 1);  // an explicit grain size wins
        EXPECT_GE(rec2.pieces.size(), 1u);
    }
    EXPECT_EQ(RCPP_PARALLEL_USE_TBB, 0);
}

TEST(RcppParallelViews, RVectorOverPlainMemoryAndAVectorLikeSource)
{
    FakeRVector src{{1, 2, 3, 4, 5}};
    RVector<int> v(src);
    EXPECT_EQ(v.length(), 5u);
    EXPECT_EQ(v.size(), 5u);
    v[1] = 20;
    EXPECT_EQ(src.data[1], 20);
    const RVector<int> cv(v);
    EXPECT_EQ(std::accumulate(cv.begin(), cv.end(), 0), 1 + 20 + 3 + 4 + 5);
    EXPECT_EQ(cv[4], 5);
    std::vector<int> raw(100, 1);
    RVector<int> w(raw.data(), raw.data() + raw.size());
    w = v;
    EXPECT_EQ(w.end() - w.begin(), 5);
}

TEST(RcppParallelViews, RMatrixRowsColumnsAndIteratorsInAWorker)
{
    const int rows = 37, cols = 11;
    FakeRMatrix in{std::vector<double>(rows * cols), rows, cols};
    for (int k = 0; k < rows * cols; ++k) in.data[k] = k * 0.5;
    FakeRMatrix out{std::vector<double>(rows * cols), rows, cols};
    std::vector<double> rowSums(rows);

    // The gallery's matrix square root, plus row sums through Row iterators.
    struct Work : Worker {
        const RMatrix<double> input;
        RMatrix<double> output;
        RVector<double> sums;
        Work(const FakeRMatrix& i, FakeRMatrix& o, std::vector<double>& s)
            : input(i), output(o), sums(s.data(), s.data() + s.size())
        {}
        void operator()(std::size_t begin, std::size_t end) override
        {
            for (std::size_t i = begin; i < end; ++i) {
                RMatrix<double>::Row row = output.row(i);
                std::transform(input.row(i).begin(), input.row(i).end(), row.begin(),
                               [](double v) { return std::sqrt(v); });
                sums[i] = std::accumulate(row.begin(), row.end(), 0.0);
            }
        }
    } work(in, out, rowSums);
    parallelFor(0, rows, work, 4, 2);

    RMatrix<double> m(out.data.data(), rows, cols);
    EXPECT_EQ(m.nrow(), static_cast<std::size_t>(rows));
    EXPECT_EQ(m.ncol(), static_cast<std::size_t>(cols));
    EXPECT_EQ(m.length(), static_cast<std::size_t>(rows * cols));
    for (int i = 0; i < rows; ++i) {
        double s = 0;
        for (int j = 0; j < cols; ++j) {
            EXPECT_EQ(m(i, j), std::sqrt((i + j * rows) * 0.5));
            s += m(i, j);
        }
        EXPECT_EQ(rowSums[i], s);
    }
    RMatrix<double>::Column col = m.column(3);
    EXPECT_EQ(col.length(), static_cast<std::size_t>(rows));
    EXPECT_EQ(&col[0], &m(0, 3));
    RMatrix<double>::Row row = m.row(2);
    EXPECT_EQ(row.length(), static_cast<std::size_t>(cols));
    EXPECT_EQ(row[5], m(2, 5));
    auto it = row.begin();
    it += 3;
    EXPECT_EQ(*it, m(2, 3));
    EXPECT_EQ(row.end() - row.begin(), cols);
    EXPECT_EQ(std::distance(m.begin(), m.end()), rows * cols);
    const RMatrix<double>& cm = m;
    EXPECT_EQ(cm.row(1)[2], m(1, 2));
    EXPECT_EQ(cm.column(2)[1], m(1, 2));
    EXPECT_EQ(*std::max_element(cm.begin(), cm.end()), m(rows - 1, cols - 1));
}
