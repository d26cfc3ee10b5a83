// EnvSnapshot: tells cheaply whether the environment variables a computation read may have changed.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cores_values.h"
#include "fork_guard.h"

#if defined(__linux__)
#include <unistd.h>  // declares environ: before ours below, or the two conflict
#elif defined(__APPLE__)
#include <crt_externs.h>
#endif

#if !defined(_WIN32) && !defined(__APPLE__)
extern char** environ;  // POSIX; declared here in case <unistd.h> did not
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

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

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
