// ProgressCounter and ProgressBar without R (-DRCPPSPOOL_STANDALONE): exact
// counts under concurrent increments, RcppThread's text, the final line drawn
// exactly once, rate limiting, the Rcerr option, several objects at once.
//
//   g++ -std=c++17 -O2 -DRCPPSPOOL_STANDALONE -Iinst/include
//       cpp/tests/test_progress.cpp -lgtest -lgtest_main -pthread
#include <RcppSpool.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "platform.h"

using RcppSpool::ProgressBar;
using RcppSpool::ProgressCounter;
using testing::internal::CaptureStderr;
using testing::internal::CaptureStdout;
using testing::internal::GetCapturedStderr;
using testing::internal::GetCapturedStdout;

namespace {

const std::string kCounterDone = "\rComputing: 100% (done)                         \n";
const std::string kBarDone =
    "\rComputing: [========================================] 100% (done)                         \n";

// The drawn lines: the text split at "\r" (each draw starts with one).
std::vector<std::string> draws(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t pos = 0;
    while ((pos = text.find('\r', pos)) != std::string::npos) {
        std::size_t next = text.find('\r', pos + 1);
        out.push_back(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
        pos = pos + 1;
    }
    return out;
}

std::size_t occurrences(const std::string& text, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

// Parses an intermediate counter line "\r<msg><pct>%  (~<eta> remaining)       "
// (RcppThread's form); false if `line` has another form.
bool parseCounterLine(const std::string& line, const std::string& msg, int& pct, std::string& eta)
{
    const std::string head = "\r" + msg, mid = "%  (~", tail = " remaining)       ";
    if (line.compare(0, head.size(), head) != 0) return false;
    std::size_t p = head.size(), q = p;
    while (q < line.size() && std::isdigit(static_cast<unsigned char>(line[q]))) ++q;
    if (q == p || q - p > 3 || line.compare(q, mid.size(), mid) != 0) return false;
    pct = std::stoi(line.substr(p, q - p));
    std::size_t e = q + mid.size(), f = e;
    while (f < line.size() && std::string("0123456789dhms").find(line[f]) != std::string::npos) ++f;
    if (f == e || line.compare(f, std::string::npos, tail) != 0) return false;
    eta = line.substr(e, f - e);
    return true;
}

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

TEST(ProgressFormat, TimeIsFormattedAsRcppThreadDoes)
{
    using RcppSpool::progress_detail::formatTime;
    EXPECT_EQ(formatTime(0), "0s");
    EXPECT_EQ(formatTime(59), "59s");
    EXPECT_EQ(formatTime(60), "1m0s");
    EXPECT_EQ(formatTime(61), "1m1s");
    EXPECT_EQ(formatTime(3600), "1h0s");  // RcppThread's quirk: hours, then seconds when minutes are 0
    EXPECT_EQ(formatTime(3661), "1h1m");
    EXPECT_EQ(formatTime(86400 + 3600 + 61), "1d1h");
    EXPECT_EQ(formatTime(2 * 86400 + 59), "2d59s");
}

TEST(ProgressFormat, CounterPrintsRcppThreadsText)
{
    CaptureStdout();
    {
        ProgressCounter p(4, 0);  // printEvery 0: every increment draws
        for (int i = 0; i < 4; ++i) ++p;
    }
    EXPECT_EQ(GetCapturedStdout(),
              "\rComputing: 25%  (~0s remaining)       "
              "\rComputing: 50%  (~0s remaining)       "
              "\rComputing: 75%  (~0s remaining)       " +
                  kCounterDone);
}

TEST(ProgressFormat, BarPrintsRcppThreadsText)
{
    CaptureStdout();
    {
        ProgressBar p(4, 0);
        for (int i = 0; i < 4; ++i) p++;
    }
    EXPECT_EQ(GetCapturedStdout(),
              "\rComputing: [==========                              ] 25%  (~0s remaining)       "
              "\rComputing: [====================                    ] 50%  (~0s remaining)       "
              "\rComputing: [==============================          ] 75%  (~0s remaining)       " +
                  kBarDone);
}

TEST(ProgressFormat, CustomMessageAndRoundedPercent)
{
    CaptureStdout();
    {
        ProgressCounter p(3, 0, "Fitting: ");
        p += 1;
        p += 2;
    }
    EXPECT_EQ(GetCapturedStdout(),
              "\rFitting: 33%  (~0s remaining)       \rFitting: 100% (done)                         \n");
}

TEST(ProgressFormat, RemainingTimeIsEstimatedFromElapsedTime)
{
    CaptureStdout();
    {
        ProgressCounter p(1000, 0);
        sleepMs(10);
        ++p;  // 999 units left, each about as long as the first (>= 10 ms): >= 9.99 s
    }
    std::string out = GetCapturedStdout();
    int pct = -1;
    std::string eta;
    ASSERT_TRUE(parseCounterLine(out, "Computing: ", pct, eta)) << out;
    EXPECT_EQ(pct, 0);
    // back to seconds: "9s", "1m5s", ...
    long secs = 0, num = 0;
    for (char ch : eta) {
        if (std::isdigit(static_cast<unsigned char>(ch))) {
            num = num * 10 + (ch - '0');
            continue;
        }
        secs += num * (ch == 'd' ? 86400 : ch == 'h' ? 3600 : ch == 'm' ? 60 : 1);
        num = 0;
    }
    EXPECT_GE(secs, 9) << eta;
    EXPECT_EQ(eta, RcppSpool::progress_detail::formatTime(static_cast<std::size_t>(secs)));
}

TEST(ProgressFormat, ElapsedTimeOnRequest)
{
    CaptureStdout();
    {
        ProgressCounter p(2, 0);
        p.setShowElapsed();
        ++p;
        ++p;
    }
    EXPECT_EQ(GetCapturedStdout(),
              "\rComputing: 50%  (0s elapsed, ~0s remaining)       "
              "\rComputing: 100% (done in 0s)                         \n");
}

TEST(ProgressFormat, BarWithMessage)
{
    CaptureStdout();
    {
        ProgressBar p(1, 5, "Loading: ");
        ++p;
    }
    EXPECT_EQ(GetCapturedStdout(),
              "\rLoading: [========================================] 100% (done)                         \n");
}

TEST(ProgressStream, RcerrOptionWritesToStderrOnly)
{
    CaptureStdout();
    CaptureStderr();
    {
        ProgressCounter c(2, 0, "Counter: ", RcppSpool::Rcerr);
        ProgressBar b(2, 0, RcppSpool::Rcerr);
        ++c;
        ++c;
        ++b;
        ++b;
    }
    std::string err = GetCapturedStderr();
    std::string out = GetCapturedStdout();
    EXPECT_EQ(out, "");
    EXPECT_EQ(err,
              "\rCounter: 50%  (~0s remaining)       \rCounter: 100% (done)                         \n"
              "\rComputing: [====================                    ] 50%  (~0s remaining)       " +
                  kBarDone);
}

TEST(ProgressStream, SetStreamSwitchesBothWays)
{
    CaptureStdout();
    CaptureStderr();
    {
        ProgressCounter p(2, 0);
        p.setStream(RcppSpool::Rcerr);
        ++p;
        p.setStream(RcppSpool::Rcout);
        ++p;
    }
    EXPECT_EQ(GetCapturedStderr(), "\rComputing: 50%  (~0s remaining)       ");
    EXPECT_EQ(GetCapturedStdout(), kCounterDone);
}

TEST(ProgressCount, OperatorsReturnWhatRcppThreadReturns)
{
    CaptureStdout();
    {
        ProgressCounter p(100, 1000);
        EXPECT_EQ(++p, 1u);   // new count
        EXPECT_EQ(p++, 1u);   // count before
        EXPECT_EQ(p += 5, 7u);
        EXPECT_EQ(p.count(), 7u);
        EXPECT_EQ(p.total(), 100u);
        EXPECT_FALSE(p.done());
    }
    EXPECT_EQ(GetCapturedStdout(), "");  // unfinished, period not reached: nothing drawn
}

TEST(ProgressCount, ConcurrentIncrementsCountExactlyAndFinishOnce)
{
    const int nThreads = 8;
    const std::size_t perThread = 20000;  // ++, ++ and += 2 per round: 4 units
    CaptureStdout();
    {
        ProgressCounter p(nThreads * perThread * 4, 1000);
        std::vector<std::thread> threads;
        for (int t = 0; t < nThreads; ++t)
            threads.emplace_back([&] {
                for (std::size_t i = 0; i < perThread; ++i) {
                    ++p;
                    p++;
                    p += 2;
                }
            });
        for (auto& t : threads) t.join();
        EXPECT_EQ(p.count(), nThreads * perThread * 4);
        EXPECT_TRUE(p.done());  // the thread that completed the count drew the final line
    }
    EXPECT_EQ(GetCapturedStdout(), kCounterDone);
}

TEST(ProgressCount, OverCountingDrawsTheFinalLineOnce)
{
    CaptureStdout();
    {
        ProgressBar p(100, 0.001);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 50; ++i) ++p;  // 200 units for a total of 100
            });
        for (auto& t : threads) t.join();
        EXPECT_EQ(p.count(), 200u);
    }
    std::string out = GetCapturedStdout();
    EXPECT_EQ(occurrences(out, "100% (done)"), 1u) << out;
    EXPECT_EQ(out.substr(out.size() - kBarDone.size()), kBarDone);
}

TEST(ProgressCount, ConcurrentDrawsAreWholeAndOrdered)
{
    // printEvery 0: threads race to draw; each draw must be a whole line and
    // the final one must come last.
    CaptureStdout();
    {
        ProgressCounter p(4000, 0);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int i = 0; i < 1000; ++i) ++p;
            });
        for (auto& t : threads) t.join();
    }
    std::string out = GetCapturedStdout();
    auto lines = draws(out);
    ASSERT_GE(lines.size(), 1u);
    EXPECT_EQ(lines.back(), kCounterDone);
    int lastPct = -1;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
        int pct = -1;
        std::string eta;
        ASSERT_TRUE(parseCounterLine(lines[i], "Computing: ", pct, eta)) << "draw " << i << ": " << lines[i];
        EXPECT_GE(pct, lastPct);  // drawn under one mutex: the count never goes back
        lastPct = pct;
    }
}

TEST(ProgressRate, AtMostOneLinePerPeriod)
{
    const double period = 0.05;
    CaptureStdout();
    auto t0 = std::chrono::steady_clock::now();
    {
        // A count that cannot complete: on Windows sleep_for(200 us) may
        // return at once (its sleeps are whole milliseconds, rounded down).
        ProgressCounter p(1000000000, period);
        auto until = t0 + std::chrono::milliseconds(400);
        while (std::chrono::steady_clock::now() < until) {
            ++p;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto lines = draws(GetCapturedStdout());
    // The first line comes one period after construction, then at least one
    // period apart; no final line (the count is not complete).
    EXPECT_LE(double(lines.size()), secs / period);
    EXPECT_GE(lines.size(), 3u);
    for (auto& l : lines) EXPECT_EQ(l.find("done"), std::string::npos);
}

TEST(ProgressRate, FinalLineIsNotRateLimited)
{
    CaptureStdout();
    {
        ProgressCounter p(3, 1000);
        ++p;
        ++p;
        ++p;
    }
    EXPECT_EQ(GetCapturedStdout(), kCounterDone);
}

TEST(ProgressLifetime, NothingBeforeTheFirstIncrementNorForAnUnfinishedCount)
{
    CaptureStdout();
    {
        ProgressCounter a(0, 0);  // no increment: nothing, even with total 0
        ProgressBar b(10, 1000);
        b += 9;                    // unfinished: no final line (as RcppThread)
    }
    EXPECT_EQ(GetCapturedStdout(), "");
    CaptureStdout();
    {
        ProgressCounter z(0, 0);
        ++z;  // total 0: the first increment completes it
    }
    EXPECT_EQ(GetCapturedStdout(), kCounterDone);
}

TEST(ProgressLifetime, NestedObjectsOnManyThreadsEachFinishOnce)
{
    const int nOuter = 16, nInner = 200;
    CaptureStdout();
    {
        ProgressCounter outer(nOuter, 1000, "Outer: ");
        std::vector<std::thread> threads;
        std::atomic<int> next{0};
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&] {
                for (int k; (k = next.fetch_add(1)) < nOuter;) {
                    ProgressBar inner(nInner, 1000, "Inner " + std::to_string(k) + ": ");
                    std::thread helper([&] {
                        for (int i = 0; i < nInner / 2; ++i) ++inner;
                    });
                    for (int i = 0; i < nInner / 2; ++i) inner++;
                    helper.join();
                    ++outer;
                }
            });
        for (auto& t : threads) t.join();
    }
    std::string out = GetCapturedStdout();
    for (int k = 0; k < nOuter; ++k)
        EXPECT_EQ(occurrences(out, "\rInner " + std::to_string(k) + ": [========================================] "
                                       "100% (done)                         \n"),
                  1u)
            << k;
    EXPECT_EQ(occurrences(out, "\rOuter: 100% (done)                         \n"), 1u);
    EXPECT_EQ(occurrences(out, "100% (done)"), std::size_t(nOuter + 1));
}

TEST(ProgressLifetime, PassedAsBaseClass)
{
    auto work = [](RcppSpool::ProgressPrinter& p, int n) {
        for (int i = 0; i < n; ++i) ++p;
    };
    CaptureStdout();
    {
        ProgressCounter c(5, 1000);
        ProgressBar b(5, 1000);
        work(c, 5);
        work(b, 5);
    }
    EXPECT_EQ(GetCapturedStdout(), kCounterDone + kBarDone);
}

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
TEST(ProgressCost, AnIncrementCostsAFewNanoseconds)
{
    // One thread, nothing due: the hot path alone (an atomic add and a coarse
    // clock read). Best of 3 to shrug off a busy machine; the bound is loose.
    const std::size_t n = 5000000;
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        ProgressCounter p(n + 1, 1000);
        auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < n; ++i) ++p;
        double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
        best = std::min(best, ns);
        EXPECT_EQ(p.count(), n);
    }
    std::printf("[ info ] ProgressCounter ++ on a drawing thread: %.1f ns\n", best);
    // Wine's clock (QueryPerformanceCounter) is several times slower than Windows'.
    if (test_platform::underWine()) GTEST_SKIP() << "timed under wine: " << best << " ns";
    EXPECT_LT(best, 50.0);
}
#endif
