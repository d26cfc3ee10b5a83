// How many cores this process may use, and how many threads to use by default.
//
// The rules are those of parallelly::availableCores() (version 1.34), written
// anew in C++ so that a pool can size itself without calling R: the minimum
// over the limits that apply (machine, cgroups, affinity mask, mc.cores, batch
// schedulers, R CMD check, ...), named by the rule that decided it.
//
// This header knows nothing of R (the engine must build without it). What R
// would provide, the values of R options, comes through an injected
// OptionReader; environment variables through an EnvReader (getenv by
// default); the machine (/proc, /sys/fs/cgroup, the affinity mask) through
// MachineFacts, read from a root directory that tests can fake.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cstring>
#include <sys/stat.h>

#include "fork_guard.h"
#if defined(__linux__)
#include <cerrno>
#include <sched.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <crt_externs.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

#if !defined(_WIN32) && !defined(__APPLE__)
extern char** environ;  // POSIX; declared here in case <unistd.h> did not
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

// ---------------------------------------------------------------------------
// Values as R sees them
// ---------------------------------------------------------------------------

//! R's NA_integer_: "this rule does not apply / could not be read".
constexpr int naInt = std::numeric_limits<int>::min();

//! The value of an R option, copied out of R so that the engine needs no R
//! headers: NULL (unset) or an atomic vector. Numbers keep their R type
//! because the rules treat `TRUE`, `2L`, `2.5` and `"2"` differently.
struct OptionValue {
    //! The R type of the value; `other` is anything else (a function, a list...).
    enum class Type { null, logical, integer, real, string, other };

    Type type = Type::null;            //!< R type; `null` means the option is unset
    std::vector<double> numbers;       //!< elements of a logical/integer/real vector (NA: NaN)
    std::vector<std::string> strings;  //!< elements of a character vector
    std::vector<bool> stringIsNA;      //!< which elements of `strings` are NA_character_
    std::string otherType;             //!< R's name of the type when `type == other`

    //! Number of elements (0 for NULL, 1 for `other`).
    std::size_t length() const
    {
        switch (type) {
        case Type::null: return 0;
        case Type::string: return strings.size();
        case Type::other: return 1;
        default: return numbers.size();
        }
    }
    //! True when the option is unset.
    bool isNull() const { return type == Type::null; }
    //! True for integer and double vectors (R's is.numeric()).
    bool isNumeric() const { return type == Type::integer || type == Type::real; }

    //! An integer or double scalar.
    static OptionValue number(double x, bool isInteger = false)
    {
        OptionValue v;
        v.type = isInteger ? Type::integer : Type::real;
        v.numbers.push_back(x);
        return v;
    }
    //! A character vector without NAs.
    static OptionValue text(std::vector<std::string> xs)
    {
        OptionValue v;
        v.type = Type::string;
        v.stringIsNA.assign(xs.size(), false);
        v.strings = std::move(xs);
        return v;
    }
    //! A logical scalar (NaN for NA).
    static OptionValue logical(double x)
    {
        OptionValue v;
        v.type = Type::logical;
        v.numbers.push_back(x);
        return v;
    }

    //! The value written the way R would print it in a message: `2.5`, `NA`,
    //! `"a"`, `TRUE`, `c(1, 2)`, `NULL`, `<function>`.
    std::string describe() const;
};

//! Reads the R option `name` into `out`; returns false when it is unset
//! (NULL). In R this may only run on R's main thread.
using OptionReader = std::function<bool(const std::string& name, OptionValue& out)>;

//! Reads the environment variable `name` into `out`; returns false when it
//! is unset. An empty value counts as unset for every rule here.
using EnvReader = std::function<bool(const std::string& name, std::string& out)>;

//! An OptionReader for programs without R: no option is ever set.
inline bool noOptions(const std::string&, OptionValue&) { return false; }

//! The process environment, through getenv().
inline bool processEnv(const std::string& name, std::string& out)
{
    const char* v = std::getenv(name.c_str());
    if (!v) return false;
    out = v;
    return true;
}

namespace cores_detail {

//! Removes the characters R's parallelly trims ([\t\n\f\r ]) at both ends.
inline std::string trim(const std::string& s)
{
    auto isWs = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; };
    std::size_t b = 0, e = s.size();
    while (b < e && isWs(s[b])) ++b;
    while (e > b && isWs(s[e - 1])) --e;
    return s.substr(b, e - b);
}

inline std::string toLower(std::string s)
{
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

inline std::string toUpper(std::string s)
{
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

inline std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t pos = s.find(sep, start);
        out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
    }
    return out;
}

inline bool startsWith(const std::string& s, const std::string& prefix)
{
    return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

//! Formats a number as R prints it in messages (15 significant digits).
inline std::string formatNumber(double x)
{
    if (std::isnan(x)) return "NA";
    if (std::isinf(x)) return x > 0 ? "Inf" : "-Inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g", x);
    return buf;
}

//! Parses a number the way R's as.numeric() parses a string (R_strtod):
//! surrounding white space, a sign, decimal digits with an optional point and
//! exponent (an exponent without digits counts as 0, as in R), or hex digits
//! after 0x. "NA", "NaN" and "Inf" give a non-finite value. Written by hand
//! because strtod() follows the C locale's decimal mark, and R's does not.
//! Returns false when the text is not a number at all.
inline bool parseNumber(const std::string& text, double& out)
{
    std::string s = trim(text);
    std::size_t i = 0, n = s.size();
    double sign = 1;
    if (i < n && (s[i] == '+' || s[i] == '-')) sign = (s[i++] == '-') ? -1 : 1;
    std::string rest = s.substr(i);
    std::string lower = toLower(rest);
    if (rest == "NA" || lower == "nan") {
        out = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (lower == "inf" || lower == "infinity") {
        out = sign * std::numeric_limits<double>::infinity();
        return true;
    }
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        double v = 0;
        for (i += 2; i < n; ++i) {
            char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
            int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (d < 0) return false;
            v = v * 16 + d;
        }
        out = sign * v;
        return true;
    }
    double v = 0;
    int digits = 0, exp10 = 0;
    for (; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits) v = v * 10 + (s[i] - '0');
    if (i < n && s[i] == '.') {
        for (++i; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i, ++digits) {
            v = v * 10 + (s[i] - '0');
            --exp10;
        }
    }
    if (digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        int esign = 1, e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) esign = (s[i++] == '-') ? -1 : 1;
        for (; i < n && std::isdigit(static_cast<unsigned char>(s[i])); ++i) e = std::min(e * 10 + (s[i] - '0'), 100000);
        exp10 += esign * e;
    }
    if (i != n) return false;
    out = sign * v * std::pow(10.0, exp10);
    return true;
}

//! R's as.integer() of a double: NA when not finite or out of int range,
//! else truncated toward zero.
inline int doubleToInt(double x)
{
    if (!std::isfinite(x) || x >= 2147483648.0 || x <= -2147483648.0) return naInt;
    return static_cast<int>(x);
}

//! R's as.integer() of a string: "4.7" is 4, "0x10" 16, "abc" NA.
inline int stringToInt(const std::string& s)
{
    double x;
    if (!parseNumber(s, x)) return naInt;
    return doubleToInt(x);
}

//! R's as.logical() of a string: TRUE for "T", "TRUE", "true", "True";
//! FALSE for "F", "FALSE", "false", "False"; NA (returned as -1) otherwise.
inline int stringToLogical(const std::string& s)
{
    if (s == "T" || s == "TRUE" || s == "true" || s == "True") return 1;
    if (s == "F" || s == "FALSE" || s == "false" || s == "False") return 0;
    return -1;
}

//! R's as.integer() of the first element of an option value (naInt when
//! it is empty or cannot be converted).
inline int firstAsInt(const OptionValue& v)
{
    if (v.length() == 0) return naInt;
    switch (v.type) {
    case OptionValue::Type::logical:
    case OptionValue::Type::integer:
    case OptionValue::Type::real: return doubleToInt(v.numbers[0]);
    case OptionValue::Type::string: return v.stringIsNA[0] ? naInt : stringToInt(v.strings[0]);
    default: return naInt;
    }
}

}  // namespace cores_detail

inline std::string OptionValue::describe() const
{
    using cores_detail::formatNumber;
    if (type == Type::null) return "NULL";
    if (type == Type::other) return "<" + otherType + ">";
    std::size_t n = length();
    if (n == 0) {
        switch (type) {
        case Type::logical: return "logical(0)";
        case Type::integer: return "integer(0)";
        case Type::real: return "numeric(0)";
        default: return "character(0)";
        }
    }
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < n && i < 5; ++i) {
        if (type == Type::string)
            parts.push_back(stringIsNA[i] ? "NA" : "\"" + strings[i] + "\"");
        else if (type == Type::logical)
            parts.push_back(std::isnan(numbers[i]) ? "NA" : numbers[i] != 0 ? "TRUE" : "FALSE");
        else
            parts.push_back(formatNumber(numbers[i]));
    }
    if (n > 5) parts.push_back("...");
    if (n == 1) return parts[0];
    std::string out = "c(";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + ")";
}

//! The process's array of environment variables ("NAME=value"), or null
//! where it cannot be read directly.
inline char** environmentArray()
{
#if defined(_WIN32)
    return nullptr;
#elif defined(__APPLE__)
    return *_NSGetEnviron();
#else
    return environ;
#endif
}

//! Records which environment variables a computation reads, and tells
//! cheaply afterwards whether any of them may have changed. The settings are
//! read at every call of defaultThreads() (a parallel loop's default
//! argument), and some forty getenv() calls cost microseconds; comparing the
//! environment's layout costs tens of nanoseconds.
//!
//! unchanged() is true only when the environment array, every entry pointer
//! in it, and the full text of each entry that was read are as they were:
//! setenv()/putenv()/unsetenv() replace, add or remove entry pointers, and a
//! C library that overwrites a value in place changes the text of an entry
//! we compare. A variable that was read and unset cannot appear without a
//! new entry.
class EnvSnapshot {
public:
    //! A reader for the computation: getenv(), recording each name.
    EnvReader reader()
    {
        return [this](const std::string& name, std::string& out) {
            names_.push_back(name);
            return processEnv(name, out);
        };
    }

    //! Call after the computation: remembers the layout and the entries read.
    void seal()
    {
        generation_ = forkGeneration();
        array_ = environmentArray();
        entries_.clear();
        watched_.clear();
        supported_ = array_ != nullptr;
        if (!supported_) return;
        for (std::size_t i = 0; array_[i]; ++i) {
            const char* e = array_[i];
            entries_.push_back(e);
            const char* eq = std::strchr(e, '=');
            std::size_t len = eq ? static_cast<std::size_t>(eq - e) : std::strlen(e);
            for (auto& n : names_)
                if (n.size() == len && std::memcmp(n.data(), e, len) == 0) {
                    watched_.push_back({i, std::string(e)});
                    break;
                }
        }
    }

    //! True when no variable that was read can have changed since seal(),
    //! and the process has not forked since (a forked child inherits the
    //! snapshot, but its default thread count differs: computeDefaultThreads()).
    bool unchanged() const
    {
        if (forkGeneration() != generation_) return false;
        char** now = environmentArray();
        if (!supported_ || now != array_) return false;
        std::size_t i = 0;
        for (; i < entries_.size(); ++i)
            if (now[i] != entries_[i]) return false;
        if (now[i] != nullptr) return false;
        for (auto& w : watched_)
            if (std::strcmp(now[w.first], w.second.c_str()) != 0) return false;
        return true;
    }

private:
    std::vector<std::string> names_;
    char** array_ = nullptr;
    std::vector<const char*> entries_;
    std::vector<std::pair<std::size_t, std::string>> watched_;
    bool supported_ = false;
    unsigned generation_ = 0;
};

// ---------------------------------------------------------------------------
// The machine: processors, cgroups, affinity
// ---------------------------------------------------------------------------

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

inline bool isDirectory(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

inline bool isFile(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

//! The lines of a text file; false when it cannot be opened.
inline bool readLines(const std::string& path, std::vector<std::string>& lines)
{
    std::ifstream in(path);
    if (!in) return false;
    lines.clear();
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return true;
}

//! The first line of a file, if there is one.
inline bool readFirstLine(const std::string& path, std::string& line)
{
    std::vector<std::string> lines;
    if (!readLines(path, lines) || lines.empty()) return false;
    line = lines[0];
    return true;
}

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

//! One line of /proc/self/mountinfo: where a file system is mounted.
struct Mount {
    std::string root;        //!< the directory of the file system that is mounted
    std::string mountPoint;  //!< where it is mounted
    std::string fsType;      //!< e.g. "cgroup", "cgroup2"
    std::vector<std::string> superOptions;  //!< for cgroup v1: the controllers
};

//! Undoes mountinfo's octal escapes (a space is written \040).
inline std::string unescapeMountField(const std::string& s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])) && std::isdigit(static_cast<unsigned char>(s[i + 2])) &&
            std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
            out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

//! The cgroup file systems mounted, from /proc/self/mountinfo. A line reads
//! "id parent major:minor root mountpoint options [optional...] - type source superoptions".
inline std::vector<Mount> readCgroupMounts(const std::string& root)
{
    std::vector<Mount> mounts;
    std::vector<std::string> lines;
    if (!readLines(root + "/proc/self/mountinfo", lines)) return mounts;
    for (auto& line : lines) {
        std::vector<std::string> f;
        for (auto& w : split(line, ' '))
            if (!w.empty()) f.push_back(w);
        auto dash = std::find(f.begin(), f.end(), "-");
        if (f.size() < 6 || dash == f.end() || dash + 3 > f.end()) continue;
        Mount m;
        m.root = unescapeMountField(f[3]);
        m.mountPoint = unescapeMountField(f[4]);
        m.fsType = *(dash + 1);
        if (m.fsType != "cgroup" && m.fsType != "cgroup2") continue;
        m.superOptions = split(*(dash + 3), ',');
        mounts.push_back(std::move(m));
    }
    return mounts;
}

//! The cgroup paths of this process, from /proc/self/cgroup: pairs of
//! (controller, path). A v1 line "4:cpu,cpuacct:/a" gives ("cpu", "/a") and
//! ("cpuacct", "/a"); the v2 line "0::/b" gives ("", "/b"). Sorted by
//! hierarchy id, so a controller listed twice resolves to the first.
inline std::vector<std::pair<std::string, std::string>> readProcessCgroups(const std::string& root)
{
    std::vector<std::pair<long, std::pair<std::string, std::string>>> entries;
    std::vector<std::string> lines;
    if (!readLines(root + "/proc/self/cgroup", lines)) return {};
    for (auto& line : lines) {
        std::size_t c1 = line.find(':');
        if (c1 == std::string::npos) continue;
        std::size_t c2 = line.find(':', c1 + 1);
        if (c2 == std::string::npos) continue;
        std::string id = line.substr(0, c1);
        if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string names = line.substr(c1 + 1, c2 - c1 - 1);
        std::string path = line.substr(c2 + 1);
        for (auto& name : split(names, ','))
            entries.push_back({std::strtol(id.c_str(), nullptr, 10), {name, path}});
    }
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& e : entries) out.push_back(e.second);
    return out;
}

//! The parent of a cgroup path ("/a/b" -> "/a", "/a" -> "/").
inline std::string parentPath(const std::string& p)
{
    std::size_t pos = p.find_last_of('/');
    if (pos == std::string::npos || pos == 0) return "/";
    return p.substr(0, pos);
}

//! The directories of a process's cgroup, deepest first, up to and
//! including the mount point. `path` is the process's cgroup as
//! /proc/self/cgroup shows it; the part of it that is the mount's own root is
//! dropped (in a container the mount's root is the container's cgroup).
//! Missing directories at the deep end are skipped, as parallelly does when it
//! walks up from a cgroup that is not visible (e.g. from inside a container).
inline std::vector<std::string> cgroupDirectories(const std::string& root, const Mount& m, std::string path)
{
    std::string mroot = m.root == "/" ? "" : m.root;
    if (!mroot.empty() && startsWith(path, mroot) &&
        (path.size() == mroot.size() || path[mroot.size()] == '/'))
        path = path.substr(mroot.size());
    if (path.empty() || path[0] != '/') path = "/" + path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    std::string base = root + m.mountPoint;
    std::vector<std::string> dirs;
    for (;;) {
        std::string dir = path == "/" ? base : base + path;
        if (!dirs.empty() || isDirectory(dir)) dirs.push_back(dir);
        if (path == "/") break;
        path = parentPath(path);
    }
    return dirs;
}

//! Parses a cpuset list ("0-3,8,10-11") into CPU indices, as R evaluates
//! parallelly's c(0:3,8,10:11): "a-b" is every index from a to b, either way
//! round; duplicates are dropped. False when the text is not such a list.
inline bool parseCpuList(const std::string& text, std::vector<int>& cpus)
{
    cpus.clear();
    std::string s = trim(text);
    if (s.empty()) return true;
    for (auto& item0 : split(s, ',')) {
        std::string item = trim(item0);
        std::size_t dash = item.find('-', 1);
        std::string a = item.substr(0, dash), b = dash == std::string::npos ? a : item.substr(dash + 1);
        auto isIndex = [](const std::string& x) {
            return !x.empty() && x.size() < 9 && x.find_first_not_of("0123456789") == std::string::npos;
        };
        if (!isIndex(a) || !isIndex(b)) return false;
        int from = std::atoi(a.c_str()), to = std::atoi(b.c_str());
        int step = from <= to ? 1 : -1;
        for (int c = from;; c += step) {
            if (std::find(cpus.begin(), cpus.end(), c) == cpus.end()) cpus.push_back(c);
            if (c == to) break;
        }
    }
    return true;
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

// ---------------------------------------------------------------------------
// availableCores
// ---------------------------------------------------------------------------

//! Everything the rules read.
struct CoresInputs {
    OptionReader option = noOptions;  //!< R options (or none)
    EnvReader env = processEnv;       //!< environment variables
    MachineFacts machine;             //!< processors and cgroups
    int affinity = naInt;             //!< CPUs in the affinity mask (the "nproc" rule)
};

//! The answer of availableCores().
struct CoresResult {
    int count = 1;                 //!< cores this process may use (at least 1)
    std::string rule = "current";  //!< the rule that decided, as parallelly names it; a
                                   //!< trailing "*" means it was raised to the minimum option
    //! Every rule that applied, in the order of the methods, after the
    //! minimum and omit options (parallelly's `which = "all"`).
    std::vector<std::pair<std::string, int>> all;
    //! Non-empty when the settings are invalid (a core count of zero or
    //! less, a bad minimum or omit option...): parallelly stops with an
    //! error there, and so does our R function; `count` is then meaningless.
    std::string error;
    std::vector<std::string> warnings;  //!< things ignored (cgroup values, Slurm counts)
};

//! The methods parallelly uses when its option does not say otherwise, in
//! its order: where several give the same minimum, the first names the result.
RCPPSPOOL_HIDDEN inline const std::vector<std::string>& defaultCoresMethods()
{
    static const std::vector<std::string> m = {"system", "cgroups.cpuset", "cgroups.cpuquota", "cgroups2.cpu.max",
                                               "nproc", "mc.cores", "BiocParallel", "_R_CHECK_LIMIT_CORES_",
                                               "Bioconductor", "LSF", "PJM", "PBS", "SGE", "Slurm",
                                               "fallback", "custom"};
    return m;
}

namespace cores_detail {

//! parallelly's getOption2(): the option `name`, else the same name with the
//! prefix "parallelly." or "future." (either prefix is first removed).
inline bool getOption2(const CoresInputs& in, const std::string& name, OptionValue& out)
{
    if (in.option(name, out) && !out.isNull()) return true;
    std::string base = name;
    for (const char* p : {"parallelly.", "future."})
        if (startsWith(name, p)) base = name.substr(std::string(p).size());
    for (const std::string& n : {"parallelly." + base, "future." + base})
        if (n != name && in.option(n, out) && !out.isNull()) return true;
    return false;
}

//! parallelly's getEnvVar2(): the first non-empty of the variable `name` and
//! the same with the prefix R_PARALLELLY_ or R_FUTURE_.
inline bool getEnvVar2(const CoresInputs& in, const std::string& name, std::string& out)
{
    if (in.env(name, out) && !out.empty()) return true;
    std::string base = name;
    for (const char* p : {"R_PARALLELLY_", "R_FUTURE_"})
        if (startsWith(name, p)) base = name.substr(std::string(p).size());
    for (const std::string& n : {"R_PARALLELLY_" + base, "R_FUTURE_" + base})
        if (n != name && in.env(n, out) && !out.empty()) return true;
    return false;
}

//! A core count from an environment variable (through getEnvVar2, trimmed,
//! as.integer: "4.7" is 4, "abc" NA).
inline int envInt(const CoresInputs& in, const std::string& name)
{
    std::string v;
    if (!getEnvVar2(in, name, v)) return naInt;
    return stringToInt(trim(v));
}

//! A variable read with plain Sys.getenv() (no prefixes, untrimmed).
inline std::string envPlain(const CoresInputs& in, const std::string& name)
{
    std::string v;
    return in.env(name, v) ? v : std::string();
}

//! One of parallelly's own options, "parallelly.<base>": the option (or its
//! "future." twin), else the environment variable R_PARALLELLY_<BASE> (or
//! R_FUTURE_<BASE>), which parallelly turns into the option when it loads:
//! trimmed, split at commas for the methods, converted to an integer for the
//! others (NA when it is not a number; `naIsError` for the options whose
//! variable parallelly then refuses to load with).
inline bool parallellyOption(const CoresInputs& in, const std::string& base, bool isList, bool naIsError,
                             OptionValue& out, std::string& error)
{
    if (getOption2(in, "parallelly." + base, out)) return true;
    std::string env = "R_PARALLELLY_" + toUpper(base);
    std::replace(env.begin(), env.end(), '.', '_');
    std::string raw;
    if (!getEnvVar2(in, env, raw)) return false;
    std::string v = trim(raw);
    if (v.empty()) return false;
    if (isList) {
        std::vector<std::string> parts;
        for (auto& p : split(v, ',')) parts.push_back(trim(p));
        out = OptionValue::text(parts);
        return true;
    }
    int n = stringToInt(v);
    if (n == naInt && naIsError) {
        error = "the environment variable " + env + "='" + raw +
                "' is not a whole number, as option 'parallelly." + base + "' must be";
        return false;
    }
    out = OptionValue::number(n == naInt ? std::numeric_limits<double>::quiet_NaN() : n, true);
    return true;
}

//! The option mc.cores as parallelly sees it: set by the user, else taken
//! from the environment variable MC_CORES (package parallel does that when it
//! loads, if the option is unset and the variable is a number), else
//! parallelly's prefixed twins "parallelly.mc.cores" and "future.mc.cores".
inline bool mcCoresOption(const CoresInputs& in, OptionValue& out)
{
    if (in.option("mc.cores", out) && !out.isNull()) return true;
    std::string v;
    if (in.env("MC_CORES", v)) {
        int n = stringToInt(v);
        if (n != naInt) {
            out = OptionValue::number(n, true);
            return true;
        }
    }
    return getOption2(in, "mc.cores", out);
}

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

//! The cores this process may use, by parallelly::availableCores()'s rules
//! (with its default arguments): each method in the option
//! `parallelly.availableCores.methods` (default: defaultCoresMethods()) gives
//! a count or does not apply; a count of zero or less is an error; the
//! fallback (option `parallelly.availableCores.fallback`, variable
//! R_PARALLELLY_AVAILABLECORES_FALLBACK) replaces the machine's own counts
//! when nothing else applies and they do not limit the process; the smallest
//! count wins, named by its method (the first one, on a tie); it is raised to
//! the option `parallelly.availableCores.min` (marking the name with "*") and
//! lowered by `parallelly.availableCores.omit` (not below 1). Each of those
//! options may also be given as an R_PARALLELLY_AVAILABLECORES_* variable.
inline CoresResult computeAvailableCores(const CoresInputs& in)
{
    using namespace cores_detail;
    CoresResult res;
    res.warnings = in.machine.warnings;

    // Which methods.
    std::vector<std::string> methods = defaultCoresMethods();
    OptionValue v;
    std::string err;
    if (parallellyOption(in, "availableCores.methods", true, false, v, err)) {
        if (v.type != OptionValue::Type::string) {
            res.error = "option 'parallelly.availableCores.methods' must be a character vector of method names, not " +
                        v.describe();
            return res;
        }
        methods.clear();
        for (std::size_t i = 0; i < v.strings.size(); ++i)
            if (!v.stringIsNA[i]) methods.push_back(v.strings[i]);
    }

    // The machine's size, as parallelly's detectCores() sees it (an option can override it).
    OptionValue systemOpt;
    bool hasSystemOpt = parallellyOption(in, "availableCores.system", false, false, systemOpt, err);
    int systemCount = hasSystemOpt ? firstAsInt(systemOpt) : (in.machine.processors == naInt ? 1 : in.machine.processors);

    // What each method says.
    std::vector<std::pair<std::string, int>> found;
    for (auto& m : methods) {
        found.push_back({m, coresByMethod(in, m, hasSystemOpt ? &systemOpt : nullptr, res)});
    }

    std::string invalid;
    for (auto& f : found)
        if (f.second != naInt && f.second <= 0)
            invalid += (invalid.empty() ? "" : ", ") + ("'" + f.first + "' = " + std::to_string(f.second));
    if (!invalid.empty()) {
        res.error = "invalid (zero or less) core settings: " + invalid;
        return res;
    }

    std::vector<std::pair<std::string, int>> ncores;
    for (auto& f : found)
        if (f.second != naInt) ncores.push_back(f);
    if (ncores.empty()) ncores.push_back({"current", 1});

    // The fallback counts only when nothing but the machine's own counts
    // applies, and those do not limit the process below the machine's size
    // (parallelly's list of those counts misspells "cgroups.cpuquota", so a
    // CPU quota, like every other rule, keeps the fallback out).
    std::vector<std::pair<std::string, int>> chosen = ncores;
    if (ncores.size() >= 2) {
        auto fb = std::find_if(ncores.begin(), ncores.end(), [](const auto& f) { return f.first == "fallback"; });
        if (fb != ncores.end()) {
            auto isSpecial = [](const std::string& n) {
                return n == "system" || n == "cgroups.cpuset" || n == "nproc";
            };
            bool useFallback = true;
            int sys = naInt;
            for (auto& f : ncores) {
                if (f.first != "fallback" && !isSpecial(f.first)) useFallback = false;
                if (f.first == "system") sys = f.second;
            }
            if (useFallback && sys != naInt)
                for (auto& f : ncores)
                    if (isSpecial(f.first) && f.second < sys) useFallback = false;
            if (useFallback) {
                chosen = {*fb};
            } else {
                chosen.clear();
                for (auto& f : ncores)
                    if (f.first != "fallback") chosen.push_back(f);
            }
        }
    }
    auto best = std::min_element(chosen.begin(), chosen.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    res.count = best->second;
    res.rule = best->first;
    res.all = ncores;

    // The minimum: a single whole-ish number from 1 to the machine's size.
    OptionValue minOpt;
    if (parallellyOption(in, "availableCores.min", false, true, minOpt, err)) {
        if (minOpt.length() != 1 || !minOpt.isNumeric()) {
            res.error = "option 'parallelly.availableCores.min' must be a single number, not " + minOpt.describe();
            return res;
        }
        double mn = minOpt.numbers[0];
        if (!std::isfinite(mn) || mn < 1) {
            res.error = "option 'parallelly.availableCores.min' must be a number of at least 1, not " +
                        minOpt.describe();
            return res;
        }
        if (systemCount == naInt) {
            res.error = "option 'parallelly.availableCores.system' is not a number: " + systemOpt.describe();
            return res;
        }
        if (mn > systemCount) {
            res.error = "option 'parallelly.availableCores.min' must not be greater than the number of cores on "
                        "the system: " + minOpt.describe() + " > " + std::to_string(systemCount);
            return res;
        }
        int floorMin = static_cast<int>(std::floor(mn));
        if (res.count < mn) {
            res.count = floorMin;
            res.rule += "*";
        }
        for (auto& f : res.all)
            if (f.second < mn) {
                f.second = floorMin;
                f.first += "*";
            }
    } else if (!err.empty()) {
        res.error = err;
        return res;
    } else if (hasSystemOpt && systemCount == naInt) {
        res.error = "option 'parallelly.availableCores.system' is not a number: " + systemOpt.describe();
        return res;
    }

    // Cores to leave free.
    OptionValue omitOpt;
    if (parallellyOption(in, "availableCores.omit", false, true, omitOpt, err)) {
        if (omitOpt.length() != 1 || !omitOpt.isNumeric() || !std::isfinite(omitOpt.numbers[0]) ||
            omitOpt.numbers[0] < 0) {
            res.error = "option 'parallelly.availableCores.omit' must be a single number of at least 0, not " +
                        omitOpt.describe();
            return res;
        }
        int omit = doubleToInt(omitOpt.numbers[0]);
        auto lower = [omit](int n) { return std::max(1, n - omit); };
        res.count = lower(res.count);
        for (auto& f : res.all) f.second = lower(f.second);
    } else if (!err.empty()) {
        res.error = err;
        return res;
    }
    return res;
}

// ---------------------------------------------------------------------------
// Thread settings
// ---------------------------------------------------------------------------

//! The largest thread count that can be set.
constexpr std::size_t maxThreads = 1024;

//! The option in which setThreads() keeps its value. An R option, not a C++
//! global, because every package that compiles these headers has its own
//! copy of the globals but all of them can read R's options.
constexpr const char* setThreadsOption = "RcppSpool.setThreads";
//! The option users set for the default thread count.
constexpr const char* threadsOption = "RcppSpool.threads";
//! The environment variable for the default thread count.
constexpr const char* threadsEnvVar = "RCPPSPOOL_NUM_THREADS";

//! What is allowed, for messages.
inline const char* allowedThreadsText()
{
    return "a whole number from 0 (no worker threads: everything runs on the calling thread) to 1024, "
           "or NULL for automatic";
}

//! Checks a thread count given as an R value (an argument of setThreads() or
//! an option): a single, non-missing whole number from 0 to maxThreads, of R
//! type integer or double. Returns an empty string and sets `n` when it is
//! valid, else a message that names `what`, the value and what is allowed.
inline std::string checkThreadCount(const OptionValue& v, const std::string& what, std::size_t& n)
{
    bool ok = v.isNumeric() && v.length() == 1 && std::isfinite(v.numbers[0]) && v.numbers[0] >= 0 &&
              v.numbers[0] <= static_cast<double>(maxThreads) && std::floor(v.numbers[0]) == v.numbers[0];
    if (!ok) return what + " is " + v.describe() + "; it must be " + allowedThreadsText();
    n = static_cast<std::size_t>(v.numbers[0]);
    return "";
}

//! Checks a thread count given as text (the environment variable): a whole
//! number from 0 to maxThreads, surrounding blanks allowed. Returns false
//! when it is not one.
inline bool parseThreadCount(const std::string& text, std::size_t& n)
{
    double x;
    if (!cores_detail::parseNumber(text, x) || !std::isfinite(x) || x < 0 ||
        x > static_cast<double>(maxThreads) || std::floor(x) != x)
        return false;
    n = static_cast<std::size_t>(x);
    return true;
}

//! Registers the fork handler of fork_guard.h when the shared object (or
//! program) that compiled these headers is loaded, rather than at the first
//! pool: forkGeneration() then counts every fork since the load, even in a
//! package that had not run parallel code before its process forked.
RCPPSPOOL_HIDDEN inline const unsigned forkGenerationAtLoad = forkGeneration();

//! True in a child created by fork() (parallel::mclapply(), future's
//! multicore, makeForkCluster()) since these headers were loaded.
inline bool forkedSinceLoad() noexcept { return forkGeneration() != forkGenerationAtLoad; }

//! The answer of defaultThreads().
struct ThreadsResult {
    std::size_t count = 1;  //!< threads to use when no count is given
    //! Where it came from: "setThreads", "RcppSpool.threads",
    //! "RCPPSPOOL_NUM_THREADS", "fork", or the availableCores() rule.
    std::string source;
    std::string error;  //!< non-empty: a bad setting (an R error in R)
    std::vector<std::string> warnings;  //!< a bad environment variable, ignored
};

//! The default thread count: the value given to setThreads() (kept in the
//! option setThreadsOption), else the option `RcppSpool.threads`, else the
//! environment variable RCPPSPOOL_NUM_THREADS, else 1 in a forked child
//! (`forkedChild`), else `cores()` (which should compute availableCores()).
//! A bad option is an error (the user asked for something impossible, and
//! should hear it); a bad variable gives a warning and is ignored
//! (environments are inherited, often from far away).
//!
//! Why 1 in a forked child: fork() copies only the calling thread, so a pool
//! that existed before the fork runs everything on the caller in the child
//! anyway (scheduler.h); a pool created in the child would start fresh
//! threads, and with availableCores() of them in each of mclapply()'s
//! children the machine would be oversubscribed (children x cores threads).
//! The children are the parallelism; an explicit setting still wins.
inline ThreadsResult computeDefaultThreads(const OptionReader& option, const EnvReader& env,
                                           const std::function<CoresResult()>& cores,
                                           bool forkedChild = forkedSinceLoad())
{
    ThreadsResult res;
    OptionValue v;
    if (option(setThreadsOption, v) && !v.isNull()) {
        res.error = checkThreadCount(v, std::string("option '") + setThreadsOption + "' (set by setThreads())", res.count);
        res.source = "setThreads";
        return res;
    }
    if (option(threadsOption, v) && !v.isNull()) {
        res.error = checkThreadCount(v, std::string("option '") + threadsOption + "'", res.count);
        res.source = threadsOption;
        return res;
    }
    std::string text;
    if (env(threadsEnvVar, text) && !cores_detail::trim(text).empty()) {
        if (parseThreadCount(text, res.count)) {
            res.source = threadsEnvVar;
            return res;
        }
        res.warnings.push_back(std::string("ignoring the environment variable ") + threadsEnvVar + "='" + text +
                               "': it must be a whole number from 0 to 1024, or empty for automatic");
    }
    if (forkedChild) {
        res.count = 1;
        res.source = "fork";
        return res;
    }
    CoresResult c = cores();
    res.warnings.insert(res.warnings.end(), c.warnings.begin(), c.warnings.end());
    res.error = c.error;
    res.count = static_cast<std::size_t>(c.count);
    res.source = c.rule;
    return res;
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
