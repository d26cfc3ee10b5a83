// What recording a timeline costs (issue 39): the engine benchmarks' P5 (a
// 1e6-iteration loop with an opaque body, 2 threads) and fine-grained fib
// (fib(25), two TaskGroup tasks per call), each timed with nothing recording
// and while a timeline records, in alternating rounds in one process (so a
// noisy phase of the machine hits both alike). Prints medians and the
// median per-round ratio recording / not. Usage: bench_trace [rounds=30]
// [events per thread=100000]
#include <RcppSpool.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "engine_work.h"

namespace {

using engine_work::Clock;

template <class F>
double timeOnce(F&& f)
{
    const auto t0 = Clock::now();
    f();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::size_t eventsPerThread = 100000;

template <class F>
void compare(const char* what, int rounds, F&& f)
{
    std::vector<double> off, on, ratio;
    std::size_t spans = 0, dropped = 0;
    f();  // warm-up
    for (int r = 0; r < rounds; ++r) {
        // Best of 3 per side and round: a round's preempted call says little.
        double a = 1e300, b = 1e300;
        for (int k = 0; k < 3; ++k) a = std::min(a, timeOnce(f));
        RcppSpool::timelineStart(eventsPerThread);
        for (int k = 0; k < 3; ++k) b = std::min(b, timeOnce(f));
        const RcppSpool::Timeline t = RcppSpool::timelineStop();
        spans = t.spans.size();
        dropped = t.dropped;
        off.push_back(a);
        on.push_back(b);
        ratio.push_back(b / a);
    }
    std::printf("%-44s not recording %8.3f ms   recording %8.3f ms   ratio %.3f (quartiles %.3f-%.3f)   "
                "last recording: %zu spans, %zu dropped\n",
                what, engine_work::median(off), engine_work::median(on), engine_work::median(ratio), [&] {
                    auto v = ratio;
                    std::sort(v.begin(), v.end());
                    return v[v.size() / 4];
                }(),
                [&] {
                    auto v = ratio;
                    std::sort(v.begin(), v.end());
                    return v[3 * v.size() / 4];
                }(),
                spans, dropped);
}

}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 30;
    if (argc > 2) eventsPerThread = static_cast<std::size_t>(std::atoll(argv[2]));
    compare("P5: 1e6-iteration loop, opaque body", rounds, [] {
        RcppSpool::parallelFor(0, 1000000, [](std::ptrdiff_t i) { engine_work::opaque(i); }, 2);
    });
    compare("fib(25), two TaskGroup tasks per call", rounds, [] { engine_work::opaque(engine_work::fibSpool(25)); });
    return 0;
}
