// The output matrix of issue 36 in standalone C++ (no R): each host service
// (Rcout, Rcerr, std::endl and std::flush, a line left unfinished at thread
// exit, ProgressCounter and ProgressBar, checkUserInterrupt(), onMainThread(),
// and lines written while the thread ends, by a thread_local's destructor)
// from each kind of thread (the calling thread, a global parallelFor's
// workers, a local ThreadPool's tasks, TaskGroup tasks nested in a loop,
// RcppSpool::Thread, a plain std::thread), one test per cell. The cells are
// src/output_cells.h, the same code the R tests compile into RcppSpool and
// its clients (tests/testthat/test-output-matrix.R). Each cell's lines must
// arrive whole, on the right stream, none lost or doubled, and in order for
// each writer; a progress object's final "100% (done)" line once, on its
// stream. Without R, Rcout is stdout, Rcerr stderr, any thread draws
// progress, onMainThread() runs the call at once and checkUserInterrupt()
// never throws without an interrupt.
#include "../../src/output_cells.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using testing::internal::CaptureStderr;
using testing::internal::CaptureStdout;
using testing::internal::GetCapturedStderr;
using testing::internal::GetCapturedStdout;

namespace {

constexpr int kWriters = 4;
constexpr int kLines = 100;  // even: see the tail service

struct CellSpec {
    std::vector<std::string> services;  // one, or several at once (the "first" cells)
    std::string kind, label;
    std::string notApplicable;  // why not, if it cannot apply
};

const char* const kServices[] = {"rcout", "rcerr", "endl", "tail", "counter", "bar", "interrupt", "main", "late"};
const char* const kKinds[] = {"main", "loop", "pool", "group", "thread", "stdthread"};

std::vector<CellSpec> allCells()
{
#if defined(__MINGW32__)
    const std::vector<std::string> first = {"rcout", "rcerr", "endl", "tail", "interrupt"};  // no late: see below
#else
    const std::vector<std::string> first = {"rcout", "rcerr", "endl", "tail", "interrupt", "late"};
#endif
    std::vector<CellSpec> cells = {{first, "stdthread", "firststdthread", ""}, {first, "thread", "firstthread", ""}};
    for (const char* k : kKinds)
        for (const char* s : kServices) {
            CellSpec c{{s}, k, k, ""};
            const std::string kind = k;
            const bool atExit = std::string(s) == "tail" || std::string(s) == "late";
            if (atExit && kind != "thread" && kind != "stdthread")
                c.notApplicable = kind == "main" ? "the calling thread does not exit (a line it leaves open is its own)"
                                                 : "a pool's worker runs many tasks and outlives the call: its "
                                                   "unfinished line is continued by the next task it runs";
#if defined(__MINGW32__)
            if (std::string(s) == "late") c.notApplicable = "mingw-w64: the per-thread state is held through pthread keys there (engine/thread_local_object.h), which may be destroyed before C++ thread_locals: text or futures used while a thread ends are not yet safe there";
#endif
            cells.push_back(c);
        }
    return cells;
}

struct Line {
    std::string service, label;
    int w = -1, i = -1;
    bool tail = false;
};
struct Parsed {
    std::vector<Line> lines;
    std::vector<std::string> finals, mids, garbage;  // progress: "service/label"
};

// A small reader of the texts (std::regex trips g++ 12's -Wmaybe-uninitialized
// under -Werror in the ASan build).
struct Reader {
    const std::string& s;
    std::size_t at = 0;
    bool lit(const std::string& t)
    {
        if (s.compare(at, t.size(), t) != 0) return false;
        at += t.size();
        return true;
    }
    bool word(std::string& out)  // [a-z]+
    {
        const std::size_t from = at;
        while (at < s.size() && s[at] >= 'a' && s[at] <= 'z') ++at;
        out = s.substr(from, at - from);
        return at > from;
    }
    bool number(int& out)  // [0-9]+
    {
        const std::size_t from = at;
        while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
        if (at == from || at - from > 9) return false;
        out = std::stoi(s.substr(from, at - from));
        return true;
    }
    bool end() const { return at == s.size(); }
};

//! "@counter/label: " or "@bar/label: [<40 of = or blank>] ", then "37%  (~2s
//! remaining)       " (mid: `rest` is what follows) or "100% (done)" and 25
//! blanks to the end (final). Sets `id` to "service/label".
bool progress(const std::string& seg, std::string& id, bool& final, std::string& rest)
{
    Reader r{seg};
    std::string svc, label;
    if (!r.lit("@") || !r.word(svc) || (svc != "counter" && svc != "bar") || !r.lit("/") || !r.word(label) ||
        !r.lit(": "))
        return false;
    if (r.lit("[")) {
        for (int k = 0; k < 40; ++k)
            if (r.at < seg.size() && (seg[r.at] == '=' || seg[r.at] == ' '))
                ++r.at;
            else
                return false;
        if (!r.lit("] ")) return false;
    }
    int pct = 0;
    if (!r.number(pct) || !r.lit("%")) return false;
    id = svc + "/" + label;
    if (pct == 100 && r.lit(" (done)" + std::string(25, ' ')) && r.end()) {
        final = true;
        return true;
    }
    if (!r.lit("  (~")) return false;
    const std::size_t from = r.at;
    while (r.at < seg.size() && std::string("0123456789dhms").find(seg[r.at]) != std::string::npos) ++r.at;
    if (r.at == from || !r.lit(" remaining)" + std::string(7, ' '))) return false;
    final = false;
    rest = seg.substr(r.at);
    return true;
}

//! "@service/label/wW/I end" or "... tail", the whole segment.
bool writerLine(const std::string& seg, Line& l)
{
    Reader r{seg};
    if (!r.lit("@") || !r.word(l.service) || !r.lit("/") || !r.word(l.label) || !r.lit("/w") || !r.number(l.w) ||
        !r.lit("/") || !r.number(l.i) || !r.lit(" "))
        return false;
    l.tail = r.lit("tail");
    return (l.tail || r.lit("end")) && r.end();
}

//! The pieces of one stream's text (see om_parse() in test-output-matrix.R).
Parsed parse(const std::string& text)
{
    std::vector<std::string> segs;
    std::string cur;
    auto push = [&segs](std::string s) {
        // A tail (no newline at its thread's end) may be followed on its line by what comes next.
        for (std::size_t at; (at = s.find(" tail")) != std::string::npos && at + 5 < s.size();) {
            segs.push_back(s.substr(0, at + 5));
            s.erase(0, at + 5);
        }
        if (!s.empty()) segs.push_back(s);
    };
    for (char ch : text) {
        if (ch == '\r' || ch == '\n') {
            push(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    push(cur);
    Parsed p;
    for (std::string s : segs) {
        std::string id, rest;
        bool final = false;
        if (progress(s, id, final, rest)) {
            (final ? p.finals : p.mids).push_back(id);
            if (final) continue;
            s = rest;
            if (s.empty()) continue;
        }
        Line l;
        if (writerLine(s, l))
            p.lines.push_back(l);
        else
            p.garbage.push_back(s);
    }
    return p;
}

//! What each writer of `service` writes to stdout (0) and stderr (1).
std::vector<int> expected(const std::string& service, int stream)
{
    std::vector<int> out;
    const int n = service == "main" ? 2 * kLines : kLines;
    for (int i = 0; i < n; ++i) {
        int s = 0;
        if (service == "rcerr" || service == "bar") s = 1;
        if (service == "endl" || service == "tail" || service == "late") s = i % 2;
        if (s == stream) out.push_back(i);
    }
    return out;
}

// The reader itself: what it must take apart, and what it must call torn.
TEST(OutputMatrixReader, TellsWholeLinesProgressAndTornText)
{
    const Parsed p = parse("@rcout/loop/w1/7 end\n\r@counter/loop: 37%  (~0s remaining)       @rcout/loop/w2/0 end\n"
                           "\r@bar/pool: [====                                    ] 10%  (~1m2s remaining)       "
                           "\r@bar/pool: [========================================] 100% (done)" + std::string(25, ' ') +
                           "\n@tail/thread/w0/98 tail@tail/thread/w1/0 end\n@rcout/thr@rcout/thread/w3/9 end\n"
                           "@rcout/loop/w1/8 e\n");
    ASSERT_EQ(p.lines.size(), 4u);
    EXPECT_EQ(p.lines[1].w, 2);
    EXPECT_TRUE(p.lines[2].tail);
    EXPECT_EQ(p.lines[3].label, "thread");
    EXPECT_EQ(p.mids, (std::vector<std::string>{"counter/loop", "bar/pool"}));
    EXPECT_EQ(p.finals, std::vector<std::string>{"bar/pool"});
    EXPECT_EQ(p.garbage, (std::vector<std::string>{"@rcout/thr@rcout/thread/w3/9 end", "@rcout/loop/w1/8 e"}));
}

class OutputMatrix : public testing::TestWithParam<CellSpec> {};

TEST_P(OutputMatrix, LinesArriveWholeOnTheRightStreamNoneLostInOrder)
{
    const CellSpec& cell = GetParam();
    if (!cell.notApplicable.empty()) GTEST_SKIP() << "cannot apply: " << cell.notApplicable;
    CaptureStdout();
    CaptureStderr();
    const std::vector<std::string> problems =
        output_cells::runCells(cell.services, cell.kind, cell.label, kWriters, kLines);
    const std::string err = GetCapturedStderr();
    const std::string out = GetCapturedStdout();
    const Parsed streams[2] = {parse(out), parse(err)};
    for (const Parsed& p : streams)
        EXPECT_TRUE(p.garbage.empty()) << p.garbage.size() << " torn pieces, the first: '" << p.garbage.front() << "'";
    for (std::size_t k = 0; k < cell.services.size(); ++k) {
        const std::string& svc = cell.services[k];
        SCOPED_TRACE(svc + "/" + cell.label);
        EXPECT_EQ(problems[k], "");
        for (int w = 0; w < kWriters; ++w) {
            std::set<int> tails;
            for (int s = 0; s < 2; ++s) {
                std::vector<int> got;
                for (const Line& l : streams[s].lines)
                    if (l.service == svc && l.label == cell.label && l.w == w) {
                        got.push_back(l.i);
                        if (l.tail) tails.insert(l.i);
                    }
                EXPECT_EQ(got, expected(svc, s)) << "writer " << w << " on " << (s ? "stderr" : "stdout");
            }
            const std::set<int> wantTails =
                svc == "tail" || svc == "late" ? std::set<int>{kLines - 2, kLines - 1} : std::set<int>{};
            EXPECT_EQ(tails, wantTails) << "writer " << w << ": lines without a newline";
        }
        if (svc == "counter" || svc == "bar") {
            const int right = svc == "counter" ? 0 : 1;
            const std::string id = svc + "/" + cell.label;
            EXPECT_EQ(std::count(streams[right].finals.begin(), streams[right].finals.end(), id), 1)
                << "final \"100% (done)\" lines";
            EXPECT_EQ(std::count(streams[1 - right].finals.begin(), streams[1 - right].finals.end(), id) +
                          std::count(streams[1 - right].mids.begin(), streams[1 - right].mids.end(), id),
                      0)
                << "progress lines on the wrong stream";
        }
    }
}

std::string cellName(const testing::TestParamInfo<CellSpec>& info)
{
    const CellSpec& c = info.param;
    std::string name = (c.services.size() > 1 ? std::string("several") : c.services[0]) + "_" + c.label;
    return name;
}

INSTANTIATE_TEST_SUITE_P(Cells, OutputMatrix, testing::ValuesIn(allCells()), cellName);

}  // namespace
