// Reading the kernel's files on cgroups: mounts, the process's cgroups and their directories, cpuset lists.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "cores_values.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

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

}  // namespace cores_detail

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
