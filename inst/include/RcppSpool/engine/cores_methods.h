// What each of availableCores()'s methods says: machine, cgroups, mc.cores, R CMD check, batch schedulers.
#pragma once

#include "../abi.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cores_options.h"
#include "cores_values.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

namespace cores_detail {

//! Expands Slurm's SLURM_TASKS_PER_NODE ("2(x3),1" is 2,2,2,1); false when
//! a part is not a count.
inline bool expandSlurmCounts(const std::string& spec, std::vector<int>& counts)
{
    counts.clear();
    for (auto& part0 : split(spec, ',')) {
        std::string part;
        for (char c : part0)
            if (!std::isspace(static_cast<unsigned char>(c))) part += c;
        if (part0.empty()) continue;
        std::size_t open = part.find("(x");
        if (open != std::string::npos && open > 0 && part.back() == ')') {
            std::string count = part.substr(0, open), times = part.substr(open + 2, part.size() - open - 3);
            bool digits = !count.empty() && !times.empty() &&
                          count.find_first_not_of("0123456789") == std::string::npos &&
                          times.find_first_not_of("0123456789") == std::string::npos;
            int c = digits ? stringToInt(count) : naInt, t = digits ? stringToInt(times) : naInt;
            if (c == naInt || t == naInt) return false;
            for (int i = 0; i < t && i < 100000; ++i) counts.push_back(c);
        } else {
            int c = stringToInt(part);
            if (c == naInt) return false;
            counts.push_back(c);
        }
    }
    return true;
}

//! A CPU quota in CPUs rounded to whole cores, at least 1.
inline int roundQuota(double q)
{
    if (std::isnan(q)) return naInt;
    int n = doubleToInt(std::floor(q + 0.5));
    return n == 0 ? 1 : n;
}

//! What one method says (naInt: it does not apply).
inline int coresByMethod(const CoresInputs& in, const std::string& method, const OptionValue* systemOverride,
                         CoresResult& res)
{
    OptionValue v;
    if (method == "system") {
        if (systemOverride) return firstAsInt(*systemOverride);
        return in.machine.processors == naInt ? 1 : in.machine.processors;
    }
    if (method == "cgroups.cpuset") {
        if (getOption2(in, "parallelly.cgroups.cpuset", v)) return v.length() == 0 ? naInt : int(v.length());
        return in.machine.cgroupCpuset;
    }
    if (method == "cgroups.cpuquota") {
        if (getOption2(in, "parallelly.cgroups.cpuquota", v))
            return v.isNumeric() && v.length() ? roundQuota(v.numbers[0]) : naInt;
        return roundQuota(in.machine.cgroupCpuQuota);
    }
    if (method == "cgroups2.cpu.max") {
        if (getOption2(in, "parallelly.cgroups2.cpu.max", v))
            return v.isNumeric() && v.length() ? roundQuota(v.numbers[0]) : naInt;
        return roundQuota(in.machine.cgroup2CpuMax);
    }
    if (method == "nproc") return in.affinity;
    if (method == "mc.cores") {
        int n = mcCoresOption(in, v) ? firstAsInt(v) : naInt;
        return n == 0 ? 1 : n;  // mc.cores = 0 means "no forking": one core
    }
    if (method == "mc.cores+1") {
        int n = mcCoresOption(in, v) ? firstAsInt(v) : naInt;
        return n == naInt || n == std::numeric_limits<int>::max() ? naInt : n + 1;
    }
    if (method == "BiocParallel") return envInt(in, "BIOCPARALLEL_WORKER_NUMBER");
    if (method == "_R_CHECK_LIMIT_CORES_") {
        // R CMD check sets it ("TRUE", "warn", ...): at most 2 cores unless it is "false".
        std::string chk = toLower(envPlain(in, "_R_CHECK_LIMIT_CORES_"));
        return (!chk.empty() && chk != "false") ? 2 : naInt;
    }
    if (method == "Bioconductor") {
        // Bioconductor's build machines: at most 4 cores.
        if (stringToLogical(envPlain(in, "IS_BIOC_BUILD_MACHINE")) == 1) return 4;
        if (stringToLogical(envPlain(in, "BBS_HOME")) == 1) return 4;
        return naInt;
    }
    if (method == "LSF") return envInt(in, "LSB_DJOB_NUMPROC");
    if (method == "PJM") {
        int n = envInt(in, "PJM_VNODE_CORE");
        return n != naInt ? n : envInt(in, "PJM_PROC_BY_NODE");
    }
    if (method == "PBS") {
        int n = envInt(in, "PBS_NUM_PPN");
        return n != naInt ? n : envInt(in, "NCPUS");
    }
    if (method == "SGE") return envInt(in, "NSLOTS");
    if (method == "Slurm") {
        int n = envInt(in, "SLURM_CPUS_PER_TASK");
        if (n != naInt) return n;
        int nodes = envInt(in, "SLURM_JOB_NUM_NODES");
        if (nodes == naInt) nodes = envInt(in, "SLURM_NNODES");
        if (nodes == naInt) nodes = 1;
        if (nodes == 1) return envInt(in, "SLURM_CPUS_ON_NODE");
        // Several nodes: the count of the first (this) node.
        std::string spec;
        if (!getEnvVar2(in, "SLURM_TASKS_PER_NODE", spec)) return naInt;
        std::vector<int> counts;
        if (!expandSlurmCounts(trim(spec), counts)) {
            res.warnings.push_back("failed to parse the Slurm node counts SLURM_TASKS_PER_NODE='" + spec + "'");
            return naInt;
        }
        return counts.empty() ? naInt : counts[0];
    }
    if (method == "fallback") {
        OptionValue fb;
        std::string err;
        return parallellyOption(in, "availableCores.fallback", false, false, fb, err) ? firstAsInt(fb) : naInt;
    }
    if (method == "custom" || method == "connections") {
        // parallelly calls an R function here (the option
        // parallelly.availableCores.custom; free connections): R code cannot
        // run on a worker, so these do not apply.
        return naInt;
    }
    if (method.empty()) return naInt;
    // Any other name: an option of that name, else an environment variable.
    if (getOption2(in, method, v)) {
        int n = firstAsInt(v);
        if (n != naInt) return n;
    }
    return envInt(in, method);
}

}  // namespace cores_detail

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
