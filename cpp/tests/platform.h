// What the tests need that differs between POSIX and Windows (mingw-w64 under wine).
#pragma once

#include <cstdlib>
#include <ctime>

#if defined(_WIN32)
#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#endif

namespace test_platform {

#if defined(_WIN32)
//! Kernel plus user time, in seconds, of what GetProcessTimes() or
//! GetThreadTimes() gave (100 ns units).
inline double cpuSecondsOf(const FILETIME& kernel, const FILETIME& user)
{
    auto s = [](const FILETIME& f) { return (double(f.dwHighDateTime) * 4294967296.0 + f.dwLowDateTime) * 1e-7; };
    return s(kernel) + s(user);
}
#endif

//! CPU seconds this process has used (std::clock() is wall time on Windows).
inline double cpuSeconds()
{
#if defined(_WIN32)
    FILETIME created, exited, kernel, user;
    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
    return cpuSecondsOf(kernel, user);
#else
    return double(std::clock()) / CLOCKS_PER_SEC;
#endif
}

//! CPU seconds the calling thread has used.
inline double threadCpuSeconds()
{
#if defined(_WIN32)
    FILETIME created, exited, kernel, user;
    if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user)) return 0;
    return cpuSecondsOf(kernel, user);
#else
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
#endif
}

//! True when this Windows program runs under wine (whose clocks are slower).
inline bool underWine()
{
#if defined(_WIN32)
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll && GetProcAddress(ntdll, "wine_get_version");
#else
    return false;
#endif
}

//! Sets an environment variable. setenv() is POSIX; Windows' C runtime has
//! _putenv_s(), where an empty value removes the variable.
inline void setEnv(const char* name, const char* value)
{
#if defined(_WIN32)
    ::_putenv_s(name, value);
#else
    ::setenv(name, value, 1);
#endif
}

//! Removes an environment variable.
inline void unsetEnv(const char* name)
{
#if defined(_WIN32)
    ::_putenv_s(name, "");
#else
    ::unsetenv(name);
#endif
}

}  // namespace test_platform
