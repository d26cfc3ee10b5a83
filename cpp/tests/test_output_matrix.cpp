// The output matrix of issue 36 in standalone C++ (no R): each host service
// (Rcout, Rcerr, std::endl and std::flush, a line left unfinished at thread
// exit, ProgressCounter and ProgressBar, checkUserInterrupt(), onMainThread())
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
#include <regex>
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

const char* const kServices[] = {"rcout", "rcerr", "endl", "tail", "counter", "bar", "interrupt", "main"};
const char* const kKinds[] = {"main", "loop", "pool", "group", "thread", "stdthread"};

std::vector<CellSpec> allCells()
{
    const std::vector<std::string> first = {"rcout", "rcerr", "endl", "tail", "interrupt"};
    std::vector<CellSpec> cells = {{first, "stdthread", "firststdthread", ""}, {first, "thread", "firstthread", ""}};
    for (const char* k : kKinds)
        for (const char* s : kServices) {
            CellSpec c{{s}, k, k, ""};
            const std::string kind = k;
            if (std::string(s) == "tail" && kind != "thread" && kind != "stdthread")
                c.notApplicable = kind == "main" ? "the calling thread does not exit (a line it leaves open is its own)"
                                                 : "a pool's worker runs many tasks and outlives the call: its "
                                                   "unfinished line is continued by the next task it runs";
            cells.push_back(c);
        }
    return cells;
}

struct Line {
    std::string service, label;
    int w, i;
    bool tail;
};
struct Parsed {
    std::vector<Line> lines;
    std::vector<std::string> finals, mids, garbage;  // progress: "service/label"
};

//! The pieces of one stream's text (see om_parse() in test-output-matrix.R).
Parsed parse(const std::string& text)
{
    static const std::regex mid("^@(counter|bar)/([a-z]+): (\\[[= ]{40}\\] )?[0-9]+%  \\(~[0-9dhms]+ remaining\\)       ");
    static const std::regex final("^@(counter|bar)/([a-z]+): (\\[[= ]{40}\\] )?100% \\(done\\) {25}$");
    static const std::regex line("^@([a-z]+)/([a-z]+)/w([0-9]+)/([0-9]+) (end|tail)$");
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
    std::smatch m;
    for (std::string s : segs) {
        if (std::regex_match(s, m, final)) {
            p.finals.push_back(m[1].str() + "/" + m[2].str());
            continue;
        }
        if (std::regex_search(s, m, mid)) {
            p.mids.push_back(m[1].str() + "/" + m[2].str());
            s = m.suffix().str();
            if (s.empty()) continue;
        }
        if (std::regex_match(s, m, line))
            p.lines.push_back({m[1].str(), m[2].str(), std::stoi(m[3].str()), std::stoi(m[4].str()), m[5].str() == "tail"});
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
        if (service == "endl" || service == "tail") s = i % 2;
        if (s == stream) out.push_back(i);
    }
    return out;
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
                svc == "tail" ? std::set<int>{kLines - 2, kLines - 1} : std::set<int>{};
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
