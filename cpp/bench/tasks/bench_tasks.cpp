// bench_tasks: a task-parallel benchmark suite in the spirit of INNCABS
// (Thoman et al., "On the Quality of Implementation of the C++11 Thread
// Support Library"). Ten programs covering the shapes of task parallelism,
// each run sequentially and with RcppSpool::async (with and without
// std::launch::deferred in the policy), RcppSpool::TaskGroup,
// tbb::task_group, OpenMP tasks and std::async, with the same task
// granularity, on the same number of threads; each run's result is verified.
// Two grains (--grain): the tuned cutoffs, and a task per tiny call. Two
// allocator settings (--malloc): glibc's defaults, in a fresh process (a
// re-execution of this binary), and setUpAllocator()'s equalised ones.
// See README.md in this folder for the options and the columns.
#include "harness.h"

#include "alignment.h"
#include "bank.h"
#include "fft.h"
#include "fib.h"
#include "knapsack.h"
#include "mergesort.h"
#include "nqueens.h"
#include "sparselu.h"
#include "strassen.h"
#include "uts.h"

#include <fcntl.h>

#include <fstream>
#include <map>

using namespace bench;

namespace {

//! The allocator settings a pass runs with (--malloc).
//!   equalised: setUpAllocator()'s mallopt calls, so that malloc costs the
//!     same whichever thread allocates (see harness.h);
//!   dflt: glibc's own settings, as users run: a process in which mallopt
//!     was never called.
enum class Malloc { equalised, dflt };

const char* mallocName(Malloc m) { return m == Malloc::equalised ? "equalised" : "default"; }

struct Options {
    bool quick = false;
    int reps = 3;
    std::vector<std::string> only;
    std::vector<Method> methods = allMethods();
    std::vector<Grain> grains{Grain::coarse};
    std::vector<Malloc> mallocs{Malloc::dflt, Malloc::equalised};
    std::string csv;
    double asyncTimeout = 0;  // 0: automatic
    double asyncVmGb = 16;
    double caseTimeout = 600;
    double pause = 0.05;
    int rowsFd = -1;  // internal (--rows-fd): a child pass writes its rows there
};

void usage()
{
    std::printf(
        "usage: bench_tasks [options]\n"
        "  --quick            small sizes (a few ms per run), for tests\n"
        "  --reps N           repetitions per program and method (default 3); the table shows medians\n"
        "  --only A,B         only these programs (see --list)\n"
        "  --methods A,B      only these methods: seq, spool-async, spool-optional, spool-group, tbb,\n"
        "                     omp, std-async (seq always runs: it is the baseline)\n"
        "  --grain G          coarse (default: the tuned cutoffs), fine (a task per tiny call; only\n"
        "                     the programs that have such a form, see --list) or both\n"
        "  --malloc M         equalised (mallopt as in setUpAllocator()), default (glibc's settings,\n"
        "                     in a process that never called mallopt) or both (default; the default\n"
        "                     pass runs first, in a fresh child process: this binary re-executed)\n"
        "  --csv FILE         also write every cell, with all repetition times, to FILE\n"
        "  --threads N        threads per parallel method (default 2)\n"
        "  --async-timeout S  std::async's time limit per program (default 10 s, 3 s with --quick,\n"
        "                     + 3 x reps x sequential)\n"
        "  --async-vm-gb G    address-space limit of std::async's child process (default 16 GB)\n"
        "  --case-timeout S   give up (exit 3) if one in-process cell takes longer (default 600 s)\n"
        "  --pause S          pause before each timed run, so spinning threads settle (default 0.05)\n"
        "  --list             list the programs and their grains\n");
}

std::vector<std::string> splitList(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

std::vector<std::unique_ptr<Benchmark>> makeSuite()
{
    std::vector<std::unique_ptr<Benchmark>> s;
    s.emplace_back(new fib::Bench);
    s.emplace_back(new mergesort::Bench);
    s.emplace_back(new strassen::Bench);
    s.emplace_back(new fft::Bench);
    s.emplace_back(new nqueens::Bench);
    s.emplace_back(new uts::Bench);
    s.emplace_back(new knapsack::Bench);
    s.emplace_back(new sparselu::Bench);
    s.emplace_back(new alignment::Bench);
    s.emplace_back(new bank::Bench);
    return s;
}

std::string loadAverage()
{
    std::ifstream f("/proc/loadavg");
    double a = 0, b = 0, c = 0;
    if (!(f >> a >> b >> c)) return "?";
    char s[64];
    std::snprintf(s, sizeof s, "%.2f %.2f %.2f", a, b, c);
    return s;
}

// ---- a watchdog for the in-process methods -----------------------------------

struct Watchdog {
    std::atomic<double> deadline{1e300};  // seconds on the steady clock
    std::mutex m;
    std::string label;
    static double now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }
    void arm(const std::string& what, double seconds)
    {
        {
            std::lock_guard<std::mutex> lk(m);
            label = what;
        }
        deadline.store(now() + seconds);
    }
    void disarm() { deadline.store(1e300); }
    void start()
    {
        std::thread([this] {
            for (;;) {
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                if (now() > deadline.load()) {
                    std::lock_guard<std::mutex> lk(m);
                    std::fprintf(stderr, "\nbench_tasks: %s did not finish in time (--case-timeout); giving up\n",
                                 label.c_str());
                    std::fflush(stdout);
                    _exit(3);
                }
            }
        }).detach();
    }
};

// ---- rows -----------------------------------------------------------------------

struct Row {
    std::string program, shape, params, load;
    Grain grain = Grain::coarse;
    Malloc malloc = Malloc::equalised;
    Method method = Method::seq;
    Outcome out;
    double medianSec = NAN, speedup = NAN, cpuSec = NAN;
};

const int kMethodWidth = 32;  // "RcppSpool::async(async|deferred)"

void printHeader()
{
    std::printf("%-10s %-6s %-*s %9s %8s %9s %8s %7s  %s\n", "program", "grain", kMethodWidth, "method", "median s",
                "speedup", "cpu s", "verified", "threads", "note");
}

void printRow(const Row& r)
{
    char med[32] = "-", sp[32] = "-", cpu[32] = "-";
    if (r.out.ok() && !r.out.times.empty()) {
        std::snprintf(med, sizeof med, "%.3f", r.medianSec);
        std::snprintf(sp, sizeof sp, "%.2f", r.speedup);
        std::snprintf(cpu, sizeof cpu, "%.3f", r.cpuSec);
    }
    std::printf("%-10s %-6s %-*s %9s %8s %9s %8s %7d  %s\n", r.program.c_str(), grainName(r.grain), kMethodWidth,
                methodName(r.method), med, sp, cpu, r.out.ok() ? (r.out.verified ? "yes" : "NO") : "-",
                r.out.threads, r.out.ok() ? "" : r.out.status.c_str());
    std::fflush(stdout);
}

void writeCsv(const std::string& file, const std::vector<Row>& rows, const Options& o)
{
    std::ofstream f(file);
    f << "program,grain,malloc,shape,method,status,verified,threads,reps,median_s,speedup,times_s,cpu_s,params,load,"
         "nthreads,quick\n";
    for (const Row& r : rows) {
        std::string times, cpu;
        for (double t : r.out.times) times += (times.empty() ? "" : ";") + std::to_string(t);
        for (double t : r.out.cpu) cpu += (cpu.empty() ? "" : ";") + std::to_string(t);
        auto quote = [](const std::string& s) {
            std::string q = "\"";
            for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
            return q + "\"";
        };
        f << r.program << ',' << grainName(r.grain) << ',' << mallocName(r.malloc) << ',' << quote(r.shape) << ','
          << quote(methodName(r.method)) << ',' << quote(r.out.status) << ',' << (r.out.verified ? "yes" : "no")
          << ',' << r.out.threads << ',' << r.out.times.size() << ','
          << (r.out.ok() ? std::to_string(r.medianSec) : "") << ',' << (r.out.ok() ? std::to_string(r.speedup) : "")
          << ',' << times << ',' << cpu << ',' << quote(r.params) << ',' << quote(r.load) << ',' << numThreads() << ','
          << (o.quick ? 1 : 0) << '\n';
    }
}

// The rows of a child pass (--malloc both runs the default pass in a child
// process), sent to the parent one per line, tab-separated.

std::string oneLine(std::string s)
{
    for (char& c : s)
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    return s;
}

std::string serialise(const Row& r)
{
    std::ostringstream l;
    l.precision(17);
    l << oneLine(r.program) << '\t' << oneLine(r.shape) << '\t' << oneLine(r.params) << '\t' << oneLine(r.load)
      << '\t' << static_cast<int>(r.grain) << '\t' << static_cast<int>(r.malloc) << '\t' << methodKey(r.method)
      << '\t' << oneLine(r.out.status) << '\t' << (r.out.verified ? 1 : 0) << '\t' << r.out.threads << '\t'
      << r.medianSec << '\t' << r.speedup << '\t' << r.cpuSec << '\t' << r.out.times.size();
    for (double t : r.out.times) l << '\t' << t;
    for (double t : r.out.cpu) l << '\t' << t;
    l << '\n';
    return l.str();
}

bool deserialise(const std::string& line, Row& r)
{
    std::vector<std::string> f;
    std::stringstream in(line);
    std::string item;
    while (std::getline(in, item, '\t')) f.push_back(item);
    if (f.size() < 14) return false;
    auto num = [](const std::string& s) { return s == "nan" || s == "-nan" ? NAN : std::strtod(s.c_str(), nullptr); };
    r.program = f[0];
    r.shape = f[1];
    r.params = f[2];
    r.load = f[3];
    r.grain = static_cast<Grain>(std::atoi(f[4].c_str()));
    r.malloc = static_cast<Malloc>(std::atoi(f[5].c_str()));
    bool known = false;
    for (Method m : allMethods())
        if (f[6] == methodKey(m)) {
            r.method = m;
            known = true;
        }
    r.out.status = f[7];
    r.out.verified = f[8] == "1";
    r.out.threads = std::atoi(f[9].c_str());
    r.medianSec = num(f[10]);
    r.speedup = num(f[11]);
    r.cpuSec = num(f[12]);
    const std::size_t n = std::strtoul(f[13].c_str(), nullptr, 10);
    if (!known || f.size() != 14 + 2 * n) return false;
    for (std::size_t i = 0; i < n; ++i) {
        r.out.times.push_back(num(f[14 + i]));
        r.out.cpu.push_back(num(f[14 + n + i]));
    }
    return true;
}

// ---- summaries --------------------------------------------------------------------

//! The rows of one pass and grain, by program (in the suite's order) and method.
struct Cells {
    std::map<std::string, std::map<Method, const Row*>> by;
    std::vector<std::string> order;
    explicit Cells(const std::vector<Row>& rows, Grain g, Malloc m)
    {
        for (const Row& r : rows) {
            if (r.grain != g || r.malloc != m) continue;
            if (by.find(r.program) == by.end()) order.push_back(r.program);
            by[r.program][r.method] = &r;
        }
    }
    //! The median wall (or CPU) time; NaN where it failed, was wrong or did not run.
    double time(const std::string& p, Method m, bool cpu = false) const
    {
        auto ip = by.find(p);
        if (ip == by.end()) return NAN;
        auto it = ip->second.find(m);
        if (it == ip->second.end() || !it->second->out.ok() || !it->second->out.verified) return NAN;
        return cpu ? it->second->cpuSec : it->second->medianSec;
    }
    std::string shape(const std::string& p) const { return by.at(p).begin()->second->shape; }
};

//! A ratio in a column of `width`, or "-" when a method did not run.
void printRatio(double ratio, int width)
{
    if (std::isnan(ratio))
        std::printf(" %*s", width, "-");
    else
        std::printf(" %*.2f", width, ratio);
}

//! RcppSpool against oneTBB per program (one pass, one grain).
void printRatios(const Cells& c)
{
    std::printf("\nRcppSpool / oneTBB: wall time (issue 5 wants <= 1.1), and CPU time (overhead, whatever the load):\n");
    std::printf("%-10s %-22s %10s %13s %14s %10s %13s %14s\n", "program", "shape", "async/tbb", "optional/tbb",
                "TaskGroup/tbb", "cpu async", "cpu optional", "cpu TaskGroup");
    for (const std::string& p : c.order) {
        const double tbb = c.time(p, Method::tbb), tbbCpu = c.time(p, Method::tbb, true);
        std::printf("%-10s %-22s", p.c_str(), c.shape(p).c_str());
        printRatio(c.time(p, Method::spoolAsync) / tbb, 10);
        printRatio(c.time(p, Method::spoolOptional) / tbb, 13);
        printRatio(c.time(p, Method::spoolGroup) / tbb, 14);
        printRatio(c.time(p, Method::spoolAsync, true) / tbbCpu, 10);
        printRatio(c.time(p, Method::spoolOptional, true) / tbbCpu, 13);
        printRatio(c.time(p, Method::spoolGroup, true) / tbbCpu, 14);
        std::printf("\n");
    }
}

//! The geometric mean of method m's speedups over the programs for which
//! `use` holds; `n` and `missing` count those it covers and those it lacks.
template <class Use>
double geomeanSpeedup(const Cells& c, Method m, Use&& use, int& n, int& missing)
{
    double logSum = 0;
    n = missing = 0;
    for (const std::string& p : c.order) {
        if (!use(p)) continue;
        const double t = c.time(p, m), s = c.time(p, Method::seq);
        if (std::isnan(t) || std::isnan(s)) {
            ++missing;
            continue;
        }
        logSum += std::log(s / t);
        ++n;
    }
    return n ? std::exp(logSum / n) : NAN;
}

//! Coarse grain: the geometric-mean speedup of the balanced and loop-like programs.
void printCoarseSummary(const Cells& c, const std::vector<Method>& methods)
{
    printRatios(c);
    std::printf("\nGeometric-mean speedup over sequential, balanced and loop-like programs (issue 5 wants >= 1.6):\n");
    for (Method m : methods) {
        if (m == Method::seq) continue;
        int n = 0, missing = 0;
        const double g = geomeanSpeedup(
            c, m,
            [&](const std::string& p) {
                const std::string s = c.shape(p);
                return s == "recursive balanced" || s == "loop-like";
            },
            n, missing);
        if (n == 0 && missing == 0) continue;
        std::printf("  %-*s %6.2f  over %d programs%s\n", kMethodWidth, methodName(m), g, n,
                    missing ? (" (" + std::to_string(missing) + " failed or not run)").c_str() : "");
    }
}

//! Fine grain: every method's speedup over sequential per program, and the
//! geometric mean of each column over all the fine programs.
void printFineSummary(const Cells& c, const std::vector<Method>& methods)
{
    printRatios(c);
    std::vector<Method> cols;
    for (Method m : methods)
        if (m != Method::seq) cols.push_back(m);
    std::printf("\nFine grain: speedup over sequential (sequential time / method time; - failed or wrong):\n");
    std::printf("%-10s", "program");
    for (Method m : cols) std::printf(" %15s", methodKey(m));
    std::printf("\n");
    for (const std::string& p : c.order) {
        std::printf("%-10s", p.c_str());
        for (Method m : cols) {
            const double s = c.time(p, Method::seq) / c.time(p, m);
            if (std::isnan(s)) std::printf(" %15s", "-");
            else std::printf(" %15.2f", s);
        }
        std::printf("\n");
    }
    std::printf("%-10s", "geomean");
    std::vector<std::string> notes;
    for (Method m : cols) {
        int n = 0, missing = 0;
        const double g = geomeanSpeedup(c, m, [](const std::string&) { return true; }, n, missing);
        if (std::isnan(g)) std::printf(" %15s", "-");
        else std::printf(" %15.2f", g);
        if (missing) notes.push_back(std::string(methodKey(m)) + " over " + std::to_string(n) + " programs (" +
                                     std::to_string(missing) + " failed or not run)");
    }
    std::printf("\n");
    for (const auto& s : notes) std::printf("  (%s)\n", s.c_str());
}

//! With both malloc settings: RcppSpool / oneTBB under each, side by side.
void printMallocSummary(const std::vector<Row>& rows, const std::vector<Grain>& grains)
{
    std::printf("\nRcppSpool / oneTBB wall time under each malloc setting (default: glibc's own settings, as "
                "users run; equalised: setUpAllocator()):\n");
    std::printf("%-10s %-6s %21s %21s %21s\n", "", "", "async/tbb", "optional/tbb", "TaskGroup/tbb");
    std::printf("%-10s %-6s %10s %10s %10s %10s %10s %10s\n", "program", "grain", "default", "equalised", "default",
                "equalised", "default", "equalised");
    for (Grain g : grains) {
        const Cells d(rows, g, Malloc::dflt), e(rows, g, Malloc::equalised);
        std::vector<std::string> order = e.order;
        for (const std::string& p : d.order)
            if (std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
        for (const std::string& p : order) {
            std::printf("%-10s %-6s", p.c_str(), grainName(g));
            for (Method m : {Method::spoolAsync, Method::spoolOptional, Method::spoolGroup}) {
                printRatio(d.time(p, m) / d.time(p, Method::tbb), 10);
                printRatio(e.time(p, m) / e.time(p, Method::tbb), 10);
            }
            std::printf("\n");
        }
    }
}

// ---- one pass: every grain, every program, with one malloc setting -------------

std::vector<Row> runPass(std::vector<std::unique_ptr<Benchmark>>& suite, const Options& o, Malloc mal)
{
    if (mal == Malloc::equalised) setUpAllocator();
    setUpThreads();
    static Watchdog dog;  // its thread outlives this call
    dog.start();

    std::printf("\n######## malloc: %s (%s)\n", mallocName(mal),
                mal == Malloc::dflt ? "glibc's own settings, no mallopt in this process"
                                    : "setUpAllocator(): M_MMAP_THRESHOLD 32 MB, M_TRIM_THRESHOLD 1 GB, M_TOP_PAD 64 MB");
    std::vector<Row> rows;
    for (Grain grain : o.grains) {
        std::string skipped;
        for (auto& b : suite)
            if (grain == Grain::fine && !b->hasFine() &&
                (o.only.empty() || std::find(o.only.begin(), o.only.end(), b->name()) != o.only.end()))
                skipped += std::string(skipped.empty() ? "" : ", ") + b->name();
        std::printf("\n======== grain: %s, malloc: %s%s%s\n", grainName(grain), mallocName(mal),
                    grain == Grain::fine ? " (a task per tiny call)" : " (tuned cutoffs)",
                    skipped.empty() ? "" : ("; no fine form, skipped: " + skipped).c_str());
        for (auto& b : suite) {
            if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), b->name()) == o.only.end()) continue;
            if (grain == Grain::fine && !b->hasFine()) continue;
            b->setUp(o.quick, grain);
            std::printf("\n== %s (%s, %s grain, malloc %s): %s; load average %s\n", b->name(), b->shape(),
                        grainName(grain), mallocName(mal), b->params().c_str(), loadAverage().c_str());
            std::fflush(stdout);
            // The in-process methods take turns, one repetition each, so that a
            // change in the machine's load affects them all alike.
            std::vector<Row> cells;
            for (Method m : o.methods) {
                Row r;
                r.program = b->name();
                r.shape = b->shape();
                r.params = b->params();
                r.grain = grain;
                r.malloc = mal;
                r.method = m;
                cells.push_back(std::move(r));
            }
            for (int rep = 0; rep < o.reps; ++rep)
                for (Row& r : cells) {
                    if (r.method == Method::stdAsync || !r.out.ok()) continue;
                    dog.arm(std::string(b->name()) + " (" + grainName(grain) + ", malloc " + mallocName(mal) +
                                ") with " + methodName(r.method),
                            o.caseTimeout);
                    measureOnce(*b, r.method, o.pause, r.out);
                    dog.disarm();
                }
            double seqMedian = NAN;
            for (Row& r : cells) {
                if (r.method == Method::seq && r.out.ok()) seqMedian = median(r.out.times);
                if (r.method == Method::stdAsync) {
                    const double limit = o.asyncTimeout > 0
                                             ? o.asyncTimeout
                                             : (o.quick ? 3 : 10) +
                                                   3.0 * o.reps * (std::isnan(seqMedian) ? 10.0 : seqMedian);
                    r.out = measureInChild(*b, r.method, o.reps, o.pause, limit, o.asyncVmGb);
                }
            }
            printHeader();
            for (Row& r : cells) {
                r.load = loadAverage();
                if (r.out.ok()) {
                    r.medianSec = median(r.out.times);
                    r.cpuSec = median(r.out.cpu);
                    r.speedup = seqMedian / r.medianSec;
                }
                printRow(r);
                rows.push_back(std::move(r));
            }
        }
        const Cells c(rows, grain, mal);
        if (c.order.empty()) continue;
        std::printf("\n-- summary: grain %s, malloc %s\n", grainName(grain), mallocName(mal));
        if (grain == Grain::coarse) printCoarseSummary(c, o.methods);
        else printFineSummary(c, o.methods);
        std::fflush(stdout);
    }
    return rows;
}

//! Runs the malloc-default pass in a fresh process: this binary re-executed
//! with `--malloc default`, so that no mallopt call (they cannot be undone)
//! and no heap state of another pass affects it. Its tables go to our
//! stdout; its rows come back through a pipe. Returns false when the child
//! failed to report (its rows, if any, are still added).
bool runDefaultPassInChild(int argc, char** argv, std::vector<Row>& rows, std::string& problem, int& exitStatus)
{
    int fds[2];
    if (pipe(fds) != 0) {
        problem = std::string("pipe: ") + std::strerror(errno);
        return false;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    // Our arguments minus --malloc and --csv (the parent writes the CSV).
    std::vector<std::string> args{argv[0]};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--malloc" || a == "--csv" || a == "--rows-fd") {
            ++i;
            continue;
        }
        args.push_back(a);
    }
    args.insert(args.end(), {"--malloc", "default", "--rows-fd", std::to_string(fds[1])});
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(&a[0]);
    cargs.push_back(nullptr);

    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        problem = std::string("fork: ") + std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        execv("/proc/self/exe", cargs.data());
        std::fprintf(stderr, "bench_tasks: cannot re-execute /proc/self/exe: %s\n", std::strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t k = read(fds[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        text.append(buf, static_cast<std::size_t>(k));
    }
    close(fds[0]);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    std::istringstream in(text);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
        Row r;
        if (deserialise(line, r)) {
            rows.push_back(std::move(r));
            ++n;
        }
    }
    if (WIFEXITED(wstatus)) exitStatus = WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) problem = std::string("crashed: ") + strsignal(WTERMSIG(wstatus));
    else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) > 1)
        problem = "exit status " + std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                  (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 3 ? " (--case-timeout)" : "");
    else if (n == 0) problem = "it reported no rows";
    return problem.empty();
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "bench_tasks: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--quick") o.quick = true;
        else if (a == "--reps") o.reps = std::max(1, std::atoi(next().c_str()));
        else if (a == "--only") o.only = splitList(next());
        else if (a == "--methods") {
            o.methods.clear();
            const auto keys = splitList(next());
            for (Method m : allMethods())
                if (m == Method::seq || std::find(keys.begin(), keys.end(), methodKey(m)) != keys.end())
                    o.methods.push_back(m);
            for (const auto& k : keys) {
                bool known = false;
                for (Method m : allMethods()) known = known || k == methodKey(m);
                if (!known) {
                    std::fprintf(stderr, "bench_tasks: unknown method '%s'\n", k.c_str());
                    return 2;
                }
            }
        } else if (a == "--grain") {
            const std::string g = next();
            if (g == "coarse") o.grains = {Grain::coarse};
            else if (g == "fine") o.grains = {Grain::fine};
            else if (g == "both") o.grains = {Grain::coarse, Grain::fine};
            else {
                std::fprintf(stderr, "bench_tasks: --grain wants coarse, fine or both, not '%s'\n", g.c_str());
                return 2;
            }
        } else if (a == "--malloc") {
            const std::string m = next();
            if (m == "equalised" || m == "equalized") o.mallocs = {Malloc::equalised};
            else if (m == "default") o.mallocs = {Malloc::dflt};
            else if (m == "both") o.mallocs = {Malloc::dflt, Malloc::equalised};
            else {
                std::fprintf(stderr, "bench_tasks: --malloc wants equalised, default or both, not '%s'\n",
                             m.c_str());
                return 2;
            }
        }
        else if (a == "--csv") o.csv = next();
        else if (a == "--threads") numThreads() = std::max(1, std::atoi(next().c_str()));
        else if (a == "--async-timeout") o.asyncTimeout = std::atof(next().c_str());
        else if (a == "--async-vm-gb") o.asyncVmGb = std::atof(next().c_str());
        else if (a == "--case-timeout") o.caseTimeout = std::atof(next().c_str());
        else if (a == "--pause") o.pause = std::atof(next().c_str());
        else if (a == "--rows-fd") o.rowsFd = std::atoi(next().c_str());  // internal, see runDefaultPassInChild
        else if (a == "--list") list = true;
        else if (a == "--help" || a == "-h") {
            usage();
            return 0;
        } else {
            std::fprintf(stderr, "bench_tasks: unknown option '%s'\n", a.c_str());
            usage();
            return 2;
        }
    }

    auto suite = makeSuite();
    if (list) {
        for (auto& b : suite)
            std::printf("%-10s %-22s %s\n", b->name(), b->shape(),
                        b->hasFine() ? "coarse, fine" : "coarse only (no fine form: skipped with --grain fine)");
        return 0;
    }
    for (const auto& name : o.only) {
        bool known = false;
        for (auto& b : suite) known = known || name == b->name();
        if (!known) {
            std::fprintf(stderr, "bench_tasks: unknown program '%s' (see --list)\n", name.c_str());
            return 2;
        }
    }

    const bool child = o.rowsFd >= 0;
    if (!child) {
        std::string grains, mallocs;
        for (Grain g : o.grains) grains += std::string(grains.empty() ? "" : ", ") + grainName(g);
        for (Malloc m : o.mallocs) mallocs += std::string(mallocs.empty() ? "" : ", ") + mallocName(m);
        std::printf("bench_tasks: %d threads per parallel method, median of %d runs%s; grain %s; malloc %s; "
                    "load average %s\n",
                    numThreads(), o.reps, o.quick ? ", quick sizes" : "", grains.c_str(), mallocs.c_str(),
                    loadAverage().c_str());
    }

    // The default pass first: in this process when it is the only one (no
    // mallopt has run here), else in a re-executed child, before this process
    // starts any thread; then the equalised pass here.
    std::vector<Row> rows;
    std::string childProblem;
    int childExit = 0;
    for (Malloc m : o.mallocs) {
        if (m == Malloc::dflt && o.mallocs.size() > 1) {
            if (!runDefaultPassInChild(argc, argv, rows, childProblem, childExit))
                std::printf("\nbench_tasks: the malloc-default pass (child process) failed: %s\n",
                            childProblem.c_str());
            continue;
        }
        std::vector<Row> r = runPass(suite, o, m);
        rows.insert(rows.end(), r.begin(), r.end());
    }

    if (child) {  // hand the rows to the parent, which sums up
        std::string text;
        for (const Row& r : rows) text += serialise(r);
        for (std::size_t done = 0; done < text.size();) {
            const ssize_t k = write(o.rowsFd, text.data() + done, text.size() - done);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            done += static_cast<std::size_t>(k);
        }
        close(o.rowsFd);
    } else {
        if (o.mallocs.size() > 1) printMallocSummary(rows, o.grains);
        if (!o.csv.empty()) {
            writeCsv(o.csv, rows, o);
            std::printf("\nwrote %s\n", o.csv.c_str());
        }
    }
    bool allVerified = childProblem.empty();
    for (const Row& r : rows)
        if (r.method != Method::stdAsync && !(r.out.ok() && r.out.verified)) allVerified = false;
    if (!child)
        std::printf("\n%s\n", allVerified ? "all results verified (std::async aside)"
                                          : "SOME RESULTS WRONG OR MISSING (std::async aside)");
    std::fflush(stdout);
    if (childExit == 3) return 3;  // the child pass gave up (--case-timeout)
    return allVerified ? 0 : 1;
}
