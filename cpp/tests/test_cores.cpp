// Unit tests of the core-count and thread-setting rules (engine/cores.h),
// without R: fake option and environment readers, and fake /proc and cgroup
// trees in a temporary directory. The last tests use the public header as a
// program without R does (-DRCPPSPOOL_STANDALONE).
//
//   g++ -std=c++17 -Iinst/include cpp/tests/test_cores.cpp -lgtest -lgtest_main -pthread
#ifndef RCPPSPOOL_STANDALONE
#define RCPPSPOOL_STANDALONE
#endif
#include <RcppSpool/cores.h>
#include <RcppSpool/engine/cores.h>

#include <gtest/gtest.h>

#include "platform.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#if defined(__linux__)
#include <sys/stat.h>
#include <unistd.h>
#endif

using namespace RcppSpool::engine;
using RcppSpool::engine::naInt;

namespace {

using test_platform::setEnv;
using test_platform::unsetEnv;

// ---------------------------------------------------------------------------
// Fakes

struct Fake {
    std::map<std::string, OptionValue> options;
    std::map<std::string, std::string> env;
    MachineFacts machine;
    int affinity = naInt;

    Fake()
    {
        machine.processors = 8;
    }
    Fake& opt(const std::string& name, OptionValue v)
    {
        options[name] = std::move(v);
        return *this;
    }
    Fake& num(const std::string& name, double x) { return opt(name, OptionValue::number(x)); }
    Fake& str(const std::string& name, std::vector<std::string> xs) { return opt(name, OptionValue::text(xs)); }
    Fake& var(const std::string& name, const std::string& value)
    {
        env[name] = value;
        return *this;
    }
    CoresInputs inputs() const
    {
        CoresInputs in;
        in.option = [this](const std::string& n, OptionValue& out) {
            auto it = options.find(n);
            if (it == options.end()) return false;
            out = it->second;
            return true;
        };
        in.env = [this](const std::string& n, std::string& out) {
            auto it = env.find(n);
            if (it == env.end()) return false;
            out = it->second;
            return true;
        };
        in.machine = machine;
        in.affinity = affinity;
        return in;
    }
    CoresResult cores() const { return computeAvailableCores(inputs()); }
    ThreadsResult threads() const
    {
        auto in = inputs();
        return computeDefaultThreads(in.option, in.env, [&] { return computeAvailableCores(in); });
    }
};

#define EXPECT_CORES(fake, n, name)                  \
    do {                                             \
        CoresResult r_ = (fake).cores();             \
        EXPECT_EQ(r_.error, "");                     \
        EXPECT_EQ(r_.count, (n));                    \
        EXPECT_EQ(r_.rule, (name));                  \
    } while (0)

#define EXPECT_CORES_ERROR(fake, fragment)                                    \
    do {                                                                      \
        CoresResult r_ = (fake).cores();                                      \
        EXPECT_NE(r_.error.find(fragment), std::string::npos) << r_.error;    \
    } while (0)

// The library reads /proc and the cgroup trees only on Linux (elsewhere
// readMachineFacts() asks the OS for the processor count alone), so the fake
// trees and the tests on them are Linux only.
#if defined(__linux__)
// A temporary directory tree standing in for /.
class FakeRoot {
public:
    FakeRoot()
    {
        char tmpl[] = "/tmp/rcppspool-cores-XXXXXX";
        char* d = ::mkdtemp(tmpl);
        if (!d) throw std::runtime_error("mkdtemp failed");
        root_ = d;
    }
    ~FakeRoot() { std::system(("rm -rf '" + root_ + "'").c_str()); }
    const std::string& root() const { return root_; }

    void mkdirs(const std::string& path)
    {
        std::string p = root_;
        for (auto& part : cores_detail::split(path, '/')) {
            if (part.empty()) continue;
            p += "/" + part;
            ::mkdir(p.c_str(), 0755);
        }
    }
    void write(const std::string& path, const std::string& text)
    {
        mkdirs(path.substr(0, path.find_last_of('/')));
        std::ofstream(root_ + path) << text;
    }
    void cpus(int n)
    {
        std::string s;
        for (int i = 0; i < n; ++i) s += "processor\t: " + std::to_string(i) + "\nmodel name\t: fake\n\n";
        write("/proc/cpuinfo", s);
    }

private:
    std::string root_;
};

#endif  // __linux__

}  // namespace

// ---------------------------------------------------------------------------
// Parsing as R does

TEST(CoresParse, StringToIntFollowsRsAsInteger)
{
    using cores_detail::stringToInt;
    // The values R 4.2 gives for as.integer() of these strings.
    EXPECT_EQ(stringToInt("4"), 4);
    EXPECT_EQ(stringToInt("4.7"), 4);
    EXPECT_EQ(stringToInt(" 12 "), 12);
    EXPECT_EQ(stringToInt("+3"), 3);
    EXPECT_EQ(stringToInt("0x1A"), 26);
    EXPECT_EQ(stringToInt("0X10"), 16);
    EXPECT_EQ(stringToInt("1L"), naInt);
    EXPECT_EQ(stringToInt("TRUE"), naInt);
    EXPECT_EQ(stringToInt(".5"), 0);
    EXPECT_EQ(stringToInt("5."), 5);
    EXPECT_EQ(stringToInt("1e-2"), 0);
    EXPECT_EQ(stringToInt("Inf"), naInt);
    EXPECT_EQ(stringToInt("NaN"), naInt);
    EXPECT_EQ(stringToInt("-0.5"), 0);
    EXPECT_EQ(stringToInt("1e3"), 1000);
    EXPECT_EQ(stringToInt("3e9"), naInt);
    EXPECT_EQ(stringToInt("NA"), naInt);
    EXPECT_EQ(stringToInt(""), naInt);
    EXPECT_EQ(stringToInt("1 2"), naInt);
    EXPECT_EQ(stringToInt("0x"), naInt);
    EXPECT_EQ(stringToInt("1e"), 1);
    EXPECT_EQ(stringToInt("-"), naInt);
    EXPECT_EQ(stringToInt("1.5e1"), 15);
    EXPECT_EQ(stringToInt("1d"), naInt);
    EXPECT_EQ(stringToInt("-7"), -7);
}

TEST(CoresParse, StringToLogicalFollowsRsAsLogical)
{
    using cores_detail::stringToLogical;
    for (auto s : {"T", "True", "TRUE", "true"}) EXPECT_EQ(stringToLogical(s), 1) << s;
    for (auto s : {"F", "False", "FALSE", "false"}) EXPECT_EQ(stringToLogical(s), 0) << s;
    for (auto s : {"tRUE", "yes", "1", " TRUE", ""}) EXPECT_EQ(stringToLogical(s), -1) << s;
}

TEST(CoresParse, CpuLists)
{
    std::vector<int> c;
    ASSERT_TRUE(cores_detail::parseCpuList("0-3,8,10-11", c));
    EXPECT_EQ(c, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
    ASSERT_TRUE(cores_detail::parseCpuList("3-1", c));  // R's 3:1
    EXPECT_EQ(c, (std::vector<int>{3, 2, 1}));
    ASSERT_TRUE(cores_detail::parseCpuList("1,1,0-1", c));  // duplicates dropped
    EXPECT_EQ(c.size(), 2u);
    ASSERT_TRUE(cores_detail::parseCpuList("\n", c));
    EXPECT_TRUE(c.empty());
    EXPECT_FALSE(cores_detail::parseCpuList("a-b", c));
    EXPECT_FALSE(cores_detail::parseCpuList("1,,2", c));
}

TEST(CoresParse, SlurmTaskCounts)
{
    std::vector<int> c;
    ASSERT_TRUE(cores_detail::expandSlurmCounts("2(x3),1", c));
    EXPECT_EQ(c, (std::vector<int>{2, 2, 2, 1}));
    ASSERT_TRUE(cores_detail::expandSlurmCounts(" 4 , 2( x2 )", c));
    EXPECT_EQ(c, (std::vector<int>{4, 2, 2}));
    EXPECT_FALSE(cores_detail::expandSlurmCounts("2(x),1", c));
    EXPECT_FALSE(cores_detail::expandSlurmCounts("a", c));
}

TEST(CoresParse, DescribeLikeR)
{
    EXPECT_EQ(OptionValue::number(2.5).describe(), "2.5");
    EXPECT_EQ(OptionValue::number(NAN).describe(), "NA");
    EXPECT_EQ(OptionValue::text({"a"}).describe(), "\"a\"");
    EXPECT_EQ(OptionValue::logical(1).describe(), "TRUE");
    EXPECT_EQ(OptionValue().describe(), "NULL");
    OptionValue v;
    v.type = OptionValue::Type::real;
    v.numbers = {1, 2};
    EXPECT_EQ(v.describe(), "c(1, 2)");
}

// ---------------------------------------------------------------------------
// The rules

TEST(CoresRules, MachineAloneIsSystem)
{
    Fake f;
    EXPECT_CORES(f, 8, "system");
    f.machine.processors = naInt;  // detectCores() NA: parallelly uses 1
    EXPECT_CORES(f, 1, "system");
}

TEST(CoresRules, TiesGoToTheFirstMethod)
{
    Fake f;
    f.machine.cgroupCpuset = 8;
    f.affinity = 8;
    EXPECT_CORES(f, 8, "system");
    f.affinity = 4;
    f.machine.cgroupCpuset = 4;
    EXPECT_CORES(f, 4, "cgroups.cpuset");
}

TEST(CoresRules, CgroupQuotasAreRounded)
{
    Fake f;
    f.machine.cgroupCpuQuota = 1.4;
    EXPECT_CORES(f, 1, "cgroups.cpuquota");
    f.machine.cgroupCpuQuota = 2.5;
    EXPECT_CORES(f, 3, "cgroups.cpuquota");
    f.machine.cgroupCpuQuota = 0.2;  // rounds to 0: one core
    EXPECT_CORES(f, 1, "cgroups.cpuquota");
    f.machine.cgroupCpuQuota = NAN;
    f.machine.cgroup2CpuMax = 1.6;
    EXPECT_CORES(f, 2, "cgroups2.cpu.max");
}

TEST(CoresRules, ParallellyCgroupOverrideOptions)
{
    Fake f;
    f.machine.cgroupCpuset = 6;
    f.opt("parallelly.cgroups.cpuset", OptionValue::number(0, true));  // length 1: one CPU
    EXPECT_CORES(f, 1, "cgroups.cpuset");
    Fake g;
    g.num("future.cgroups.cpuquota", 3.4);
    EXPECT_CORES(g, 3, "cgroups.cpuquota");
    Fake h;
    h.num("parallelly.cgroups2.cpu.max", 0.3);
    EXPECT_CORES(h, 1, "cgroups2.cpu.max");
}

TEST(CoresRules, AffinityIsNproc)
{
    Fake f;
    f.affinity = 3;
    EXPECT_CORES(f, 3, "nproc");
}

TEST(CoresRules, McCoresOptionAndVariable)
{
    EXPECT_CORES(Fake().num("mc.cores", 2), 2, "mc.cores");
    EXPECT_CORES(Fake().num("mc.cores", 0), 1, "mc.cores");  // 0: no forking, one core
    EXPECT_CORES(Fake().num("mc.cores", 2.9), 2, "mc.cores");  // as.integer
    EXPECT_CORES(Fake().str("mc.cores", {"3"}), 3, "mc.cores");
    EXPECT_CORES(Fake().var("MC_CORES", "3"), 3, "mc.cores");
    EXPECT_CORES(Fake().var("MC_CORES", "3").num("mc.cores", 5), 5, "mc.cores");  // the option wins
    EXPECT_CORES(Fake().var("MC_CORES", "abc"), 8, "system");
    EXPECT_CORES(Fake().var("MC_CORES", "abc").num("future.mc.cores", 4), 4, "mc.cores");
    EXPECT_CORES(Fake().var("MC_CORES", "2").num("future.mc.cores", 4), 2, "mc.cores");  // parallel sets mc.cores
    EXPECT_CORES_ERROR(Fake().var("MC_CORES", "-1"), "'mc.cores' = -1");
}

TEST(CoresRules, RCmdCheckLimit)
{
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", "TRUE"), 2, "_R_CHECK_LIMIT_CORES_");
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", "warn"), 2, "_R_CHECK_LIMIT_CORES_");
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", "0"), 2, "_R_CHECK_LIMIT_CORES_");
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", "false"), 8, "system");
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", "FALSE"), 8, "system");
    EXPECT_CORES(Fake().var("_R_CHECK_LIMIT_CORES_", ""), 8, "system");
}

TEST(CoresRules, Schedulers)
{
    EXPECT_CORES(Fake().var("SLURM_CPUS_PER_TASK", "3"), 3, "Slurm");
    EXPECT_CORES(Fake().var("SLURM_CPUS_ON_NODE", "5"), 5, "Slurm");
    EXPECT_CORES(Fake().var("SLURM_CPUS_ON_NODE", "5").var("SLURM_CPUS_PER_TASK", "6"), 6, "Slurm");
    EXPECT_CORES(Fake().var("SLURM_JOB_NUM_NODES", "2").var("SLURM_CPUS_ON_NODE", "5")
                     .var("SLURM_TASKS_PER_NODE", "3(x2)"), 3, "Slurm");
    EXPECT_CORES(Fake().var("SLURM_NNODES", "2").var("SLURM_TASKS_PER_NODE", "4,2"), 4, "Slurm");
    {
        Fake f;
        f.var("SLURM_NNODES", "2").var("SLURM_TASKS_PER_NODE", "x(2)");
        CoresResult r = f.cores();
        EXPECT_EQ(r.rule, "system");
        ASSERT_EQ(r.warnings.size(), 1u);
    }
    EXPECT_CORES(Fake().var("PBS_NUM_PPN", "3").var("NCPUS", "2"), 3, "PBS");
    EXPECT_CORES(Fake().var("NCPUS", "2"), 2, "PBS");
    EXPECT_CORES(Fake().var("NSLOTS", "4"), 4, "SGE");
    EXPECT_CORES(Fake().var("NSLOTS", " 4 "), 4, "SGE");
    EXPECT_CORES(Fake().var("NSLOTS", "1.9"), 1, "SGE");
    EXPECT_CORES(Fake().var("NSLOTS", "abc"), 8, "system");
    EXPECT_CORES(Fake().var("R_PARALLELLY_NSLOTS", "5"), 5, "SGE");
    EXPECT_CORES(Fake().var("R_FUTURE_NSLOTS", "5"), 5, "SGE");
    EXPECT_CORES(Fake().var("NSLOTS", "").var("R_FUTURE_NSLOTS", "5"), 5, "SGE");  // empty is unset
    EXPECT_CORES(Fake().var("LSB_DJOB_NUMPROC", "6"), 6, "LSF");
    EXPECT_CORES(Fake().var("PJM_VNODE_CORE", "3").var("PJM_PROC_BY_NODE", "2"), 3, "PJM");
    EXPECT_CORES(Fake().var("PJM_PROC_BY_NODE", "2"), 2, "PJM");
    EXPECT_CORES(Fake().var("BIOCPARALLEL_WORKER_NUMBER", "3"), 3, "BiocParallel");
    EXPECT_CORES(Fake().var("IS_BIOC_BUILD_MACHINE", "true"), 4, "Bioconductor");
    EXPECT_CORES(Fake().var("BBS_HOME", "TRUE"), 4, "Bioconductor");
    EXPECT_CORES(Fake().var("BBS_HOME", "/home/biocbuild/bbs"), 8, "system");  // as parallelly: not "true"
    EXPECT_CORES(Fake().var("OMP_NUM_THREADS", "1").var("OMP_THREAD_LIMIT", "1"), 8, "system");  // ignored
}

TEST(CoresRules, ZeroOrLessIsAnError)
{
    EXPECT_CORES_ERROR(Fake().var("SLURM_CPUS_PER_TASK", "0"), "'Slurm' = 0");
    EXPECT_CORES_ERROR(Fake().var("NSLOTS", "-2").var("LSB_DJOB_NUMPROC", "0"), "'LSF' = 0, 'SGE' = -2");
    EXPECT_CORES_ERROR(Fake().var("NSLOTS", "0.5"), "'SGE' = 0");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.system", 0), "'system' = 0");
}

TEST(CoresRules, Fallback)
{
    Fake f;
    f.machine.cgroupCpuset = 8;
    f.affinity = 8;
    f.num("parallelly.availableCores.fallback", 2);
    EXPECT_CORES(f, 2, "fallback");  // nothing else applies
    EXPECT_CORES(Fake().var("R_PARALLELLY_AVAILABLECORES_FALLBACK", "3"), 3, "fallback");
    EXPECT_CORES(Fake().var("R_FUTURE_AVAILABLECORES_FALLBACK", "3"), 3, "fallback");
    EXPECT_CORES(Fake().var("R_PARALLELLY_AVAILABLECORES_FALLBACK", "abc"), 8, "system");  // NA: no fallback
    Fake g = f;
    g.affinity = 4;  // the affinity mask limits the process: the fallback is not used
    EXPECT_CORES(g, 4, "nproc");
    Fake h = f;
    h.var("SLURM_CPUS_PER_TASK", "6");  // another rule applies
    EXPECT_CORES(h, 6, "Slurm");
    Fake q = f;
    q.machine.cgroupCpuQuota = 7;  // a quota, too (parallelly's list misspells it)
    EXPECT_CORES(q, 7, "cgroups.cpuquota");
    Fake big = f;
    big.num("parallelly.availableCores.fallback", 16);  // the fallback may be larger
    EXPECT_CORES(big, 16, "fallback");
    // Alone among the methods, the fallback is simply a count.
    Fake only;
    only.str("parallelly.availableCores.methods", {"fallback"}).num("parallelly.availableCores.fallback", 3);
    EXPECT_CORES(only, 3, "fallback");
}

TEST(CoresRules, Minimum)
{
    EXPECT_CORES(Fake().num("mc.cores", 1).num("parallelly.availableCores.min", 2), 2, "mc.cores*");
    EXPECT_CORES(Fake().num("mc.cores", 1).num("parallelly.availableCores.min", 2.5), 2, "mc.cores*");
    EXPECT_CORES(Fake().num("mc.cores", 3).num("parallelly.availableCores.min", 2), 3, "mc.cores");
    EXPECT_CORES(Fake().num("mc.cores", 1).var("R_PARALLELLY_AVAILABLECORES_MIN", "2"), 2, "mc.cores*");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.min", 9), "must not be greater");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.min", 0), "at least 1");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.min", NAN), "at least 1");
    EXPECT_CORES_ERROR(Fake().str("parallelly.availableCores.min", {"2"}), "single number");
    EXPECT_CORES_ERROR(Fake().var("R_PARALLELLY_AVAILABLECORES_MIN", "two"), "R_PARALLELLY_AVAILABLECORES_MIN");
    // The minimum is checked against the machine's size as overridden.
    EXPECT_CORES(Fake().num("parallelly.availableCores.system", 16).num("parallelly.availableCores.min", 12)
                     .num("mc.cores", 2),
                 12, "mc.cores*");
}

TEST(CoresRules, Omit)
{
    EXPECT_CORES(Fake().num("parallelly.availableCores.omit", 3), 5, "system");
    EXPECT_CORES(Fake().num("parallelly.availableCores.omit", 20), 1, "system");
    EXPECT_CORES(Fake().var("R_PARALLELLY_AVAILABLECORES_OMIT", "2"), 6, "system");
    EXPECT_CORES(Fake().num("future.availableCores.omit", 2), 6, "system");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.omit", -1), "omit");
    EXPECT_CORES_ERROR(Fake().var("R_PARALLELLY_AVAILABLECORES_OMIT", "x"), "OMIT");
}

TEST(CoresRules, Methods)
{
    Fake f;
    f.num("mc.cores", 1).str("parallelly.availableCores.methods", {"system", "nproc"});
    EXPECT_CORES(f, 8, "system");  // mc.cores is not among them
    EXPECT_CORES(Fake().num("mc.cores", 2).var("R_PARALLELLY_AVAILABLECORES_METHODS", " mc.cores , Slurm"), 2,
                 "mc.cores");
    EXPECT_CORES(Fake().var("R_PARALLELLY_AVAILABLECORES_METHODS", "mc.cores,Slurm"), 1, "current");
    // Any other name: an option, else an environment variable.
    EXPECT_CORES(Fake().str("parallelly.availableCores.methods", {"system", "MY_CORES"}).var("MY_CORES", "3"), 3,
                 "MY_CORES");
    EXPECT_CORES(Fake().str("parallelly.availableCores.methods", {"system", "my.cores"}).num("my.cores", 5), 5,
                 "my.cores");
    EXPECT_CORES(Fake().str("parallelly.availableCores.methods", {"system", "mc.cores+1"}).num("mc.cores", 2), 3,
                 "mc.cores+1");
    EXPECT_CORES(Fake().str("parallelly.availableCores.methods", {"custom", "connections"}), 1, "current");
    EXPECT_CORES_ERROR(Fake().num("parallelly.availableCores.methods", 1), "character vector");
}

TEST(CoresRules, SystemOverride)
{
    EXPECT_CORES(Fake().num("parallelly.availableCores.system", 3), 3, "system");
    EXPECT_CORES(Fake().var("R_PARALLELLY_AVAILABLECORES_SYSTEM", "3"), 3, "system");
    EXPECT_CORES_ERROR(Fake().var("R_PARALLELLY_AVAILABLECORES_SYSTEM", "abc"), "not a number");
}

TEST(CoresRules, AllListsEveryRuleThatApplied)
{
    Fake f;
    f.affinity = 4;
    f.var("NSLOTS", "2").num("parallelly.availableCores.min", 3);
    CoresResult r = f.cores();
    ASSERT_EQ(r.all.size(), 3u);
    EXPECT_EQ(r.all[0], (std::pair<std::string, int>{"system", 8}));
    EXPECT_EQ(r.all[1], (std::pair<std::string, int>{"nproc", 4}));
    EXPECT_EQ(r.all[2], (std::pair<std::string, int>{"SGE*", 3}));
    EXPECT_EQ(r.count, 3);
    EXPECT_EQ(r.rule, "SGE*");
}

// ---------------------------------------------------------------------------
// Thread settings

TEST(Threads, CheckThreadCount)
{
    std::size_t n = 99;
    EXPECT_EQ(checkThreadCount(OptionValue::number(0), "n", n), "");
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(checkThreadCount(OptionValue::number(1024, true), "n", n), "");
    EXPECT_EQ(n, 1024u);
    EXPECT_EQ(checkThreadCount(OptionValue::number(3.0), "n", n), "");
    EXPECT_EQ(n, 3u);
    for (double bad : {-1.0, 2.5, 1e9, 1025.0, double(NAN), double(INFINITY)}) {
        std::string e = checkThreadCount(OptionValue::number(bad), "n", n);
        EXPECT_NE(e.find("n is " + OptionValue::number(bad).describe()), std::string::npos) << e;
        EXPECT_NE(e.find("0 (no worker threads"), std::string::npos) << e;
    }
    EXPECT_NE(checkThreadCount(OptionValue::text({"a"}), "n", n).find("n is \"a\""), std::string::npos);
    EXPECT_NE(checkThreadCount(OptionValue::logical(1), "n", n), "");
    OptionValue two;
    two.type = OptionValue::Type::real;
    two.numbers = {1, 2};
    EXPECT_NE(checkThreadCount(two, "n", n), "");
    OptionValue fn;
    fn.type = OptionValue::Type::other;
    fn.otherType = "closure";
    EXPECT_NE(checkThreadCount(fn, "n", n).find("<closure>"), std::string::npos);
}

TEST(Threads, ParseThreadCount)
{
    std::size_t n = 0;
    EXPECT_TRUE(parseThreadCount("4", n));
    EXPECT_EQ(n, 4u);
    EXPECT_TRUE(parseThreadCount(" 0 ", n));
    EXPECT_EQ(n, 0u);
    EXPECT_TRUE(parseThreadCount("1024", n));
    for (auto bad : {"abc", "-1", "2.5", "1e9", "NA", "Inf", "1025", "", "4 threads"})
        EXPECT_FALSE(parseThreadCount(bad, n)) << bad;
}

TEST(Threads, Precedence)
{
    Fake f;
    f.affinity = 6;
    ThreadsResult r = f.threads();
    EXPECT_EQ(r.count, 6u);
    EXPECT_EQ(r.source, "nproc");
    f.var("RCPPSPOOL_NUM_THREADS", "3");
    EXPECT_EQ(f.threads().count, 3u);
    EXPECT_EQ(f.threads().source, "RCPPSPOOL_NUM_THREADS");
    f.num("RcppSpool.threads", 2);
    EXPECT_EQ(f.threads().count, 2u);
    EXPECT_EQ(f.threads().source, "RcppSpool.threads");
    f.num("RcppSpool.setThreads", 0);
    EXPECT_EQ(f.threads().count, 0u);
    EXPECT_EQ(f.threads().source, "setThreads");
}

TEST(Threads, BadEnvironmentWarnsAndIsIgnored)
{
    Fake f;
    f.var("RCPPSPOOL_NUM_THREADS", "lots");
    ThreadsResult r = f.threads();
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.count, 8u);
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("RCPPSPOOL_NUM_THREADS='lots'"), std::string::npos);
    f.var("RCPPSPOOL_NUM_THREADS", "  ");  // blank: automatic, no warning
    EXPECT_TRUE(f.threads().warnings.empty());
}

TEST(Threads, BadOptionIsAnError)
{
    ThreadsResult r = Fake().num("RcppSpool.threads", 2.5).threads();
    EXPECT_NE(r.error.find("option 'RcppSpool.threads' is 2.5"), std::string::npos) << r.error;
    r = Fake().str("RcppSpool.setThreads", {"a"}).num("RcppSpool.threads", 2).threads();
    EXPECT_NE(r.error.find("setThreads"), std::string::npos) << r.error;
    r = Fake().var("SLURM_CPUS_PER_TASK", "0").threads();  // from availableCores()
    EXPECT_NE(r.error.find("'Slurm' = 0"), std::string::npos) << r.error;
}

// ---------------------------------------------------------------------------
// cgroups, /proc: fake trees

#if defined(__linux__)

TEST(CoresMachine, CgroupsV1AsOnAHybridHost)
{
    FakeRoot fs;
    fs.cpus(8);
    fs.write("/proc/self/cgroup",
             "12:cpuset:/job/7\n4:cpu,cpuacct:/job/7/step\n0::/\n");
    fs.write("/proc/self/mountinfo",
             "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
             "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
             "33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
             "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
    fs.write("/sys/fs/cgroup/cpuset/job/7/cpuset.cpus", "0-2,5\n");
    fs.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-7\n");
    // The step's directory is not visible: its nearest existing ancestor counts.
    fs.write("/sys/fs/cgroup/cpu,cpuacct/job/7/cpu.cfs_quota_us", "150000\n");
    fs.write("/sys/fs/cgroup/cpu,cpuacct/job/7/cpu.cfs_period_us", "100000\n");
    fs.mkdirs("/sys/fs/cgroup/unified");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_EQ(m.processors, 8);
    EXPECT_EQ(m.cgroupCpuset, 4);
    EXPECT_DOUBLE_EQ(m.cgroupCpuQuota, 1.5);
    EXPECT_TRUE(std::isnan(m.cgroup2CpuMax));
    EXPECT_TRUE(m.warnings.empty());

    Fake f;
    f.machine = m;
    EXPECT_CORES(f, 2, "cgroups.cpuquota");
}

TEST(CoresMachine, CgroupsV1NoQuotaAndFallbackWithoutMountinfo)
{
    FakeRoot fs;
    fs.cpus(4);
    fs.write("/proc/self/cgroup", "3:cpuset:/\n1:cpu:/\n");
    // no mountinfo: parallelly's places under /sys/fs/cgroup
    fs.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n");
    fs.write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
    fs.write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_EQ(m.processors, 4);
    EXPECT_EQ(m.cgroupCpuset, 4);
    EXPECT_TRUE(std::isnan(m.cgroupCpuQuota));
}

TEST(CoresMachine, CgroupsV1OutOfRangeValuesAreIgnored)
{
    FakeRoot fs;
    fs.cpus(2);
    fs.write("/proc/self/cgroup", "3:cpuset:/\n1:cpu:/\n");
    fs.write("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n");  // CPUs 2 and 3 do not exist
    fs.write("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "800000\n");  // 8 CPUs of 2
    fs.write("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_EQ(m.cgroupCpuset, naInt);
    EXPECT_TRUE(std::isnan(m.cgroupCpuQuota));
    EXPECT_EQ(m.warnings.size(), 2u);
}

TEST(CoresMachine, CgroupsV2InAContainer)
{
    // A container: its cgroup is the root of the mounted hierarchy.
    FakeRoot fs;
    fs.cpus(16);
    fs.write("/proc/self/cgroup", "0::/\n");
    fs.write("/proc/self/mountinfo",
             "700 600 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n");
    fs.write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    fs.write("/sys/fs/cgroup/cpu.max", "250000 100000\n");
    fs.write("/sys/fs/cgroup/cpuset.cpus.effective", "0-5\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_DOUBLE_EQ(m.cgroup2CpuMax, 2.5);
    EXPECT_EQ(m.cgroupCpuset, 6);
    Fake f;
    f.machine = m;
    f.affinity = 6;
    EXPECT_CORES(f, 3, "cgroups2.cpu.max");
}

TEST(CoresMachine, CgroupsV2OnAHostTheSmallestQuotaOfTheAncestors)
{
    FakeRoot fs;
    fs.cpus(8);
    fs.write("/proc/self/cgroup", "0::/system.slice/job.service\n");
    fs.write("/proc/self/mountinfo",
             "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw\n");
    fs.write("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu\n");
    fs.write("/sys/fs/cgroup/cpuset.cpus.effective", "0-7\n");
    fs.write("/sys/fs/cgroup/system.slice/cpu.max", "150000 100000\n");
    fs.write("/sys/fs/cgroup/system.slice/job.service/cpu.max", "max 100000\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_DOUBLE_EQ(m.cgroup2CpuMax, 1.5);
    EXPECT_EQ(m.cgroupCpuset, 8);  // from the root, the deepest that has one
}

TEST(CoresMachine, CgroupsV2WithoutMountinfoAndNoLimit)
{
    FakeRoot fs;
    fs.cpus(8);
    fs.write("/proc/self/cgroup", "0::/\n");
    fs.write("/sys/fs/cgroup/cgroup.controllers", "cpu\n");
    fs.write("/sys/fs/cgroup/cpu.max", "max 100000\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_TRUE(std::isnan(m.cgroup2CpuMax));
    EXPECT_EQ(m.cgroupCpuset, naInt);
}

TEST(CoresMachine, MountRootAndEscapedMountPoints)
{
    // A v1 hierarchy whose mounted root is the process's own cgroup (as
    // Docker without a cgroup namespace shows it), mounted at a path with a space.
    FakeRoot fs;
    fs.cpus(8);
    fs.write("/proc/self/cgroup", "5:cpuset:/docker/abc\n");
    fs.write("/proc/self/mountinfo",
             "50 40 0:40 /docker/abc /cg\\040set rw - cgroup cgroup rw,cpuset\n");
    fs.write("/cg set/cpuset.cpus", "2-3\n");
    MachineFacts m = readMachineFacts(fs.root());
    EXPECT_EQ(m.cgroupCpuset, 2);
}
#endif  // __linux__

TEST(CoresMachine, TheRealMachine)
{
    MachineFacts m = readMachineFacts();
    ASSERT_NE(m.processors, naInt);
    EXPECT_GE(m.processors, 1);
    int a = affinityCount();
#if defined(__linux__)
    ASSERT_NE(a, naInt);
    EXPECT_GE(a, 1);
    EXPECT_LE(a, m.processors);
#else
    (void)a;
#endif
}

// ---------------------------------------------------------------------------
// The environment snapshot and the public functions without R

TEST(EnvSnapshot, SeesChangesToWhatWasRead)
{
    // Windows has no environment array to compare (environmentArray() is
    // null): there a snapshot never says "unchanged", and the settings are
    // read anew at every call.
    const bool supported = environmentArray() != nullptr;
#if !defined(_WIN32)
    ASSERT_TRUE(supported);
#endif
    unsetEnv("RCPPSPOOL_TEST_A");
    setEnv("RCPPSPOOL_TEST_B", "1");
    EnvSnapshot s;
    std::string v;
    auto reader = s.reader();
    EXPECT_FALSE(reader("RCPPSPOOL_TEST_A", v));
    EXPECT_TRUE(reader("RCPPSPOOL_TEST_B", v));
    s.seal();
    EXPECT_EQ(s.unchanged(), supported);
    setEnv("RCPPSPOOL_TEST_B", "2");
    EXPECT_FALSE(s.unchanged());

    EnvSnapshot t;
    auto r2 = t.reader();
    r2("RCPPSPOOL_TEST_A", v);
    t.seal();
    EXPECT_EQ(t.unchanged(), supported);
    setEnv("RCPPSPOOL_TEST_A", "1");  // appears
    EXPECT_FALSE(t.unchanged());

    EnvSnapshot u;
    auto r3 = u.reader();
    r3("RCPPSPOOL_TEST_A", v);
    u.seal();
    unsetEnv("RCPPSPOOL_TEST_A");  // disappears
    EXPECT_FALSE(u.unchanged());
    unsetEnv("RCPPSPOOL_TEST_B");
}

TEST(PublicStandalone, FollowsTheEnvironment)
{
    unsetEnv("RCPPSPOOL_NUM_THREADS");
    std::size_t cores = RcppSpool::availableCores();
    EXPECT_GE(cores, 1u);
    EXPECT_EQ(RcppSpool::defaultThreads(), cores);
    setEnv("RCPPSPOOL_NUM_THREADS", "3");
    EXPECT_EQ(RcppSpool::defaultThreads(), 3u);
    setEnv("RCPPSPOOL_NUM_THREADS", "0");
    EXPECT_EQ(RcppSpool::defaultThreads(), 0u);
    setEnv("RCPPSPOOL_NUM_THREADS", "many");  // warned about (stderr), ignored
    testing::internal::CaptureStderr();
    EXPECT_EQ(RcppSpool::defaultThreads(), cores);
    EXPECT_EQ(RcppSpool::defaultThreads(), cores);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("RCPPSPOOL_NUM_THREADS='many'"), std::string::npos) << err;
    std::size_t first = err.find("'many'");
    EXPECT_EQ(err.find("'many'", first + 1), std::string::npos) << "warned more than once: " << err;
    unsetEnv("RCPPSPOOL_NUM_THREADS");

    setEnv("MC_CORES", "1");
    EXPECT_EQ(RcppSpool::availableCores(), 1u);
    setEnv("SLURM_CPUS_PER_TASK", "0");
    EXPECT_THROW(RcppSpool::availableCores(), std::invalid_argument);
    EXPECT_THROW(RcppSpool::defaultThreads(), std::invalid_argument);
    unsetEnv("SLURM_CPUS_PER_TASK");
    unsetEnv("MC_CORES");
    EXPECT_EQ(RcppSpool::availableCores(), cores);
}

TEST(PublicStandalone, OtherThreadsSeeTheSame)
{
    setEnv("RCPPSPOOL_NUM_THREADS", "5");
    std::size_t seen = 0;
    std::thread t([&] { seen = RcppSpool::defaultThreads(); });
    t.join();
    EXPECT_EQ(seen, 5u);
    unsetEnv("RCPPSPOOL_NUM_THREADS");
}

TEST(PublicStandalone, RepeatedCallsAgreeAndTheMemoSeesChanges)
{
    // The cost per call (memoized: ~50 ns) is reported, not asserted: speed
    // belongs in benchmarks, and sanitizer builds are many times slower.
    unsetEnv("RCPPSPOOL_NUM_THREADS");
    RcppSpool::defaultThreads();
    auto t0 = std::chrono::steady_clock::now();
    std::size_t sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) sum += RcppSpool::defaultThreads();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
    EXPECT_EQ(sum, n * RcppSpool::availableCores());
    std::printf("defaultThreads(): %.0f ns per call\n", ns);
    setEnv("RCPPSPOOL_NUM_THREADS", "3");  // the memo must notice
    EXPECT_EQ(RcppSpool::defaultThreads(), 3u);
    unsetEnv("RCPPSPOOL_NUM_THREADS");
    EXPECT_EQ(RcppSpool::defaultThreads(), RcppSpool::availableCores());
}
