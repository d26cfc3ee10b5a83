// bench_tasks: a task-parallel benchmark suite in the spirit of INNCABS
// (Thoman et al., "On the Quality of Implementation of the C++11 Thread
// Support Library"). Ten programs covering the shapes of task parallelism,
// each run sequentially and with RcppSpool::async, RcppSpool::TaskGroup,
// tbb::task_group, OpenMP tasks and std::async, with the same task
// granularity, on the same number of threads; each run's result is verified.
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

#include <fstream>
#include <map>

using namespace bench;

namespace {

struct Options {
    bool quick = false;
    int reps = 3;
    std::vector<std::string> only;
    std::vector<Method> methods = allMethods();
    std::string csv;
    double asyncTimeout = 0;  // 0: automatic
    double asyncVmGb = 16;
    double caseTimeout = 600;
    double pause = 0.05;
};

void usage()
{
    std::printf(
        "usage: bench_tasks [options]\n"
        "  --quick            small sizes (a few ms per run), for tests\n"
        "  --reps N           repetitions per program and method (default 3); the table shows medians\n"
        "  --only A,B         only these programs (see --list)\n"
        "  --methods A,B      only these methods: seq, spool-async, spool-group, tbb, omp, std-async\n"
        "                     (seq always runs: it is the baseline)\n"
        "  --csv FILE         also write every cell, with all repetition times, to FILE\n"
        "  --threads N        threads per parallel method (default 2)\n"
        "  --async-timeout S  std::async's time limit per program (default 10 s + 3 x reps x sequential)\n"
        "  --async-vm-gb G    address-space limit of std::async's child process (default 16 GB)\n"
        "  --case-timeout S   give up (exit 3) if one in-process cell takes longer (default 600 s)\n"
        "  --pause S          pause before each timed run, so spinning threads settle (default 0.05)\n"
        "  --list             list the programs\n");
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

struct Row {
    std::string program, shape, params, load;
    Method method;
    Outcome out;
    double medianSec = NAN, speedup = NAN, cpuSec = NAN;
};

void printHeader()
{
    std::printf("%-10s %-22s %9s %8s %9s %8s %7s  %s\n", "program", "method", "median s", "speedup", "cpu s",
                "verified", "threads", "note");
}

void printRow(const Row& r)
{
    char med[32] = "-", sp[32] = "-", cpu[32] = "-";
    if (r.out.ok() && !r.out.times.empty()) {
        std::snprintf(med, sizeof med, "%.3f", r.medianSec);
        std::snprintf(sp, sizeof sp, "%.2f", r.speedup);
        std::snprintf(cpu, sizeof cpu, "%.3f", r.cpuSec);
    }
    std::printf("%-10s %-22s %9s %8s %9s %8s %7d  %s\n", r.program.c_str(), methodName(r.method), med, sp, cpu,
                r.out.ok() ? (r.out.verified ? "yes" : "NO") : "-", r.out.threads,
                r.out.ok() ? "" : r.out.status.c_str());
    std::fflush(stdout);
}

void writeCsv(const std::string& file, const std::vector<Row>& rows, const Options& o)
{
    std::ofstream f(file);
    f << "program,shape,method,status,verified,threads,reps,median_s,speedup,times_s,cpu_s,params,load,nthreads,"
         "quick\n";
    for (const Row& r : rows) {
        std::string times, cpu;
        for (double t : r.out.times) times += (times.empty() ? "" : ";") + std::to_string(t);
        for (double t : r.out.cpu) cpu += (cpu.empty() ? "" : ";") + std::to_string(t);
        auto quote = [](const std::string& s) {
            std::string q = "\"";
            for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
            return q + "\"";
        };
        f << r.program << ',' << quote(r.shape) << ',' << quote(methodName(r.method)) << ',' << quote(r.out.status)
          << ',' << (r.out.verified ? "yes" : "no") << ',' << r.out.threads << ',' << r.out.times.size() << ','
          << (r.out.ok() ? std::to_string(r.medianSec) : "") << ',' << (r.out.ok() ? std::to_string(r.speedup) : "")
          << ',' << times << ',' << cpu << ',' << quote(r.params) << ',' << quote(r.load) << ',' << numThreads() << ','
          << (o.quick ? 1 : 0) << '\n';
    }
}

//! RcppSpool against oneTBB per program, and the geometric-mean speedups.
void printSummary(const std::vector<Row>& rows, const std::vector<Method>& methods)
{
    std::map<std::string, std::map<Method, const Row*>> by;
    std::vector<std::string> order;
    for (const Row& r : rows) {
        if (by.find(r.program) == by.end()) order.push_back(r.program);
        by[r.program][r.method] = &r;
    }
    auto time = [&](const std::string& p, Method m, bool cpu = false) -> double {
        auto it = by[p].find(m);
        if (it == by[p].end() || !it->second->out.ok() || !it->second->out.verified) return NAN;
        return cpu ? it->second->cpuSec : it->second->medianSec;
    };
    std::printf("\nRcppSpool / oneTBB: wall time (issue 5 wants <= 1.1), and CPU time (overhead, whatever the load):\n");
    std::printf("%-10s %-22s %12s %16s %12s %16s\n", "program", "shape", "async/tbb", "TaskGroup/tbb", "cpu async",
                "cpu TaskGroup");
    for (const std::string& p : order) {
        const double tbb = time(p, Method::tbb), tbbCpu = time(p, Method::tbb, true);
        std::printf("%-10s %-22s %12.2f %16.2f %12.2f %16.2f\n", p.c_str(), by[p].begin()->second->shape.c_str(),
                    time(p, Method::spoolAsync) / tbb, time(p, Method::spoolGroup) / tbb,
                    time(p, Method::spoolAsync, true) / tbbCpu, time(p, Method::spoolGroup, true) / tbbCpu);
    }
    std::printf("\nGeometric-mean speedup over sequential, balanced and loop-like programs (issue 5 wants >= 1.6):\n");
    for (Method m : methods) {
        if (m == Method::seq) continue;
        double logSum = 0;
        int n = 0, missing = 0;
        for (const std::string& p : order) {
            const std::string shape = by[p].begin()->second->shape;
            if (shape != "recursive balanced" && shape != "loop-like") continue;
            const double t = time(p, m), s = time(p, Method::seq);
            if (std::isnan(t) || std::isnan(s)) {
                ++missing;
                continue;
            }
            logSum += std::log(s / t);
            ++n;
        }
        if (n == 0 && missing == 0) continue;
        std::printf("  %-22s %6.2f  over %d programs%s\n", methodName(m), n ? std::exp(logSum / n) : NAN, n,
                    missing ? (" (" + std::to_string(missing) + " failed or not run)").c_str() : "");
    }
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
        }
        else if (a == "--csv") o.csv = next();
        else if (a == "--threads") numThreads() = std::max(1, std::atoi(next().c_str()));
        else if (a == "--async-timeout") o.asyncTimeout = std::atof(next().c_str());
        else if (a == "--async-vm-gb") o.asyncVmGb = std::atof(next().c_str());
        else if (a == "--case-timeout") o.caseTimeout = std::atof(next().c_str());
        else if (a == "--pause") o.pause = std::atof(next().c_str());
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
        for (auto& b : suite) std::printf("%-10s %s\n", b->name(), b->shape());
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

    setUpAllocator();
    setUpThreads();
    Watchdog dog;
    dog.start();

    std::printf("bench_tasks: %d threads per parallel method, median of %d runs%s; load average %s\n",
                numThreads(), o.reps, o.quick ? ", quick sizes" : "", loadAverage().c_str());
    std::vector<Row> rows;
    for (auto& b : suite) {
        if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), b->name()) == o.only.end()) continue;
        b->setUp(o.quick);
        std::printf("\n== %s (%s): %s; load average %s\n", b->name(), b->shape(), b->params().c_str(),
                    loadAverage().c_str());
        std::fflush(stdout);
        // The in-process methods take turns, one repetition each, so that a
        // change in the machine's load affects them all alike.
        std::vector<Row> cells;
        for (Method m : o.methods) {
            Row r;
            r.program = b->name();
            r.shape = b->shape();
            r.params = b->params();
            r.method = m;
            cells.push_back(std::move(r));
        }
        for (int rep = 0; rep < o.reps; ++rep)
            for (Row& r : cells) {
                if (r.method == Method::stdAsync || !r.out.ok()) continue;
                dog.arm(std::string(b->name()) + " with " + methodName(r.method), o.caseTimeout);
                measureOnce(*b, r.method, o.pause, r.out);
                dog.disarm();
            }
        double seqMedian = NAN;
        for (Row& r : cells) {
            if (r.method == Method::seq && r.out.ok()) seqMedian = median(r.out.times);
            if (r.method == Method::stdAsync) {
                const double limit = o.asyncTimeout > 0
                                         ? o.asyncTimeout
                                         : 10 + 3.0 * o.reps * (std::isnan(seqMedian) ? 10.0 : seqMedian);
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
    printSummary(rows, o.methods);
    if (!o.csv.empty()) {
        writeCsv(o.csv, rows, o);
        std::printf("\nwrote %s\n", o.csv.c_str());
    }
    bool allVerified = true;
    for (const Row& r : rows)
        if (r.method != Method::stdAsync && !(r.out.ok() && r.out.verified)) allVerified = false;
    std::printf("\n%s\n", allVerified ? "all results verified (std::async aside)"
                                      : "SOME RESULTS WRONG OR MISSING (std::async aside)");
    return allVerified ? 0 : 1;
}
