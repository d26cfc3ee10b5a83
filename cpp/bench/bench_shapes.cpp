// The loop shapes of real packages (issue 37), on the same data, with every
// library in one run: serial; RcppSpool's parallelFor (index body) and an
// RcppParallel Worker through RcppSpool/RcppParallel.h (grain 1); oneTBB's
// parallel_for (blocked_range, grain 1, auto_partitioner, in a task_arena of
// the thread count); RcppThread's parallelFor; OpenMP's static and dynamic
// (chunk 1) schedules.
//
// Usage: bench_shapes [--reps N=5] [--shapes a,b] [--csv FILE]
//
// RcppThread: its parallelFor needs R (ThreadPool.hpp includes R's headers
// through RMonitor.hpp), so this runs its loop algorithm without R: RcppThread
// 2.x's parallelFor (nBatches = 0) cuts the range into one block per thread
// with quickpool::loop::create_workers() and each worker takes one index at a
// time from the front of its block, stealing the back half of the fullest
// block when its own is done (quickpool::loop::Worker). quickpool.hpp ships
// in RcppThread's headers and needs no R; quickpool::ThreadPool::parallel_for
// runs those same workers, one task per thread, the caller waiting (as
// RcppThread's caller does). CMake finds the header through the R package
// RcppThread (system.file("include", package = "RcppThread")).
//
// Shapes (each body writes its own outputs; results must equal serial's bit
// for bit):
//   triangle   row i of a 3000 x 20 column-major matrix against rows 0..i-1:
//              Euclidean distances written to a packed lower triangle as R's
//              dist (and parallelDist: rows i and i+1 write adjacent elements
//              for every j)
//   tri-alloc  the same with n = 2000, each pair copying its two rows into
//              heap vectors of 20 doubles, as parallelDist's
//              calcDistance(const arma::mat&, ...) does with X.row(i)
//   rows       sum of squares of each row of a 2000 x 1000 column-major matrix
//              (strided reads; rows i and i+1 share every cache line)
//   alloc      the same rows, each copied into a std::vector (8 KB) and a
//              second one made from it, as Armadillo's row temporaries
//              (mvrsquared's body)
//   omp-inner  1000 items, each an OpenMP `parallel for` over 2000 elements
//   heavy      300 items of 0.5-1.5 ms each, in an uneven order
//
// Per shape, library and thread count (1, 2): the median time of --reps
// timed calls (a call per library in each rep, the libraries' order turning
// every rep, 5 ms between libraries so that spinning threads of the last one
// settle); speedup = time at 1 thread / time at 2. Then, in separate passes
// (instrumented; never timed), per index the thread that ran it:
//   calls     body calls (range bodies: the Worker, oneTBB; for RcppSpool's
//             index body a range body is counted instead: the engine cuts a
//             range the same way for both kinds); "-" for index bodies
//   runs      maximal runs of consecutive indexes that one thread ran in a row
//   switches  indexes i whose thread is not i-1's
//   caller    share of the indexes the calling thread ran
//   cpu 2/1   the threads' CPU time inside the body (thread CPU clocks, read
//             around every index) at 2 threads over that at 1: what running
//             beside the other thread costs the body itself (shared cache
//             lines, caches, memory bandwidth), apart from preemption
// (medians of 3 counting passes).
#include <RcppSpool.h>
#include <RcppSpool/RcppParallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifdef HAVE_OPENMP
#include <omp.h>
#endif
#ifdef HAVE_TBB
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#endif
#ifdef HAVE_QUICKPOOL
#include <RcppThread/quickpool.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Recording who ran what (the counting passes only)

struct alignas(64) ThreadSlot {
    long calls = 0, runs = 0;
    std::ptrdiff_t last = -2;
    double bodyNs = 0;  // the thread's CPU time inside the body
};
constexpr int kSlots = 512;
ThreadSlot slots[kSlots];
std::atomic<int> nextTid{0};
int tid()
{
    thread_local int id = nextTid.fetch_add(1) % kSlots;
    return id;
}

struct Recorder {
    bool on = false;
    std::vector<int> owner;
    void start(std::ptrdiff_t n)
    {
        on = true;
        owner.assign(static_cast<std::size_t>(n), -1);
        for (auto& s : slots) s = ThreadSlot{};
    }
    void index(std::ptrdiff_t i)
    {
        const int t = tid();
        owner[static_cast<std::size_t>(i)] = t;
        if (slots[t].last != i - 1) ++slots[t].runs;
        slots[t].last = i;
    }
    void call() { ++slots[tid()].calls; }
};
Recorder rec;

// ---------------------------------------------------------------------------
// Shapes

struct Shape {
    std::string name;
    std::ptrdiff_t n = 0;
    std::vector<double> out, expected;
    virtual void body(std::ptrdiff_t i) = 0;
    virtual ~Shape() = default;
    void reset() { std::fill(out.begin(), out.end(), 0.0); }
};

//! Column-major n x d matrix of values from a fixed sequence.
std::vector<double> matrix(std::size_t n, std::size_t d, unsigned seed)
{
    std::vector<double> x(n * d);
    std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (auto& v : x) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v = static_cast<double>(s >> 11) / 9007199254740992.0;
    }
    return x;
}

//! R's dist index of (i, j), j < i, in a packed lower triangle of n rows.
inline std::size_t distIndex(std::size_t j, std::size_t i, std::size_t n) { return j * n - j - j * (j + 1) / 2 + i - 1; }

struct Triangle : Shape {
    static constexpr std::size_t d = 20;
    std::vector<double> x;
    bool allocate;
    Triangle(std::ptrdiff_t rows, bool alloc) : allocate(alloc)
    {
        name = alloc ? "tri-alloc" : "triangle";
        n = rows;
        x = matrix(static_cast<std::size_t>(n), d, 1);
        out.resize(static_cast<std::size_t>(n * (n - 1) / 2));
    }
    void body(std::ptrdiff_t ii) override
    {
        const std::size_t i = static_cast<std::size_t>(ii), N = static_cast<std::size_t>(n);
        if (!allocate) {
            double xi[d];
            for (std::size_t k = 0; k < d; ++k) xi[k] = x[i + k * N];
            for (std::size_t j = 0; j < i; ++j) {
                double s = 0;
                for (std::size_t k = 0; k < d; ++k) {
                    const double t = xi[k] - x[j + k * N];
                    s += t * t;
                }
                out[distIndex(j, i, N)] = std::sqrt(s);
            }
            return;
        }
        for (std::size_t j = 0; j < i; ++j) {
            std::vector<double> a(d), b(d);  // arma::mat(X.row(i)), arma::mat(X.row(j))
            for (std::size_t k = 0; k < d; ++k) a[k] = x[i + k * N], b[k] = x[j + k * N];
            double s = 0;
            for (std::size_t k = 0; k < d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
            out[distIndex(j, i, N)] = std::sqrt(s);
        }
    }
};

struct Rows : Shape {
    static constexpr std::size_t cols = 1000;
    std::vector<double> x, mean;
    bool allocate;
    explicit Rows(bool alloc) : allocate(alloc)
    {
        name = alloc ? "alloc" : "rows";
        n = 2000;
        x = matrix(static_cast<std::size_t>(n), cols, 2);
        mean.assign(cols, 0.5);
        out.resize(static_cast<std::size_t>(n));
    }
    void body(std::ptrdiff_t ii) override
    {
        const std::size_t i = static_cast<std::size_t>(ii), N = static_cast<std::size_t>(n);
        if (!allocate) {
            double s = 0;
            for (std::size_t j = 0; j < cols; ++j) s += x[i + j * N] * x[i + j * N];
            out[i] = s;
            return;
        }
        std::vector<double> row(cols);  // const arma::rowvec r = Y.row(i)
        for (std::size_t j = 0; j < cols; ++j) row[j] = x[i + j * N];
        std::vector<double> centred(cols);  // r - ybar
        for (std::size_t j = 0; j < cols; ++j) centred[j] = row[j] - mean[j];
        double s = 0, t = 0;
        for (std::size_t j = 0; j < cols; ++j) s += row[j] * row[j], t += centred[j] * centred[j];
        out[i] = s + t;
    }
};

struct OmpInner : Shape {
    static constexpr std::ptrdiff_t m = 2000;
    OmpInner()
    {
        name = "omp-inner";
        n = 1000;
        out.resize(static_cast<std::size_t>(n * m));
    }
    void body(std::ptrdiff_t i) override
    {
        double* o = out.data() + i * m;
#ifdef HAVE_OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (std::ptrdiff_t k = 0; k < m; ++k) o[k] = std::sin(0.001 * static_cast<double>(i * m + k));
    }
};

struct Heavy : Shape {
    std::vector<long> work;
    explicit Heavy(double itersPerMs)
    {
        name = "heavy";
        n = 300;
        out.resize(static_cast<std::size_t>(n));
        work.resize(static_cast<std::size_t>(n));
        for (std::ptrdiff_t i = 0; i < n; ++i) {
            const double ms = 0.5 + static_cast<double>((i * 7919) % 101) / 100.0;  // 0.5-1.5 ms, uneven order
            work[static_cast<std::size_t>(i)] = static_cast<long>(ms * itersPerMs);
        }
    }
    static double spin(long iters, double seed)
    {
        double v = seed;
        for (long k = 0; k < iters; ++k) v = v * 0.999999 + 1e-7;
        return v;
    }
    void body(std::ptrdiff_t i) override { out[static_cast<std::size_t>(i)] = spin(work[static_cast<std::size_t>(i)], static_cast<double>(i)); }
};

double calibrateSpin()
{
    const long iters = 2000000;
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
        const auto t0 = Clock::now();
        volatile double v = Heavy::spin(iters, 1.0);
        (void)v;
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    return static_cast<double>(iters) / best;
}

// ---------------------------------------------------------------------------
// Libraries

double threadCpuNs()
{
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e9 * static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec);
}

//! The body a library calls: index i, recorded in counting passes (with the
//! thread's CPU time inside it).
inline void run(Shape& s, std::ptrdiff_t i)
{
    if (!rec.on) return s.body(i);
    rec.index(i);
    const double c0 = threadCpuNs();
    s.body(i);
    slots[tid()].bodyNs += threadCpuNs() - c0;
}

struct SpoolWorker : RcppSpool::RcppParallel::Worker {
    Shape& s;
    explicit SpoolWorker(Shape& sh) : s(sh) {}
    void operator()(std::size_t b, std::size_t e) override
    {
        if (rec.on) rec.call();
        for (std::size_t i = b; i < e; ++i) run(s, static_cast<std::ptrdiff_t>(i));
    }
};

struct Library {
    std::string name;
    bool rangeBody;  // body calls are counted
    std::function<void(Shape&, int)> loop;
};

#ifdef HAVE_TBB
tbb::task_arena* arenas[3];
#endif
#ifdef HAVE_QUICKPOOL
quickpool::ThreadPool* pools[3];
#endif

std::vector<Library> libraries()
{
    std::vector<Library> libs;
    libs.push_back({"serial", false, [](Shape& s, int) {
                        for (std::ptrdiff_t i = 0; i < s.n; ++i) run(s, i);
                    }});
    libs.push_back({"RcppSpool parallelFor", true, [](Shape& s, int t) {
                        if (rec.on) {  // counted as a range body: the same cuts, and its calls
                            RcppSpool::parallelFor(
                                0, s.n,
                                [&s](std::ptrdiff_t b, std::ptrdiff_t e) {
                                    rec.call();
                                    for (std::ptrdiff_t i = b; i < e; ++i) run(s, i);
                                },
                                static_cast<std::size_t>(t));
                            return;
                        }
                        RcppSpool::parallelFor(0, s.n, [&s](std::ptrdiff_t i) { run(s, i); }, static_cast<std::size_t>(t));
                    }});
    libs.push_back({"RcppSpool Worker g1", true, [](Shape& s, int t) {
                        SpoolWorker w(s);
                        RcppSpool::RcppParallel::parallelFor(0, static_cast<std::size_t>(s.n), w, 1, t);
                    }});
#ifdef HAVE_TBB
    libs.push_back({"oneTBB auto g1", true, [](Shape& s, int t) {
                        arenas[t]->execute([&] {
                            tbb::parallel_for(
                                tbb::blocked_range<std::ptrdiff_t>(0, s.n, 1),
                                [&s](const tbb::blocked_range<std::ptrdiff_t>& r) {
                                    if (rec.on) rec.call();
                                    for (std::ptrdiff_t i = r.begin(); i < r.end(); ++i) run(s, i);
                                },
                                tbb::auto_partitioner());
                        });
                    }});
#endif
#ifdef HAVE_QUICKPOOL
    libs.push_back({"RcppThread (quickpool)", false, [](Shape& s, int t) {
                        pools[t]->parallel_for(0, static_cast<int>(s.n), [&s](int i) { run(s, i); });
                    }});
#endif
#ifdef HAVE_OPENMP
    libs.push_back({"OpenMP static", false, [](Shape& s, int t) {
#pragma omp parallel for schedule(static) num_threads(t)
                        for (std::ptrdiff_t i = 0; i < s.n; ++i) run(s, i);
                    }});
    libs.push_back({"OpenMP dynamic", false, [](Shape& s, int t) {
#pragma omp parallel for schedule(dynamic) num_threads(t)
                        for (std::ptrdiff_t i = 0; i < s.n; ++i) run(s, i);
                    }});
#endif
    return libs;
}

//! The load average (Linux), to say how busy the machine was.
std::string loadAverage()
{
    FILE* f = std::fopen("/proc/loadavg", "r");
    if (!f) return "?";
    char buf[64] = {0};
    const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
    std::fclose(f);
    std::string s = ok ? buf : "?";
    std::size_t cut = 0;
    for (int k = 0; k < 3 && cut != std::string::npos; ++k) cut = s.find(' ', cut + 1);
    return s.substr(0, cut);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

struct Counts {
    double calls = 0, runs = 0, switches = 0, caller = 0, bodyMs = 0;
};

//! One counting pass of `lib` on `s` with `t` threads.
Counts count(Library& lib, Shape& s, int t)
{
    s.reset();
    const int me = tid();
    rec.start(s.n);
    lib.loop(s, t);
    rec.on = false;
    Counts c;
    for (auto& sl : slots)
        c.calls += static_cast<double>(sl.calls), c.runs += static_cast<double>(sl.runs), c.bodyMs += sl.bodyNs / 1e6;
    long mine = 0;
    for (std::ptrdiff_t i = 0; i < s.n; ++i) {
        if (i > 0 && rec.owner[static_cast<std::size_t>(i)] != rec.owner[static_cast<std::size_t>(i - 1)]) c.switches += 1;
        mine += rec.owner[static_cast<std::size_t>(i)] == me;
    }
    c.caller = static_cast<double>(mine) / static_cast<double>(s.n);
    if (!lib.rangeBody) c.calls = -1;
    return c;
}

}  // namespace

int main(int argc, char** argv)
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows in a log file too
    int reps = 5;
    std::string csv, only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
            csv = argv[++i];
        else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_shapes [--reps N] [--shapes a,b] [--csv FILE]\n");
            return 2;
        }
    }
#ifdef HAVE_TBB
    tbb::task_arena a1(1), a2(2);
    arenas[1] = &a1, arenas[2] = &a2;
#endif
#ifdef HAVE_QUICKPOOL
    quickpool::ThreadPool p1(1), p2(2);
    pools[1] = &p1, pools[2] = &p2;
#endif
    const double itersPerMs = calibrateSpin();
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.emplace_back(new Triangle(3000, false));
    shapes.emplace_back(new Triangle(2000, true));
    shapes.emplace_back(new Rows(false));
    shapes.emplace_back(new Rows(true));
    shapes.emplace_back(new OmpInner());
    shapes.emplace_back(new Heavy(itersPerMs));
    if (!only.empty()) {
        const std::string list = "," + only + ",";
        shapes.erase(std::remove_if(shapes.begin(), shapes.end(),
                                    [&](const std::unique_ptr<Shape>& s) { return list.find("," + s->name + ",") == std::string::npos; }),
                     shapes.end());
    }
    auto libs = libraries();
    std::printf("bench_shapes: %d reps, threads 1 and 2, hardware threads %u, load average %s; RcppThread %s, oneTBB %s, OpenMP %s\n",
                reps, std::thread::hardware_concurrency(), loadAverage().c_str(),
#ifdef HAVE_QUICKPOOL
                "yes (its quickpool loop)",
#else
                "NOT FOUND",
#endif
#ifdef HAVE_TBB
                "yes",
#else
                "NOT FOUND",
#endif
#ifdef HAVE_OPENMP
                "yes"
#else
                "NOT FOUND"
#endif
    );

    FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
    if (out) std::fprintf(out, "shape,library,threads,seconds,speedup,calls,runs,switches,caller_share,body_cpu_ms,ok\n");
    bool allOk = true;
    for (auto& sp : shapes) {
        Shape& s = *sp;
        s.reset();
        for (std::ptrdiff_t i = 0; i < s.n; ++i) s.body(i);
        s.expected = s.out;
        const std::size_t L = libs.size();
        std::vector<std::vector<double>> times(L * 3);
        std::vector<bool> ok(L, true);
        // Warm-up and verification: each library once at each thread count.
        for (std::size_t l = 0; l < L; ++l)
            for (int t = 1; t <= 2; ++t) {
                s.reset();
                libs[l].loop(s, t);
                if (s.out != s.expected) ok[l] = false;
            }
        for (int r = 0; r < reps; ++r)
            for (std::size_t k = 0; k < L; ++k) {
                const std::size_t l = (r % 2) ? L - 1 - k : k;
                for (int tt = 1; tt <= 2; ++tt) {
                    const int t = (r % 2) ? 3 - tt : tt;
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                    const auto t0 = Clock::now();
                    libs[l].loop(s, t);
                    times[l * 3 + static_cast<std::size_t>(t)].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
                }
            }
        std::printf("\n%s (n = %td)\n", s.name.c_str(), s.n);
        std::printf("  %-24s %9s %9s %7s | %8s %7s %8s %6s | %8s %7s %8s %6s | %8s\n", "library", "1 thr ms", "2 thr ms", "speedup",
                    "calls/1", "runs/1", "switch/1", "call/1", "calls/2", "runs/2", "switch/2", "call/2", "cpu 2/1");
        double bestOther = 1e300, spool = 0;
        for (std::size_t l = 0; l < L; ++l) {
            const double t1 = median(times[l * 3 + 1]), t2 = median(times[l * 3 + 2]);
            Counts c[3];
            for (int t = 1; t <= 2; ++t) {
                std::vector<double> calls, runs, sw, caller, body;
                for (int k = 0; k < 3; ++k) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                    const Counts x = count(libs[l], s, t);
                    calls.push_back(x.calls), runs.push_back(x.runs), sw.push_back(x.switches), caller.push_back(x.caller);
                    body.push_back(x.bodyMs);
                }
                c[t] = {median(calls), median(runs), median(sw), median(caller), median(body)};
            }
            if (s.out != s.expected) ok[l] = false;
            allOk = allOk && ok[l];
            auto callsText = [&](double v) { return v < 0 ? std::string("-") : std::to_string(static_cast<long>(v)); };
            std::printf("  %-24s %9.2f %9.2f %7.2f | %8s %7.0f %8.0f %5.0f%% | %8s %7.0f %8.0f %5.0f%% | %8.2f%s\n",
                        libs[l].name.c_str(), t1 * 1e3, t2 * 1e3, t1 / t2, callsText(c[1].calls).c_str(), c[1].runs,
                        c[1].switches, 100 * c[1].caller, callsText(c[2].calls).c_str(), c[2].runs, c[2].switches,
                        100 * c[2].caller, c[2].bodyMs / c[1].bodyMs, ok[l] ? "" : "  RESULT DIFFERS FROM SERIAL");
            if (libs[l].name == "RcppSpool parallelFor") spool = t2;
            if (libs[l].name.rfind("RcppSpool", 0) != 0 && libs[l].name != "serial") bestOther = std::min(bestOther, t2);
            if (out)
                for (int t = 1; t <= 2; ++t)
                    std::fprintf(out, "%s,%s,%d,%.6g,%.4g,%.0f,%.0f,%.0f,%.4f,%.4g,%d\n", s.name.c_str(), libs[l].name.c_str(), t,
                                 median(times[l * 3 + static_cast<std::size_t>(t)]), t1 / median(times[l * 3 + static_cast<std::size_t>(t)]),
                                 c[t].calls, c[t].runs, c[t].switches, c[t].caller, c[t].bodyMs, ok[l] ? 1 : 0);
        }
        if (bestOther < 1e300)
            std::printf("  2 threads: RcppSpool parallelFor / best of oneTBB, RcppThread, OpenMP = %.2f\n", spool / bestOther);
    }
    if (out) std::fclose(out);
    std::printf("\n%s; load average %s\n", allOk ? "every library's results equal serial's" : "SOME RESULTS DIFFER FROM SERIAL",
                loadAverage().c_str());
    return allOk ? 0 : 1;
}
