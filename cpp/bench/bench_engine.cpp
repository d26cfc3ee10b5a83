// Engine benchmark P1-P6: RcppSpool against oneTBB, OpenMP and serial code, in
// one run, medians of repetitions. Usage: bench_engine [reps=9] [--csv FILE]
//   P1  1e6 empty tasks pushed to a 2-worker pool, then waited   (vs tbb::task_group)
//   P2  one blocking loop over 2 items, per call (100,000 calls) (vs omp parallel for)
//   P3  fib(30), two tasks per call, no cutoff                   (vs tbb::task_group)
//       and one task per call, the other branch a plain call
//   P4  CPU burnt by an idle worker while the other runs 1 s     (target <= 0.05 s)
//   P5  a 1e6-iteration loop with an opaque body                 (vs OpenMP static, serial)
//   P6  a 1e6-iteration loop y = a x + y, range body              (vs OpenMP static, index body)
//   (P5 and P6 measure their methods in turns: see reportInTurns())
#include <RcppSpool.h>

#include "engine_work.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>

#ifdef HAVE_OPENMP
#include <omp.h>
#endif
#ifdef HAVE_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif

using namespace engine_work;

template <class F>
static double medianTime(int reps, F&& f)
{
    f();  // warm-up
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) t.push_back(timeOnce(f));
    return median(t);
}

static double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct Row {
    std::string id, work, method;
    double value;
    std::string unit;
};
static std::vector<Row> rows;
static void report(const std::string& id, const std::string& work, const std::string& method, double v,
                   const std::string& unit)
{
    rows.push_back({id, work, method, v, unit});
    std::printf("%-3s %-44s %-28s %12.4g %s\n", id.c_str(), work.c_str(), method.c_str(), v, unit.c_str());
    std::fflush(stdout);
}

// ---- fib: engine_work.h (RcppSpool), fib_shapes.h (oneTBB) --------------------------

//! A method measured by reportInTurns(): its name and one call.
using Method = std::pair<std::string, std::function<void()>>;

//! Reports the median time of one call of each method (in ms), measured in
//! turns: rounds of a block of calls of each method, the order rotating each
//! round. Loops of a fraction of a millisecond measured one method after the
//! other varied with the machine's state over time (the same loop at 212 or
//! 273 us from one run to the next); in turns, every method sees the same.
//! Before each block the previous method's threads settle (see timeBlock()).
static void reportInTurns(const std::string& id, const std::string& work, const std::vector<Method>& methods,
                          int rounds)
{
    const int perBlock = 25;
    std::vector<std::vector<double>> t(methods.size());
    for (int round = 0; round < rounds; ++round)
        for (std::size_t j = 0; j < methods.size(); ++j) {
            const std::size_t k = (j + static_cast<std::size_t>(round)) % methods.size();
            timeBlock(methods[k].second, perBlock, t[k]);
        }
    for (std::size_t k = 0; k < methods.size(); ++k) report(id, work, methods[k].first, 1e3 * median(t[k]), "ms");
}

int main(int argc, char** argv)
{
    int reps = 9;
    std::string csv;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else
            reps = std::max(1, std::atoi(argv[i]));
    }
    const int nWorkers = 2;
    std::printf("RcppSpool engine benchmark: %d workers, medians of %d runs\n", nWorkers, reps);
    RcppSpool::ThreadPool::globalInstance().setNumThreads(nWorkers);
#ifdef HAVE_TBB
    tbb::task_arena arena(nWorkers);
#endif

    // ---- P1 -------------------------------------------------------------------------
    const int nTasks = 1000000;
    {
        RcppSpool::ThreadPool pool(nWorkers);
        report("P1", "1e6 empty tasks, push + wait", "RcppSpool ThreadPool",
               1e3 * medianTime(reps, [&] {
                   for (int i = 0; i < nTasks; ++i) pool.push(opaqueTask);
                   pool.wait();
               }), "ms");
    }
#ifdef HAVE_TBB
    report("P1", "1e6 empty tasks, push + wait", "oneTBB task_group",
           1e3 * medianTime(reps, [&] {
               arena.execute([&] {
                   tbb::task_group g;
                   for (int i = 0; i < nTasks; ++i) g.run(opaqueTask);
                   g.wait();
               });
           }), "ms");
#endif

    // ---- P2 -------------------------------------------------------------------------
    const int nCalls = 100000;
    report("P2", "blocking loop over 2 items, per call", "RcppSpool parallelFor",
           1e6 / nCalls * medianTime(reps, [&] {
               for (int c = 0; c < nCalls; ++c) RcppSpool::parallelFor(0, 2, opaque, nWorkers);
           }), "us");
#ifdef HAVE_OPENMP
    report("P2", "blocking loop over 2 items, per call", "OpenMP parallel for",
           1e6 / nCalls * medianTime(reps, [&] {
               for (int c = 0; c < nCalls; ++c) {
#pragma omp parallel for num_threads(nWorkers)
                   for (int i = 0; i < 2; ++i) opaque(i);
               }
           }), "us");
#endif
#ifdef HAVE_TBB
    report("P2", "blocking loop over 2 items, per call", "oneTBB task_group (caller runs one)",
           1e6 / nCalls * medianTime(reps, [&] {
               arena.execute([&] {
                   for (int c = 0; c < nCalls; ++c) {
                       tbb::task_group g;
                       g.run([] { opaque(0); });
                       opaque(1);
                       g.wait();
                   }
               });
           }), "us");
#endif

    // ---- P3 -------------------------------------------------------------------------
    const int fibN = 30;
    const long fibExpect = fibSerial(fibN);
    // Each shape once a method; every result checked.
    auto fibRow = [&](const char* method, auto fib) {
        long got = 0;
        report("P3", "fib(30), a task per call", method, 1e3 * medianTime(reps, [&] { got = fib(fibN); }), "ms");
        if (got != fibExpect) std::printf("    WRONG RESULT %ld\n", got);
    };
    fibRow("RcppSpool TaskGroup", fibSpool);
    fibRow("RcppSpool async", fibSpoolAsync);
    fibRow("RcppSpool async, one a call", fibSpoolAsyncOne);
    fibRow("RcppSpool TaskGroup, one a call", fibSpoolOne);
#ifdef HAVE_TBB
    fibRow("oneTBB task_group", [&](int n) {
        long r = 0;
        arena.execute([&] { r = fib_shapes::group<tbb::task_group, true>(n); });
        return r;
    });
    fibRow("oneTBB task_group, one a call", [&](int n) {
        long r = 0;
        arena.execute([&] { r = fib_shapes::group<tbb::task_group, false>(n); });
        return r;
    });
#endif
    fibRow("serial (no tasks)", fibSerial);

    // ---- P4 -------------------------------------------------------------------------
    {
        RcppSpool::ThreadPool pool(nWorkers);
        pool.push([] {});
        pool.wait();
        std::vector<double> idle;
        for (int r = 0; r < 3; ++r) {
            double c0 = cpuSeconds();
            auto t0 = Clock::now();
            pool.push([] {
                auto end = Clock::now() + std::chrono::seconds(1);
                while (Clock::now() < end) opaque(0);
            });
            pool.wait();
            double wall = std::chrono::duration<double>(Clock::now() - t0).count();
            idle.push_back(std::max(0.0, cpuSeconds() - c0 - wall));
        }
        report("P4", "CPU of the idle worker during a 1 s task", "RcppSpool ThreadPool", median(idle), "s");
    }

    // ---- P5 and P6: in turns (see reportInTurns()) -------------------------------------
    const std::ptrdiff_t nIter = 1000000;
    {
        std::vector<Method> methods = {{"RcppSpool parallelFor", [&] { RcppSpool::parallelFor(0, nIter, opaque, nWorkers); }}};
#ifdef HAVE_OPENMP
        methods.push_back({"OpenMP static", [&] {
#pragma omp parallel for schedule(static) num_threads(nWorkers)
                               for (std::ptrdiff_t i = 0; i < nIter; ++i) opaque(i);
                           }});
#endif
        methods.push_back({"serial", [&] {
                               for (std::ptrdiff_t i = 0; i < nIter; ++i) opaque(i);
                           }});
        reportInTurns("P5", "1e6-iteration loop, opaque body", methods, reps + 3);
    }
    // A body the compiler vectorises when it sees the inner loop: a range body
    // lets it (as OpenMP's loop does); an index body is called per index.
    {
        std::vector<double> x(nIter, 1.5), y(nIter, 0.5);
        const double a = 1.0000001;
        double* xp = x.data();
        double* yp = y.data();
        auto axpy = [=](std::ptrdiff_t b, std::ptrdiff_t e) {
            for (std::ptrdiff_t i = b; i < e; ++i) yp[i] = a * xp[i] + yp[i];
        };
        std::vector<Method> methods = {
            {"RcppSpool parallelFor, range body", [=] { RcppSpool::parallelFor(0, nIter, axpy, nWorkers); }},
            {"RcppSpool parallelFor, index body",
             [=] { RcppSpool::parallelFor(0, nIter, [=](std::ptrdiff_t i) { yp[i] = a * xp[i] + yp[i]; }, nWorkers); }}};
#ifdef HAVE_OPENMP
        methods.push_back({"OpenMP static", [=] {
#pragma omp parallel for schedule(static) num_threads(nWorkers)
                               for (std::ptrdiff_t i = 0; i < nIter; ++i) yp[i] = a * xp[i] + yp[i];
                           }});
#endif
        methods.push_back({"serial", [=] { axpy(0, nIter); }});
        reportInTurns("P6", "1e6-iteration loop y = a x + y", methods, reps + 3);
        if (y[nIter / 2] < 0) std::printf("unreachable\n");  // keeps y alive
    }

    // ---- ratios against the targets -------------------------------------------------
    auto value = [](const std::string& id, const std::string& method) {
        for (auto& r : rows)
            if (r.id == id && r.method == method) return r.value;
        return -1.0;
    };
    std::printf("\nTargets (issue: engine):\n");
    auto target = [&](const char* what, double ours, double base, double limit) {
        if (ours < 0 || base <= 0) {
            std::printf("  %-40s (baseline missing)\n", what);
            return;
        }
        double ratio = ours / base;
        std::printf("  %-40s %6.2fx  (target <= %.2fx)  %s\n", what, ratio, limit, ratio <= limit ? "met" : "MISSED");
    };
    target("P1 RcppSpool / oneTBB", value("P1", "RcppSpool ThreadPool"), value("P1", "oneTBB task_group"), 1.0);
    target("P2 RcppSpool / OpenMP", value("P2", "RcppSpool parallelFor"), value("P2", "OpenMP parallel for"), 2.0);
    target("P3 RcppSpool TaskGroup / oneTBB", value("P3", "RcppSpool TaskGroup"), value("P3", "oneTBB task_group"), 1.0);
    double p4 = value("P4", "RcppSpool ThreadPool");
    std::printf("  %-40s %6.3fs  (target <= 0.05 s)  %s\n", "P4 idle worker CPU", p4, p4 <= 0.05 ? "met" : "MISSED");
    target("P5 RcppSpool / OpenMP static", value("P5", "RcppSpool parallelFor"), value("P5", "OpenMP static"), 1.2);
    target("P6 range body / OpenMP static", value("P6", "RcppSpool parallelFor, range body"), value("P6", "OpenMP static"),
           1.0);

    if (!csv.empty()) {
        if (FILE* f = std::fopen(csv.c_str(), "w")) {
            std::fprintf(f, "id,work,method,value,unit\n");
            for (auto& r : rows)
                std::fprintf(f, "%s,\"%s\",\"%s\",%.6g,%s\n", r.id.c_str(), r.work.c_str(), r.method.c_str(), r.value,
                             r.unit.c_str());
            std::fclose(f);
        }
    }
    return 0;
}
