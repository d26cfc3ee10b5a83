// The timeline (engine/trace.h, timeline.h, trace_zone.h): spans of loops,
// tasks, waits and zones from every thread on one clock; bounded buffers
// that count what they drop; start/stop misuse refused; Chrome's JSON.
#include <RcppSpool.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using RcppSpool::Timeline;
namespace trace = RcppSpool::engine::trace;

void spinFor(std::chrono::microseconds d)
{
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) {
    }
}

double total(const Timeline& t, int kind)
{
    double s = 0;
    for (const auto& x : t.spans)
        if (x.kind == kind) s += x.end - x.start;
    return s;
}

}  // namespace

TEST(Trace, NothingIsRecordedWhileStopped)
{
    RcppSpool::ThreadPool pool(2);
    pool.parallelFor(0, 100, [](std::ptrdiff_t) {});
    pool.wait();
    RcppSpool::timelineStart();
    const Timeline t = RcppSpool::timelineStop();
    EXPECT_TRUE(t.spans.empty());
    EXPECT_EQ(t.dropped, 0u);
}

TEST(Trace, ChunksAddUpToTheItemsTime)
{
    RcppSpool::ThreadPool pool(2);
    std::atomic<long long> itemNs{0};
    RcppSpool::timelineStart();
    // Items of ~2 ms: a chunk span also holds what runs between its items
    // (the loop's claims and clock reads, this body's own clock reads and
    // sum), which ThreadSanitizer makes ~45 us an item: with items of
    // 200-320 us the chunks came to 1.18x the items' time in a TSan build.
    pool.parallelFor(0, 60, [&](std::ptrdiff_t i) {
        const auto t0 = std::chrono::steady_clock::now();
        spinFor(std::chrono::microseconds(2000 + 50 * (i % 7)));
        itemNs += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    });
    pool.wait();
    const Timeline t = RcppSpool::timelineStop();
    const double items = static_cast<double>(itemNs.load()) * 1e-9;
    const double chunks = total(t, trace::kChunk);
    EXPECT_GE(chunks, items * 0.999);
    EXPECT_LE(chunks, items * 1.10);
    std::set<int> threads;
    for (const auto& x : t.spans)
        if (x.kind == trace::kChunk) threads.insert(x.thread);
    EXPECT_GE(threads.size(), 2u);  // the pool's two workers (the caller only pushed)
    for (const auto& x : t.spans) {
        EXPECT_LE(x.start, x.end);
        EXPECT_GE(x.start, 0);
        EXPECT_LE(x.end, t.seconds);
    }
}

TEST(Trace, TasksOfANestedGroupAndZonesAppear)
{
    RcppSpool::timelineStart();
    RcppSpool::parallelFor(0, 4, [](std::ptrdiff_t) {
        RcppSpool::TraceZone zone("outer item");
        RcppSpool::TaskGroup g;
        for (int k = 0; k < 3; ++k) g.run([] { spinFor(std::chrono::microseconds(300)); });
        g.wait();
    });
    const Timeline t = RcppSpool::timelineStop();
    int tasks = 0, zones = 0;
    for (const auto& x : t.spans) {
        if (x.kind == trace::kTask) ++tasks;
        if (x.kind == trace::kZone) {
            ++zones;
            EXPECT_EQ(x.label, "outer item");
        }
    }
    EXPECT_EQ(tasks, 12);
    EXPECT_EQ(zones, 4);
    EXPECT_EQ(t.threadNames.at(0), "main thread");
}

// Fine-grained recursion: tasks deeper than kRecordedTaskDepth in tasks on
// one thread are no spans of their own, but each task is counted once, in
// the span of its nearest recorded ancestor (none twice: a recorded task's
// count leaves out what a recorded task inside it counts).
int fibTasks(int n, std::atomic<long>& ran)
{
    ran.fetch_add(1, std::memory_order_relaxed);
    if (n < 2) return n;
    int a = 0, b = 0;
    RcppSpool::TaskGroup g;
    g.run([&] { a = fibTasks(n - 1, ran); });
    g.run([&] { b = fibTasks(n - 2, ran); });
    g.wait();
    return a + b;
}

TEST(Trace, DeepTasksAreCountedInTheirRecordedAncestorsSpan)
{
    for (int round = 0; round < 5; ++round) {
        std::atomic<long> ran{0};
        RcppSpool::timelineStart();
        EXPECT_EQ(fibTasks(18, ran), 2584);
        const Timeline t = RcppSpool::timelineStop();
        const long tasks = ran.load() - 1;  // every call but the first is a task
        long counted = 0, spans = 0;
        for (const auto& x : t.spans)
            if (x.kind == trace::kTask) {
                counted += x.count;
                ++spans;
            }
        EXPECT_EQ(counted, tasks);
        // Not a span a task: a thread records the tasks it runs at depth 0
        // and 1 (a stolen one, the ones it spawns), counts the rest.
        EXPECT_LT(spans, tasks / 2) << "of " << tasks << " tasks";
        EXPECT_GE(spans, 2);
        EXPECT_EQ(t.dropped, 0u);
    }
}

TEST(Trace, StartAndStopRefuseMisuse)
{
    EXPECT_THROW(RcppSpool::timelineStop(), std::logic_error);
    RcppSpool::timelineStart();
    EXPECT_THROW(RcppSpool::timelineStart(), std::logic_error);
    RcppSpool::timelineStop();
    EXPECT_THROW(RcppSpool::timelineStart(0), std::invalid_argument);
}

TEST(Trace, ABufferKeepsItsBoundAndCountsTheRest)
{
    RcppSpool::timelineStart(100);
    for (int i = 0; i < 1000; ++i) RcppSpool::TraceZone z("z");
    const Timeline t = RcppSpool::timelineStop();
    EXPECT_EQ(t.spans.size(), 100u);
    EXPECT_EQ(t.dropped, 900u);
}

TEST(Trace, ThreadsThatComeAndGoAreRecordedAndTheirBuffersReused)
{
    RcppSpool::timelineStart();
    for (int r = 0; r < 20; ++r) {
        std::thread th([] { RcppSpool::TraceZone z("thread"); });
        th.join();
    }
    const Timeline t = RcppSpool::timelineStop();
    EXPECT_EQ(t.spans.size(), 20u);
    // Again: the buffers of ended threads serve new ones.
    RcppSpool::timelineStart();
    std::vector<std::thread> ts;
    for (int r = 0; r < 8; ++r) ts.emplace_back([] {
        for (int k = 0; k < 50; ++k) RcppSpool::TraceZone z("many");
    });
    for (auto& th : ts) th.join();
    const Timeline u = RcppSpool::timelineStop();
    EXPECT_EQ(u.spans.size(), 400u);
}

TEST(Trace, RecordingWhileWorkRunsIsSafe)
{
    // Start and stop while workers run tasks and loops (TSan's case).
    RcppSpool::ThreadPool pool(2);
    std::atomic<bool> stop{false};
    std::thread producer([&] {
        while (!stop) {
            pool.parallelFor(0, 64, [](std::ptrdiff_t) { spinFor(std::chrono::microseconds(5)); });
            for (int k = 0; k < 16; ++k) pool.push([] { RcppSpool::TraceZone z("t"); });
            pool.wait();
        }
    });
    for (int r = 0; r < 30; ++r) {
        RcppSpool::timelineStart(r % 2 ? 50 : 100000);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const Timeline t = RcppSpool::timelineStop();
        for (std::size_t i = 1; i < t.spans.size(); ++i) {
            if (t.spans[i].thread == t.spans[i - 1].thread) {
                EXPECT_GE(t.spans[i].start, t.spans[i - 1].start);
            }
        }
    }
    stop = true;
    producer.join();
}

TEST(Trace, TheJsonHasEveryEventSortedPerThread)
{
    RcppSpool::timelineStart();
    RcppSpool::parallelFor(0, 8, [](std::ptrdiff_t) {
        RcppSpool::TraceZone z("a \"quoted\" name");
        spinFor(std::chrono::microseconds(100));
    });
    const Timeline t = RcppSpool::timelineStop();
    const std::string path = testing::TempDir() + "rcppspool_trace.json";
    RcppSpool::writeTrace(t, path);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string json = ss.str();
    EXPECT_EQ(json.rfind("{\"displayTimeUnit\"", 0), 0u);
    EXPECT_NE(json.find("\"traceEvents\":["), std::string::npos);
    EXPECT_NE(json.find("a \\\"quoted\\\" name"), std::string::npos);
    std::size_t complete = 0;
    for (std::size_t p = 0; (p = json.find("\"ph\":\"X\"", p)) != std::string::npos; ++p) ++complete;
    EXPECT_EQ(complete, t.spans.size());
    std::remove(path.c_str());
    EXPECT_THROW(RcppSpool::writeTrace(t, "/nonexistent-dir/x/trace.json"), std::runtime_error);
}
