// tools/ab-bench.sh's driver: the same engine benchmarks built against two
// versions of the headers (sides A and B, see ab_side.cpp), run in one
// process, the sides alternating round by round. The machine's noisy phases
// then hit both sides alike, and the per-round ratio B / A cancels them
// (two binaries run one after the other do not: a phase can double every
// figure of one). Usage: ab [rounds=30]
// Built with -DAB_TBB (and oneTBB), it then times fib(30) with a task per
// call against oneTBB's task_group, both sides and oneTBB in turns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#ifdef AB_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "../fib_shapes.h"
#endif

#define AB_DECLARE(name) double sideA_##name(); double sideB_##name();
AB_DECLARE(loops2)
AB_DECLARE(fibGroup)
AB_DECLARE(fibAsync)
AB_DECLARE(fibAsyncOne)
AB_DECLARE(loopOpaque)
AB_DECLARE(axpy)
AB_DECLARE(rpVectorSum)
long sideA_fib(int shape, int n);
long sideB_fib(int shape, int n);

namespace {
struct Bench {
    const char* what;
    double (*a)();
    double (*b)();
    std::vector<double> ta, tb, ratio;
};
double quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

#ifdef AB_TBB
//! fib(30) with a task per call (one or two a call; the other branch a plain
//! call), both sides and oneTBB's task_group on 2 threads, measured in turns
//! (each after 20 ms of rest and a warm-up call), medians of `rounds`.
void fibAgainstTbb(int rounds)
{
    const int n = 30;
    const long expect = 832040;
    tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
    tbb::task_arena arena(2);
    struct Row {
        const char* what;
        std::function<long()> run;
        std::vector<double> ms;
    };
    std::vector<Row> rows;
    const char* shapes[] = {"async, one a call", "TaskGroup, one a call", "async, two a call", "TaskGroup, two a call"};
    for (int shape = 0; shape < 4; ++shape) {
        rows.push_back({shapes[shape], [=] { return sideA_fib(shape, n); }, {}});
        rows.push_back({shapes[shape], [=] { return sideB_fib(shape, n); }, {}});
    }
    rows.push_back({"oneTBB task_group, one a call", [&] {
                        long r = 0;
                        arena.execute([&] { r = fib_shapes::group<tbb::task_group, false>(n); });
                        return r;
                    }, {}});
    rows.push_back({"oneTBB task_group, two a call", [&] {
                        long r = 0;
                        arena.execute([&] { r = fib_shapes::group<tbb::task_group, true>(n); });
                        return r;
                    }, {}});
    for (int r = 0; r < rounds; ++r)
        for (std::size_t j = 0; j < rows.size(); ++j) {
            Row& row = rows[(j + static_cast<std::size_t>(r)) % rows.size()];
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            row.run();
            const auto t0 = std::chrono::steady_clock::now();
            const long got = row.run();
            row.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            if (got != expect) std::printf("WRONG RESULT %ld (%s)\n", got, row.what);
        }
    const double tbbOne = quantile(rows[8].ms, 0.5), tbbTwo = quantile(rows[9].ms, 0.5);
    std::printf("fib(30), a task per call, 2 threads; medians of %d rounds in turns, in ms\n", rounds);
    std::printf("%-24s %9s %9s %8s %10s %10s\n", "shape", "A", "B", "B / A", "A / oneTBB", "B / oneTBB");
    for (int shape = 0; shape < 4; ++shape) {
        const double a = quantile(rows[2 * shape].ms, 0.5), b = quantile(rows[2 * shape + 1].ms, 0.5);
        const double base = shape < 2 ? tbbOne : tbbTwo;
        std::printf("%-24s %9.1f %9.1f %8.3f %10.3f %10.3f\n", shapes[shape], a, b, b / a, a / base, b / base);
    }
    std::printf("oneTBB task_group: %.1f ms one a call, %.1f ms two a call\n", tbbOne, tbbTwo);
}
#endif
}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 30;
    std::vector<Bench> benches = {
        {"1,000 blocking loops over 2 items (P2)", sideA_loops2, sideB_loops2, {}, {}, {}},
        {"fib(25), a TaskGroup task per call (P3)", sideA_fibGroup, sideB_fibGroup, {}, {}, {}},
        {"fib(25), two async() per call (P3)", sideA_fibAsync, sideB_fibAsync, {}, {}, {}},
        {"fib(25), one async() per call (P3)", sideA_fibAsyncOne, sideB_fibAsyncOne, {}, {}, {}},
        {"1e6-iteration loop, opaque body (P5)", sideA_loopOpaque, sideB_loopOpaque, {}, {}, {}},
        {"1e6-iteration axpy, range body (P6)", sideA_axpy, sideB_axpy, {}, {}, {}},
        {"RcppParallel's vector sum, 1e7 doubles", sideA_rpVectorSum, sideB_rpVectorSum, {}, {}, {}},
    };
    for (int r = 0; r < rounds; ++r)
        for (auto& b : benches) {
            // Which side goes first alternates too.
            double ta, tb;
            if (r % 2) {
                ta = b.a();
                tb = b.b();
            } else {
                tb = b.b();
                ta = b.a();
            }
            b.ta.push_back(ta);
            b.tb.push_back(tb);
            b.ratio.push_back(tb / ta);
        }
    std::printf("%d rounds, 2 workers a side; medians of 25 calls a round, in us\n", rounds);
    std::printf("%-42s %10s %10s %8s %16s\n", "benchmark", "A", "B", "B / A", "(quartiles)");
    for (auto& b : benches)
        std::printf("%-42s %10.2f %10.2f %8.4f   (%.4f-%.4f)\n", b.what, quantile(b.ta, 0.5), quantile(b.tb, 0.5),
                    quantile(b.ratio, 0.5), quantile(b.ratio, 0.25), quantile(b.ratio, 0.75));
#ifdef AB_TBB
    fibAgainstTbb(std::max(5, rounds));
#endif
}
