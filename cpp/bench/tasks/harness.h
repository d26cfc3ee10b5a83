// The harness of the task-parallel benchmark suite (bench_tasks.cpp): the
// methods compared, how each one gets its threads, timing, the table, and the
// child process in which std::async runs.
//
// Every benchmark (one header each) writes its parallel algorithm three times:
//   * futures style, a template on a Spawner: `auto f = A::spawn(g); ...; f.get()`.
//     Instantiated with SpoolAsync (RcppSpool::async), SpoolOptional
//     (RcppSpool::async(std::launch::async | std::launch::deferred, g)) and
//     StdAsync (std::async with std::launch::async): the same source, as
//     RcppSpool::async is meant to be a drop-in std::async.
//   * group style, a template on a task-group type: `G g; g.run(f); ...; g.wait()`.
//     Instantiated with RcppSpool::TaskGroup and tbb::task_group, which have
//     the same interface.
//   * OpenMP tasks: `#pragma omp task` / `#pragma omp taskwait`.
// plus a sequential version: the same algorithm with the same cutoffs, where
// every spawn is a plain call. All parallel versions spawn at the same places
// (same cutoffs), so they differ only in the runtime underneath.
// Each program runs at the coarse grain (cutoffs as a tuned program would
// use) and, where it has one, at a fine grain (Grain::fine: a task per call
// of a tiny function, as people write recursive code with std::async).
#pragma once

#include <RcppSpool.h>

#include <omp.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <system_error>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <malloc.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

//! Marks a leaf kernel: compiled once, out of line, and called by every
//! method. Inlined into each runtime's task wrapper, the same loop was
//! compiled differently for each: sparselu's block update took 295 us per call
//! in one method and 657 us in another, on the same data at the same addresses.
#define BENCH_KERNEL __attribute__((noinline))

namespace bench {

// ---- methods ----------------------------------------------------------------

enum class Method { seq, spoolAsync, spoolOptional, spoolGroup, tbb, omp, stdAsync };

inline const std::vector<Method>& allMethods()
{
    static const std::vector<Method> m{Method::seq, Method::spoolAsync, Method::spoolOptional, Method::spoolGroup,
                                       Method::tbb, Method::omp, Method::stdAsync};
    return m;
}

inline const char* methodName(Method m)
{
    switch (m) {
    case Method::seq: return "sequential";
    case Method::spoolAsync: return "RcppSpool::async";
    case Method::spoolOptional: return "RcppSpool::async(async|deferred)";
    case Method::spoolGroup: return "RcppSpool::TaskGroup";
    case Method::tbb: return "tbb::task_group";
    case Method::omp: return "omp task";
    case Method::stdAsync: return "std::async";
    }
    return "?";
}

//! Short names for --methods: seq, spool-async, spool-optional, spool-group, tbb, omp, std-async.
inline const char* methodKey(Method m)
{
    switch (m) {
    case Method::seq: return "seq";
    case Method::spoolAsync: return "spool-async";
    case Method::spoolOptional: return "spool-optional";
    case Method::spoolGroup: return "spool-group";
    case Method::tbb: return "tbb";
    case Method::omp: return "omp";
    case Method::stdAsync: return "std-async";
    }
    return "?";
}

// ---- spawners for the futures style -------------------------------------------

//! RcppSpool::async(f): a task of the global pool; get() on a worker helps.
struct SpoolAsync {
    template <class F>
    static auto spawn(F&& f)
    {
        return RcppSpool::async(std::forward<F>(f));
    }
};

//! RcppSpool::async(std::launch::async | std::launch::deferred, f): the library
//! chooses per call; on a busy worker (own tasks queued, no worker hungry)
//! the call is deferred and runs as a plain call in get().
struct SpoolOptional {
    template <class F>
    static auto spawn(F&& f)
    {
        return RcppSpool::async(std::launch::async | std::launch::deferred, std::forward<F>(f));
    }
};

//! std::async(std::launch::async, f): libstdc++ starts a new thread per call.
struct StdAsync {
    template <class F>
    static auto spawn(F&& f)
    {
        return std::async(std::launch::async, std::forward<F>(f));
    }
};

//! What spawner A's spawn() returns for a task with result R.
template <class A, class R>
using SpawnedOf = decltype(A::spawn(std::declval<R (*)()>()));
//! The type a vector of futures of spawner A holds for results of type R:
//! what its spawn() returns, or the RcppSpool::Future<R> it converts to
//! (RcppSpool's async(policy, f) returns a type per callable).
template <class A, class R>
using FutureOf = std::conditional_t<std::is_convertible<SpawnedOf<A, R>, RcppSpool::Future<R>>::value,
                                    RcppSpool::Future<R>, SpawnedOf<A, R>>;

// ---- threads ----------------------------------------------------------------

//! The number of threads every parallel method gets (--threads, default 2).
inline int& numThreads()
{
    static int n = 2;
    return n;
}

//! The oneTBB arena with numThreads() slots (the calling thread takes one).
inline tbb::task_arena& tbbArena()
{
    static tbb::task_arena arena(numThreads());
    return arena;
}

//! Makes memory allocation cost the same in every method. By default glibc
//! serves big blocks (from 128 KB, rising dynamically) with mmap and gives
//! freed memory back to the system, so the next allocation page-faults it in
//! again; how often that happens depends on which thread allocates (the main
//! thread's heap trims, worker threads' arenas keep memory). With Strassen's
//! temporaries that alone made the sequential run 1.7x slower than it needs to
//! be. Blocks up to 32 MB now come from the heaps, and freed memory is kept:
//! M_TRIM_THRESHOLD keeps the main arena's, and a large M_TOP_PAD keeps the
//! other arenas' heaps (glibc deletes a thread arena's free heap, whatever
//! the trim threshold, unless the pad asks for more than it holds). Without
//! the pad, a runtime whose threads are all workers (RcppSpool's main thread
//! only waits) paid twice the page faults of one whose main thread computes
//! (oneTBB, OpenMP): Strassen 116,000 vs 52,000 faults, 1.12-1.16x the time;
//! with one arena for all (GLIBC_TUNABLES=glibc.malloc.arena_max=1) both
//! made 52,000 and RcppSpool was as fast as oneTBB.
inline void setUpAllocator()
{
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 * 1024 * 1024);
}

//! Gives each method its threads once, before anything is timed.
inline void setUpThreads()
{
    RcppSpool::ThreadPool::globalInstance().setNumThreads(static_cast<std::size_t>(numThreads()));
    tbbArena().initialize();
    omp_set_num_threads(numThreads());
    omp_set_dynamic(0);
}

//! Runs `root()` (the whole computation) the way method `m` needs it:
//!   sequential, std::async: on the calling thread;
//!   RcppSpool (all three): as a task of the global pool (numThreads() workers
//!     compute, the calling thread only waits, so no more threads work than
//!     the pool has);
//!   oneTBB: inside an arena of numThreads() slots (the caller is one of them);
//!   OpenMP: in a parallel region of numThreads() threads, started by one of them.
template <class F>
void onThreads(Method m, F&& root)
{
    switch (m) {
    case Method::seq:
    case Method::stdAsync:
        root();
        break;
    case Method::spoolAsync:
    case Method::spoolOptional:
        RcppSpool::async([&root] { root(); }).get();
        break;
    case Method::spoolGroup: {
        RcppSpool::TaskGroup g;
        g.run([&root] { root(); });
        g.wait();
        break;
    }
    case Method::tbb:
        tbbArena().execute([&root] { root(); });
        break;
    case Method::omp: {
        // Exceptions must not leave an OpenMP region: carry them out.
        std::exception_ptr error;
#pragma omp parallel num_threads(numThreads())
        {
#pragma omp single
            {
                try {
                    root();
                } catch (...) {
                    error = std::current_exception();
                }
            }
        }
        if (error) std::rethrow_exception(error);
        break;
    }
    }
}

// ---- which threads did the work ----------------------------------------------

//! Counts the distinct threads that ran leaf work during one run. Each
//! benchmark calls noteThread() at its sequential leaves (a thread-local
//! compare per call); the table shows the count, so one can see that
//! RcppSpool, oneTBB and OpenMP compute with numThreads() threads only.
struct ThreadCensus {
    static std::atomic<unsigned>& epoch()
    {
        static std::atomic<unsigned> e{1};
        return e;
    }
    static std::atomic<int>& count()
    {
        static std::atomic<int> c{0};
        return c;
    }
    static void reset()
    {
        count().store(0);
        epoch().fetch_add(1);
    }
};

inline void noteThread()
{
    static thread_local unsigned seen = 0;
    const unsigned e = ThreadCensus::epoch().load(std::memory_order_relaxed);
    if (seen != e) {
        seen = e;
        ThreadCensus::count().fetch_add(1, std::memory_order_relaxed);
    }
}

// ---- small utilities shared by the benchmarks ---------------------------------

//! A fast deterministic 64-bit mixer (splitmix64's finaliser).
inline std::uint64_t mix64(std::uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

//! A reproducible pseudo-random stream.
struct Rng {
    std::uint64_t s;
    explicit Rng(std::uint64_t seed) : s(seed) {}
    std::uint64_t next() { return s = mix64(s); }
    //! Uniform in [0, n).
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    double unit() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

// ---- benchmarks ---------------------------------------------------------------

//! The task granularity a program runs at (--grain).
//!   coarse: the cutoffs a tuned program uses (the suite's original parameters);
//!   fine: a task per call of a tiny function, no or a tiny cutoff, as people
//!     write recursive code with async (INNCABS's point); only programs with
//!     such a form (Benchmark::hasFine()).
enum class Grain { coarse, fine };

inline const char* grainName(Grain g) { return g == Grain::coarse ? "coarse" : "fine"; }

//! One program of the suite.
class Benchmark {
public:
    virtual ~Benchmark() = default;
    virtual const char* name() const = 0;
    //! recursive balanced, recursive unbalanced, loop-like or co-dependent.
    virtual const char* shape() const = 0;
    //! The problem and the cutoffs, for the table.
    virtual std::string params() const = 0;
    //! True when the program has a fine-grained form (Grain::fine).
    virtual bool hasFine() const { return false; }
    //! Builds the input for `grain` (not timed). quick: small sizes for tests.
    virtual void setUp(bool quick, Grain grain) = 0;
    //! Restores the input before each run, where a run modifies it (not timed).
    virtual void reset() {}
    //! The timed computation, with method `m` (already inside onThreads()).
    virtual void run(Method m) = 0;
    //! True when the last run's result is right.
    virtual bool verify() = 0;
};

// ---- timing and results -------------------------------------------------------

using Clock = std::chrono::steady_clock;

inline double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

//! The outcome of one (program, method) cell of the table.
struct Outcome {
    std::string status = "ok";  // ok, or "failed: ...", "timeout ...", "crashed: ..."
    std::vector<double> times;  // seconds, one per repetition
    std::vector<double> cpu;    // CPU seconds of the whole process (all threads), per repetition
    bool verified = false;      // every repetition gave the right result
    int threads = 0;            // distinct threads that ran leaf work (last repetition)
    bool ok() const { return status == "ok"; }
};

//! CPU time used so far by this process, all its threads (seconds).
inline double processCpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

//! Runs one repetition of `b` with method `m` into `out` (not yet failed).
inline void measureOnce(Benchmark& b, Method m, double pauseSec, Outcome& out)
{
    try {
        b.reset();
        // Let spinning threads of the method timed before go to sleep.
        std::this_thread::sleep_for(std::chrono::duration<double>(pauseSec));
        ThreadCensus::reset();
        const double c0 = processCpuSeconds();
        const auto t0 = Clock::now();
        onThreads(m, [&] { b.run(m); });
        out.times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        out.cpu.push_back(processCpuSeconds() - c0);
        out.threads = ThreadCensus::count().load();
        if (out.times.size() == 1) out.verified = true;
        if (!b.verify()) out.verified = false;
    } catch (const std::exception& e) {
        out.status = std::string("failed: ") + e.what();
        out.verified = false;
    } catch (...) {
        out.status = "failed: unknown exception";
        out.verified = false;
    }
}

//! Runs `reps` repetitions of `b` with method `m` in this process.
inline Outcome measure(Benchmark& b, Method m, int reps, double pauseSec)
{
    Outcome out;
    for (int r = 0; r < reps && out.ok(); ++r) measureOnce(b, m, pauseSec, out);
    return out;
}

//! Runs measure() in a forked child process, for methods that may exhaust the
//! machine (std::async starts a thread per call). The child gets at most
//! `vmLimitGb` GB of address space, so that thread creation fails cleanly
//! (std::system_error) long before the machine's process table or memory
//! fills up (each thread reserves an 8 MB stack); the parent kills it after
//! `timeoutSec`. A crash, a timeout or an exception is reported, never fatal.
inline Outcome measureInChild(Benchmark& b, Method m, int reps, double pauseSec, double timeoutSec,
                              double vmLimitGb)
{
    Outcome out;
    int fds[2];
    if (pipe(fds) != 0) {
        out.status = std::string("failed: pipe: ") + std::strerror(errno);
        return out;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        out.status = std::string("failed: fork: ") + std::strerror(errno);
        close(fds[0]);
        close(fds[1]);
        return out;
    }
    if (pid == 0) {  // the child: measure, write one line, leave without cleanup
        close(fds[0]);
        if (vmLimitGb > 0) {
            rlimit lim{};
            lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(vmLimitGb * 1073741824.0);
            setrlimit(RLIMIT_AS, &lim);
        }
        Outcome o = measure(b, m, reps, pauseSec);
        std::ostringstream line;
        line << (o.verified ? 1 : 0) << ' ' << o.threads << ' ' << o.times.size();
        for (double t : o.times) line << ' ' << t;
        for (double t : o.cpu) line << ' ' << t;
        line << ' ' << o.status << '\n';
        const std::string s = line.str();
        for (std::size_t done = 0; done < s.size();) {
            ssize_t k = write(fds[1], s.data() + done, s.size() - done);
            if (k <= 0) break;
            done += static_cast<std::size_t>(k);
        }
        _exit(0);  // skips destructors: the parent's pools do not exist here
    }
    close(fds[1]);
    std::string text;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSec);
    bool timedOut = false;
    for (;;) {
        const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(std::min(left * 1000.0 + 1, 1000.0)));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char buf[4096];
        ssize_t k = read(fds[0], buf, sizeof buf);
        if (k <= 0) break;  // EOF: the child is done (or died)
        text.append(buf, static_cast<std::size_t>(k));
    }
    close(fds[0]);
    if (timedOut) kill(pid, SIGKILL);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (timedOut) {
        char msg[64];
        std::snprintf(msg, sizeof msg, "timeout (> %.0f s)", timeoutSec);
        out.status = msg;
        return out;
    }
    if (WIFSIGNALED(wstatus)) {
        out.status = std::string("crashed: ") + strsignal(WTERMSIG(wstatus));
        return out;
    }
    std::istringstream in(text);
    int verified = 0;
    std::size_t n = 0;
    if (!(in >> verified >> out.threads >> n)) {
        out.status = "failed: the child reported nothing (exit status " +
                     std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) + ")";
        return out;
    }
    out.times.resize(n);
    out.cpu.resize(n);
    for (double& t : out.times) in >> t;
    for (double& t : out.cpu) in >> t;
    std::getline(in >> std::ws, out.status);
    out.verified = verified != 0;
    return out;
}

}  // namespace bench
