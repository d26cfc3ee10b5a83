// The machine's facts on this process's CPUs: processors, cgroup limits, the affinity mask.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cores_cgroups.h"
#include "cores_values.h"

#if defined(__linux__)
#include <cerrno>
#include <sched.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! What the operating system says about this process's CPUs, apart from the
//! affinity mask (which can change while the process runs). Values that do
//! not apply or cannot be read are naInt / NaN.
struct MachineFacts {
    int processors = naInt;  //!< processors on the machine, as parallel::detectCores() counts them
    int cgroupCpuset = naInt;  //!< CPUs in the cgroup's cpuset (v1 cpuset.cpus, else v2 cpuset.cpus.effective)
    double cgroupCpuQuota = std::numeric_limits<double>::quiet_NaN();  //!< v1 cfs_quota_us / cfs_period_us
    double cgroup2CpuMax = std::numeric_limits<double>::quiet_NaN();   //!< v2 cpu.max quota / period
    std::vector<std::string> warnings;  //!< cgroup values that were read but ignored, and why
};

namespace cores_detail {

//! Processors on the machine. On Linux the lines of /proc/cpuinfo that
//! start with "processor", as parallel::detectCores() counts them (all
//! configured CPUs, whatever the affinity mask or cgroup allow).
inline int countProcessors(const std::string& root)
{
#if defined(__linux__)
    std::vector<std::string> lines;
    int n = 0;
    if (readLines(root + "/proc/cpuinfo", lines))
        for (auto& l : lines)
            if (startsWith(l, "processor")) ++n;
    if (n > 0) return n;
    // No /proc (some sandboxes): R's detectCores() says NA there and
    // parallelly then uses 1; the configured count is more useful.
    long c = ::sysconf(_SC_NPROCESSORS_CONF);
    return c > 0 ? static_cast<int>(c) : naInt;
#elif defined(__APPLE__)
    (void)root;
    int n = 0;
    std::size_t len = sizeof n;
    if (::sysctlbyname("hw.logicalcpu", &n, &len, nullptr, 0) == 0 && n > 0) return n;
    unsigned h = std::thread::hardware_concurrency();
    return h ? static_cast<int>(h) : naInt;
#else
    (void)root;
    unsigned h = std::thread::hardware_concurrency();
    return h ? static_cast<int>(h) : naInt;
#endif
}

//! The number of CPUs in a cpuset file's first line; naInt (with a warning
//! in `facts`) when the list cannot be read or names a CPU the machine does
//! not have, as parallelly ignores such sets.
inline int cpusetCount(const std::string& file, MachineFacts& facts)
{
    std::string line;
    if (!readFirstLine(file, line)) return naInt;
    std::vector<int> cpus;
    if (!parseCpuList(line, cpus)) {
        facts.warnings.push_back("ignoring the cgroups CPU set in " + file + ", which cannot be parsed: '" + line +
                                 "'");
        return naInt;
    }
    for (int c : cpus)
        if (facts.processors != naInt && c >= facts.processors) {
            facts.warnings.push_back("ignoring the cgroups CPU set in " + file +
                                     ", which names CPUs out of range [0," + std::to_string(facts.processors - 1) +
                                     "]: '" + line + "'");
            return naInt;
        }
    return cpus.empty() ? naInt : static_cast<int>(cpus.size());
}

//! A CPU quota in CPUs, or NaN (with a warning) when it is not a number of
//! CPUs the machine could give (at most its processors).
inline double checkedQuota(double value, const std::string& what, MachineFacts& facts)
{
    if (std::isnan(value)) return value;
    double maxCores = facts.processors == naInt ? std::numeric_limits<double>::infinity() : facts.processors;
    if (!std::isfinite(value) || value <= 0 || value > maxCores) {
        facts.warnings.push_back("ignoring the cgroups CPU quota in " + what + ", which is out of range [1," +
                                 formatNumber(maxCores) + "]: " + formatNumber(value));
        return std::numeric_limits<double>::quiet_NaN();
    }
    return value;
}

}  // namespace cores_detail

//! Reads what the machine says about this process's CPUs. `root` prefixes
//! every absolute path read (/proc/cpuinfo, /proc/self/cgroup,
//! /proc/self/mountinfo and the cgroup mount points in it), so that tests can
//! run it on a fake tree; leave it empty for the real one.
//!
//! cgroups are found the way the kernel describes them: the process's cgroup
//! per controller in /proc/self/cgroup, and where each hierarchy is mounted in
//! /proc/self/mountinfo (falling back to /sys/fs/cgroup/<controller> for v1
//! and /sys/fs/cgroup for v2 when mountinfo does not list it).
//!  - v1 cpuset: cpuset.cpus of the process's cpuset cgroup;
//!  - v1 quota: cpu.cfs_quota_us / cpu.cfs_period_us of its cpu cgroup (-1: none);
//!  - v2: cpu.max ("max 100000" is no limit) of its cgroup and of each
//!    ancestor up to the mount point, the smallest quota found (a limit on a
//!    parent binds its children); cpuset.cpus.effective of the deepest of them
//!    that has one, used when there is no v1 cpuset.
inline MachineFacts readMachineFacts(const std::string& root = "")
{
    using namespace cores_detail;
    MachineFacts facts;
    facts.processors = countProcessors(root);
#if defined(__linux__)
    auto groups = readProcessCgroups(root);
    auto mounts = readCgroupMounts(root);
    auto groupPath = [&](const std::string& controller, std::string& path) {
        for (auto& g : groups)
            if (g.first == controller) {
                path = g.second;
                return true;
            }
        return false;
    };
    // The directories, deepest first, of this process's v1 cgroup for `controller`.
    auto v1Dirs = [&](const std::string& controller) {
        std::string path;
        if (!groupPath(controller, path)) return std::vector<std::string>{};
        for (auto& m : mounts)
            if (m.fsType == "cgroup" &&
                std::find(m.superOptions.begin(), m.superOptions.end(), controller) != m.superOptions.end())
                return cgroupDirectories(root, m, path);
        Mount fallback{"/", "/sys/fs/cgroup/" + controller, "cgroup", {controller}};
        if (!isDirectory(root + fallback.mountPoint)) return std::vector<std::string>{};
        return cgroupDirectories(root, fallback, path);
    };
    // v1 files are read in the process's own cgroup (the deepest directory
    // that exists), as parallelly does.
    auto v1File = [&](const std::string& controller, const std::string& file, std::string& value) {
        auto dirs = v1Dirs(controller);
        return !dirs.empty() && readFirstLine(dirs.front() + "/" + file, value);
    };

    auto cpusetDirs = v1Dirs("cpuset");
    if (!cpusetDirs.empty()) facts.cgroupCpuset = cpusetCount(cpusetDirs.front() + "/cpuset.cpus", facts);
    std::string quota, period;
    if (v1File("cpu", "cpu.cfs_quota_us", quota) && v1File("cpu", "cpu.cfs_period_us", period)) {
        int q = stringToInt(quota), p = stringToInt(period);
        if (q != naInt && q >= 0 && p != naInt && p > 0)
            facts.cgroupCpuQuota = checkedQuota(static_cast<double>(q) / p, "cpu.cfs_quota_us", facts);
    }

    // cgroup v2: the unified hierarchy ("0::/path").
    std::string path2;
    if (groupPath("", path2)) {
        const Mount* m2 = nullptr;
        for (auto& m : mounts)
            if (m.fsType == "cgroup2") {
                m2 = &m;
                break;
            }
        // Without mountinfo: where parallelly looks, if it is a cgroup2 root.
        Mount fallback{"/", "/sys/fs/cgroup", "cgroup2", {}};
        if (!m2 && isFile(root + "/sys/fs/cgroup/cgroup.controllers")) m2 = &fallback;
        if (m2) {
            auto dirs = cgroupDirectories(root, *m2, path2);
            double best = std::numeric_limits<double>::quiet_NaN();
            bool cpusetDone = facts.cgroupCpuset != naInt;
            for (auto& dir : dirs) {
                std::string line;
                if (readFirstLine(dir + "/cpu.max", line)) {
                    std::vector<std::string> f;
                    for (auto& w : split(trim(line), ' '))
                        if (!w.empty()) f.push_back(w);
                    if (f.size() == 2 && f[0] != "max") {
                        int q = stringToInt(f[0]), p = stringToInt(f[1]);
                        if (q != naInt && p != naInt && p > 0) {
                            double v = checkedQuota(static_cast<double>(q) / p, dir + "/cpu.max", facts);
                            if (!std::isnan(v) && (std::isnan(best) || v < best)) best = v;
                        }
                    }
                }
                if (!cpusetDone && readFirstLine(dir + "/cpuset.cpus.effective", line)) {
                    facts.cgroupCpuset = cpusetCount(dir + "/cpuset.cpus.effective", facts);
                    cpusetDone = true;
                }
            }
            facts.cgroup2CpuMax = best;
        }
    }
#endif
    return facts;
}

//! CPUs in this process's affinity mask (what `nproc` prints, without its
//! OMP_NUM_THREADS handling), or naInt where there is no such mask (not
//! Linux). Asked for the process (its main thread), not the calling thread,
//! so that a pinned worker does not see only its own core.
inline int affinityCount()
{
#if defined(__linux__)
    for (int ncpu = 1024; ncpu <= (1 << 22); ncpu *= 2) {
        cpu_set_t* set = CPU_ALLOC(ncpu);
        if (!set) return naInt;
        std::size_t size = CPU_ALLOC_SIZE(ncpu);
        CPU_ZERO_S(size, set);
        int rc = ::sched_getaffinity(::getpid(), size, set);
        int err = errno;
        int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
        CPU_FREE(set);
        if (rc == 0) return count > 0 ? count : naInt;
        if (err != EINVAL) return naInt;  // EINVAL: the mask is larger than `ncpu`
    }
#endif
    return naInt;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
