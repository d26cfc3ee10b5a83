// The output matrix of issue 36: every host service used from every kind of
// thread, one cell at a time, each line tagged so that a checker can tell
// whether the lines of each cell arrived whole, on the right stream, none
// lost, and in order for each writer.
//
// One source for every way a client reaches the runtime: RcppSpool's own
// shared library compiles it (.spool_output_cell(), src/RcppSpool.cpp), the
// tests copy it into throwaway clients (a package with Imports, a package
// with LinkingTo only, one built against the headers of ABI 10, a sourceCpp()
// module: tests/testthat/test-output-matrix.R), and the C++ suite includes it
// without R (cpp/tests/test_output_matrix.cpp). It uses the public API only
// (and R's C API where R is there).
//
// A cell is (service, kind). Each of `writers` writers writes `lines` lines
// tagged "@service/label/wW/I", ended by " end" (or " tail": the last two
// lines of the "tail" service, left without a newline when the thread ends):
//   rcout      Rcout, each line built by several <<, "\n" its own <<
//   rcerr      the same through Rcerr
//   endl       even lines Rcout << ... << std::endl, odd lines
//              Rcerr << ... << "\n" << std::flush
//   tail       even lines on Rcout, odd lines on Rcerr; lines-2 and lines-1
//              have no newline: the thread ends with an unfinished line on
//              each stream
//   counter    Rcout lines, and a ProgressCounter ("@counter/label: ")
//              counted once per line, drawn on Rcout
//   bar        Rcerr lines, and a ProgressBar ("@bar/label: ") on Rcerr
//   interrupt  checkUserInterrupt() and isInterrupted() before each Rcout
//              line: no false interrupt, nothing thrown
//   main       onMainThread(): the call writes line 2i on R's main thread
//              (through R's API) and returns 2i; then the writer writes
//              line 2i+1
//   late       the lines of "tail", the second half written while the
//              thread ends: by the destructor of a thread_local the writer
//              made before its first line, so destroyed after the library's
//              own per-thread state (thread and stdthread only: other
//              kinds' threads do not end with the call)
// Kinds of thread (the label is the kind unless given):
//   main       R's main thread (the caller), writers one after the other
//   loop       the global pool's workers: parallelFor(0, writers, ..., writers)
//   pool       tasks of a local ThreadPool(2), then wait()
//   group      TaskGroup tasks run inside the bodies of a parallelFor(0, 2)
//   thread     an RcppSpool::Thread per writer, joined
//   stdthread  a std::thread per writer that the client starts itself,
//              joined with std::thread::join(); for "main" and "counter"
//              R's main thread calls checkUserInterrupt() meanwhile (what
//              serves onMainThread() calls and draws progress there); then
//              the main thread writes Rcout << "" (which releases output)
// runCells() runs several services at once on threads of one kind (thread
// or stdthread): all their writers start together, as a program's first
// call does before anything found the runtime.
#pragma once

#include <RcppSpool.h>

#ifndef RCPPSPOOL_STANDALONE
#include <Rinternals.h>
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace output_cells {

enum Service { rcout, rcerr, endl, tail, counter, bar, interrupt, mainCall, late, nServices };

inline const char* serviceName(int s)
{
    static const char* const names[] = {"rcout", "rcerr", "endl", "tail", "counter", "bar", "interrupt", "main", "late"};
    return s >= 0 && s < nServices ? names[s] : "?";
}
inline int serviceOf(const std::string& name)
{
    for (int s = 0; s < nServices; ++s)
        if (name == serviceName(s)) return s;
    return -1;
}

//! One cell: what its writers share, and what went wrong (besides output).
struct Cell {
    int service = -1;
    std::string kind, label;
    int writers = 0, lines = 0;
    std::unique_ptr<RcppSpool::ProgressPrinter> progress;
    std::mutex m;
    std::string problems;

    void problem(const std::string& what)
    {
        std::lock_guard<std::mutex> lk(m);
        if (problems.size() < 2000) problems += (problems.empty() ? "" : "; ") + what;
    }
};

//! The value the main thread computes for a writer: `x`, through R's API.
inline int onMain(int x)
{
#ifdef RCPPSPOOL_STANDALONE
    return x;
#else
    return INTEGER(Rf_ScalarInteger(x))[0];
#endif
}

//! Writes the tag of line `i` of writer `w` to printer `p` (several <<).
template <class P>
void tag(P& p, const Cell& c, int w, int i)
{
    p << "@" << serviceName(c.service) << "/" << c.label << "/w" << w << "/" << i;
}

inline void writeLines(Cell& c, int w, int service, int from, int to);

//! The "late" service's thread_local: its destructor writes the lines.
struct LateWriter {
    Cell* cell = nullptr;
    int w = 0;
    ~LateWriter()
    {
        if (cell) writeLines(*cell, w, tail, cell->lines / 2, cell->lines);
    }
};

//! What writer `w` of cell `c` does, on whatever thread runs it.
inline void writer(Cell& c, int w)
{
    if (c.service != late) return writeLines(c, w, c.service, 0, c.lines);
    if (c.kind != "thread" && c.kind != "stdthread")
        return c.problem("the late service on a thread that does not end with the call");
    static thread_local LateWriter lateWriter;  // made before anything of RcppSpool's on this thread
    lateWriter.cell = &c;
    lateWriter.w = w;
    // The first half now: the library's per-thread state is made after
    // lateWriter, and so destroyed before its destructor writes the rest.
    writeLines(c, w, tail, 0, c.lines / 2);
}

//! Writes lines [from, to) of writer `w` of cell `c` as `service` does.
inline void writeLines(Cell& c, int w, int service, int from, int to)
{
    using RcppSpool::Rcerr;
    using RcppSpool::Rcout;
    try {
        for (int i = from; i < to; ++i) {
            switch (service) {
            case rcout:
                tag(Rcout, c, w, i);
                Rcout << " end" << "\n";
                break;
            case rcerr:
                tag(Rcerr, c, w, i);
                Rcerr << " end" << "\n";
                break;
            case endl:
                if (i % 2 == 0) {
                    tag(Rcout, c, w, i);
                    Rcout << " end" << std::endl;
                } else {
                    tag(Rcerr, c, w, i);
                    Rcerr << " end" << "\n" << std::flush;
                }
                break;
            case tail: {
                const bool last = i >= c.lines - 2;
                if (i % 2 == 0) {
                    tag(Rcout, c, w, i);
                    Rcout << (last ? " tail" : " end");
                    if (!last) Rcout << "\n";
                } else {
                    tag(Rcerr, c, w, i);
                    Rcerr << (last ? " tail" : " end");
                    if (!last) Rcerr << "\n";
                }
                break;
            }
            case counter:
                tag(Rcout, c, w, i);
                Rcout << " end" << "\n";
                ++*c.progress;
                break;
            case bar:
                tag(Rcerr, c, w, i);
                Rcerr << " end" << "\n";
                ++*c.progress;
                break;
            case interrupt:
                RcppSpool::checkUserInterrupt();
                if (RcppSpool::isInterrupted()) c.problem("isInterrupted() true without an interrupt");
                tag(Rcout, c, w, i);
                Rcout << " end" << "\n";
                break;
            case mainCall: {
                Cell* cell = &c;
                const int k = 2 * i;
                int got = RcppSpool::onMainThread([cell, w, k] {
                              tag(Rcout, *cell, w, k);
                              Rcout << " end" << "\n";
                              return onMain(k);
                          }).get();
                if (got != k) c.problem("onMainThread() returned " + std::to_string(got) + ", not " + std::to_string(k));
                tag(Rcout, c, w, k + 1);
                Rcout << " end" << "\n";
                break;
            }
            }
        }
    } catch (const std::exception& e) {
        c.problem(std::string("writer ") + std::to_string(w) + " threw: " + e.what());
    } catch (...) {
        c.problem("writer " + std::to_string(w) + " threw");
    }
}

//! Makes cell `c`'s progress object (on the calling thread: R's main thread).
inline void startProgress(Cell& c)
{
    const std::size_t total = static_cast<std::size_t>(c.writers) * static_cast<std::size_t>(c.lines);
    if (c.service == counter)
        c.progress.reset(new RcppSpool::ProgressCounter(total, 0.002, "@counter/" + c.label + ": "));
    else if (c.service == bar)
        c.progress.reset(new RcppSpool::ProgressBar(total, 0.002, "@bar/" + c.label + ": ", RcppSpool::Rcerr));
}

//! Runs the writers of `cells` on threads of `kind`: all at once for thread
//! and stdthread, one cell after the other for the rest.
inline void runKind(const std::vector<Cell*>& cells, const std::string& kind)
{
    for (Cell* c : cells) startProgress(*c);
    if (kind == "thread") {
        std::vector<RcppSpool::Thread> ts;
        for (Cell* c : cells)
            for (int w = 0; w < c->writers; ++w) ts.emplace_back([c, w] { writer(*c, w); });
        for (auto& t : ts) t.join();
    } else if (kind == "stdthread") {
        bool serve = false;
        int total = 0;
        for (Cell* c : cells) {
            serve = serve || c->service == mainCall || c->service == counter;
            total += c->writers;
        }
        std::atomic<int> done{0};
        std::vector<std::thread> ts;
        for (Cell* c : cells)
            for (int w = 0; w < c->writers; ++w)
                ts.emplace_back([c, w, &done] {
                    writer(*c, w);
                    ++done;
                });
        if (serve) {
            try {
                while (done.load() < total) {
                    RcppSpool::checkUserInterrupt();
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
            } catch (...) {
                for (auto& t : ts) t.join();
                throw;
            }
        }
        for (auto& t : ts) t.join();
        RcppSpool::Rcout << "";
    } else {
        for (Cell* cp : cells) {
            Cell& c = *cp;
            const int n = c.writers;
            if (kind == "main") {
                for (int w = 0; w < n; ++w) writer(c, w);
            } else if (kind == "loop") {
                RcppSpool::parallelFor(0, n, [&c](std::ptrdiff_t w) { writer(c, static_cast<int>(w)); },
                                       static_cast<std::size_t>(n));
            } else if (kind == "pool") {
                RcppSpool::ThreadPool pool(2);
                for (int w = 0; w < n; ++w) pool.push([&c, w] { writer(c, w); });
                pool.wait();
            } else if (kind == "group") {
                RcppSpool::parallelFor(0, 2, [&c, n](std::ptrdiff_t half) {
                    RcppSpool::TaskGroup g;
                    for (int w = static_cast<int>(half); w < n; w += 2) g.run([&c, w] { writer(c, w); });
                    g.wait();
                }, 2);
            } else {
                c.problem("unknown kind of thread: " + kind);
            }
        }
    }
    // The progress objects go here, on the caller's thread (their final line
    // if the count completed and it was not drawn yet).
    for (Cell* c : cells) c->progress.reset();
}

//! Runs the cells `services` (names) on threads of `kind`, tagged with
//! `label` (the kind if empty); returns each cell's problems ("" if none).
inline std::vector<std::string> runCells(const std::vector<std::string>& services, const std::string& kind,
                                         std::string label, int writers, int lines)
{
    if (label.empty()) label = kind;
    std::vector<std::unique_ptr<Cell>> cells;
    std::vector<Cell*> raw;
    std::vector<std::string> out;
    for (const std::string& s : services) {
        cells.emplace_back(new Cell);
        Cell& c = *cells.back();
        c.service = serviceOf(s);
        c.kind = kind;
        c.label = label;
        c.writers = writers;
        c.lines = lines;
        if (c.service < 0) c.problem("unknown service: " + s);
        raw.push_back(&c);
    }
    try {
        runKind(raw, kind);
    } catch (const std::exception& e) {
        raw.front()->problem(std::string("the cell threw: ") + e.what());
    } catch (...) {
        raw.front()->problem("the cell threw");
    }
    for (Cell* c : raw) out.push_back(c->problems);
    return out;
}

#ifndef RCPPSPOOL_STANDALONE
//! R's entry: services (character), kind, label (character(1)), writers,
//! lines (integer(1)); a character vector of problems, one per service.
inline SEXP runCellsR(SEXP services, SEXP kind, SEXP label, SEXP writers, SEXP lines)
{
    std::vector<std::string> problems;
    {
        std::vector<std::string> svc;
        for (R_xlen_t i = 0; i < XLENGTH(services); ++i) svc.push_back(CHAR(STRING_ELT(services, i)));
        problems = runCells(svc, CHAR(STRING_ELT(kind, 0)), CHAR(STRING_ELT(label, 0)), Rf_asInteger(writers),
                            Rf_asInteger(lines));
    }
    SEXP out = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(problems.size())));
    for (std::size_t i = 0; i < problems.size(); ++i)
        SET_STRING_ELT(out, static_cast<R_xlen_t>(i), Rf_mkChar(problems[i].c_str()));
    UNPROTECT(1);
    return out;
}
#endif

}  // namespace output_cells
