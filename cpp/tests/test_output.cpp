// Rcout and Rcerr without R (-DRCPPSPOOL_STANDALONE): lines built by many <<
// on several threads arrive whole, flags and widths last across <<, flush and
// endl hand over an unfinished line, and a long line built piece by piece
// costs linear time (each << used to copy the whole unfinished line).
//
//   g++ -std=c++17 -O2 -DRCPPSPOOL_STANDALONE -Iinst/include
//       cpp/tests/test_output.cpp -lgtest -lgtest_main -pthread
#include <RcppSpool.h>

#include <gtest/gtest.h>

#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using testing::internal::CaptureStderr;
using testing::internal::CaptureStdout;
using testing::internal::GetCapturedStderr;
using testing::internal::GetCapturedStdout;

namespace {

std::vector<std::string> splitLines(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

TEST(Output, LinesBuiltByManyInsertionsOnSeveralThreadsArriveWhole)
{
    constexpr int threads = 4, lines = 500;
    CaptureStdout();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t)
        ts.emplace_back([=] {
            for (int i = 0; i < lines; ++i)
                RcppSpool::Rcout << "thread " << t << " line " << i << " of " << lines << " end\n";
        });
    for (auto& th : ts) th.join();
    const std::vector<std::string> got = splitLines(GetCapturedStdout());
    ASSERT_EQ(got.size(), static_cast<std::size_t>(threads * lines));
    std::map<int, int> next;
    for (const std::string& l : got) {
        int t = -1, i = -1, n = -1;
        char end[4] = {};
        ASSERT_EQ(std::sscanf(l.c_str(), "thread %d line %d of %d %3s", &t, &i, &n, end), 4) << l;
        EXPECT_EQ(std::string(end), "end") << l;
        EXPECT_EQ(i, next[t]++) << "lines of thread " << t << " out of order";
    }
}

TEST(Output, FormatFlagsAndWidthsLastAcrossInsertions)
{
    CaptureStdout();
    std::thread([] {
        RcppSpool::Rcout << std::fixed << std::setprecision(2) << 3.14159 << " " << std::setw(5) << 42 << " "
                         << 2.5 << "\n";
    }).join();
    EXPECT_EQ(GetCapturedStdout(), "3.14    42 2.50\n");
}

TEST(Output, FlushAndEndlHandOverAnUnfinishedLine)
{
    CaptureStdout();
    std::thread([] {
        RcppSpool::Rcout << "no newline yet" << std::flush;
        RcppSpool::Rcout << " and more" << std::endl;
        RcppSpool::Rcout << "kept until the next line end";
    }).join();
    // The last piece stays with its thread until a line end, a flush or
    // the thread's end (a plain std::thread's too: it had been lost).
    EXPECT_EQ(GetCapturedStdout(), "no newline yet and more\nkept until the next line end");
    CaptureStdout();
    std::thread([] { RcppSpool::Rcout << "a\rb\nc" << std::flush; }).join();
    EXPECT_EQ(GetCapturedStdout(), "a\rb\nc");
}

TEST(Output, AThreadsLastTextWithoutNewlineIsWrittenWhenItEnds)
{
    CaptureStdout();
    CaptureStderr();
    RcppSpool::Thread t([] {
        RcppSpool::Rcout << "out tail";
        RcppSpool::Rcerr << "err tail";
    });
    t.join();
    const std::string err = GetCapturedStderr();
    EXPECT_EQ(GetCapturedStdout(), "out tail");
    EXPECT_EQ(err, "err tail");
}

TEST(Output, ErrorStreamIsSeparate)
{
    CaptureStdout();
    CaptureStderr();
    std::thread([] {
        RcppSpool::Rcerr << "to err ";
        RcppSpool::Rcout << "to out ";
        RcppSpool::Rcerr << "line\n";
        RcppSpool::Rcout << "line\n";
    }).join();
    const std::string err = GetCapturedStderr();
    EXPECT_EQ(GetCapturedStdout(), "to out line\n");
    EXPECT_EQ(err, "to err line\n");
}

// A thread_local made before the thread's first Rcout is destroyed after the
// library's per-thread state (the format and the unfinished line): what its
// destructor writes used to go into the destroyed objects (freed memory, a
// crash or the text lost). Now a second per-thread state takes it, whole
// lines, and the last text without a newline still arrives.
struct WritesWhenDestroyed {
    int t = -1;
    ~WritesWhenDestroyed()
    {
        if (t < 0) return;
        for (int i = 0; i < 3; ++i) RcppSpool::Rcout << "late " << t << " line " << i << " end\n";
        RcppSpool::Rcerr << "late " << t << " err" << " end" << std::endl;
        RcppSpool::Rcout << "late " << t << " tail";
    }
};

TEST(Output, TextWrittenWhileAThreadEndsArrivesWhole)
{
#if defined(__MINGW32__)
    GTEST_SKIP() << "mingw-w64: the per-thread state is held through pthread keys there (engine/thread_local_object.h), which may be destroyed before C++ thread_locals: text or futures used while a thread ends are not yet safe there";
#endif
    CaptureStdout();
    CaptureStderr();
    std::vector<std::thread> ts;
    std::vector<RcppSpool::Thread> rs;
    auto body = [](int t) {
        static thread_local WritesWhenDestroyed last;
        last.t = t;
        RcppSpool::Rcout << "early " << t << "\n";
    };
    for (int t = 0; t < 2; ++t) ts.emplace_back(body, t);
    for (int t = 2; t < 4; ++t) rs.emplace_back(body, t);
    for (auto& th : ts) th.join();
    for (auto& th : rs) th.join();
    const std::string err = GetCapturedStderr();
    const std::string out = GetCapturedStdout();
    for (int t = 0; t < 4; ++t) {
        for (int i = 0; i < 3; ++i)
            EXPECT_NE(out.find("late " + std::to_string(t) + " line " + std::to_string(i) + " end\n"), std::string::npos) << out;
        EXPECT_NE(out.find("late " + std::to_string(t) + " tail"), std::string::npos) << out;
        EXPECT_NE(err.find("late " + std::to_string(t) + " err end\n"), std::string::npos) << err;
    }
}

// 200,000 pieces of 10 characters: the quadratic version copied 2 MB on
// average per <<, 400 GB in all (minutes); the linear one takes milliseconds.
// The result is checked, not the time: a quadratic regression makes this test
// hit CTest's time limit.
TEST(Output, LongLineFromManyPiecesArrivesWhole)
{
    constexpr int pieces = 200000;
    CaptureStdout();
    std::thread([=] {
        for (int i = 0; i < pieces; ++i) RcppSpool::Rcout << "0123456789";
        RcppSpool::Rcout << "\n";
    }).join();
    const std::string out = GetCapturedStdout();
    ASSERT_EQ(out.size(), static_cast<std::size_t>(pieces) * 10 + 1);
    EXPECT_EQ(out.find('\n'), out.size() - 1);
    EXPECT_EQ(out.compare(0, 20, "01234567890123456789"), 0);
}

}  // namespace
