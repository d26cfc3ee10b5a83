// tools/ab-bench.sh's driver: the same engine benchmarks built against two
// versions of the headers (sides A and B, see ab_side.cpp), run in one
// process, the sides alternating round by round. The machine's noisy phases
// then hit both sides alike, and the per-round ratio B / A cancels them
// (two binaries run one after the other do not: a phase can double every
// figure of one). Usage: ab [rounds=30]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define AB_DECLARE(name) double sideA_##name(); double sideB_##name();
AB_DECLARE(loops2)
AB_DECLARE(fibGroup)
AB_DECLARE(fibAsync)
AB_DECLARE(fibAsyncOne)
AB_DECLARE(loopOpaque)
AB_DECLARE(axpy)

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
}
