// R entry points of availableCores(), getThreads()/setThreads() and
// isForkedChild(). They call the same C++ as the headers (RcppSpool/cores.h),
// so that R and C++ agree by construction; errors and warnings go back to R,
// which raises them as ordinary conditions.
#pragma once

#include "r_values.h"

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace {

#if !defined(_WIN32)
// The process id when this package was loaded; another one later means we
// run in a child created by fork().
const pid_t pidAtLoad = getpid();
#endif

// availableCores(): the minimum, every rule found, an error or NULL, and the
// warnings not given before.
SEXP cpp_available_cores()
{
    return native::callFromR([] {
        RcppSpool::engine::CoresResult r = RcppSpool::detail::coresNow();
        const std::vector<std::string> warnings = RcppSpool::detail::newWarnings(r.warnings);
        return native::namedList({"min", "all", "error", "warnings"}, [&](std::size_t i) {
            switch (i) {
            case 0: return native::namedCounts({{r.rule, r.count}});
            case 1: return native::namedCounts(r.all);
            case 2: return native::stringOrNull(r.error);
            default: return native::strings(warnings);
            }
        });
    });
}

// getThreads(): the count, where it came from, an error or NULL, new warnings.
SEXP cpp_default_threads()
{
    return native::callFromR([] {
        RcppSpool::engine::ThreadsResult r = RcppSpool::detail::threadsNow();
        const std::vector<std::string> warnings = RcppSpool::detail::newWarnings(r.warnings);
        return native::namedList({"count", "source", "error", "warnings"}, [&](std::size_t i) {
            switch (i) {
            case 0: return Rf_ScalarInteger(static_cast<int>(r.count));
            case 1: return native::strings({r.source});
            case 2: return native::stringOrNull(r.error);
            default: return native::strings(warnings);
            }
        });
    });
}

// setThreads(n): n as an integer when it is allowed, else the error message.
SEXP cpp_check_threads(SEXP n)
{
    return native::callFromR([n] {
        std::size_t count = 0;
        const std::string error =
            RcppSpool::engine::checkThreadCount(RcppSpool::host::toOptionValue(n), "setThreads(n): n", count);
        return native::namedList({"value", "error"}, [&](std::size_t i) {
            return i == 0 ? Rf_ScalarInteger(static_cast<int>(count)) : native::stringOrNull(error);
        });
    });
}

// The C++ functions themselves, as another package calls them: errors are
// thrown as std::invalid_argument and become R errors.
SEXP cpp_default_threads_api()
{
    return native::callFromR([] { return Rf_ScalarInteger(static_cast<int>(RcppSpool::defaultThreads())); });
}

SEXP cpp_available_cores_api()
{
    return native::callFromR([] { return Rf_ScalarInteger(static_cast<int>(RcppSpool::availableCores())); });
}

// isForkedChild(): has this process been forked since the package loaded?
SEXP cpp_is_forked_child()
{
#if defined(_WIN32)
    return Rf_ScalarLogical(FALSE);
#else
    return Rf_ScalarLogical(getpid() != pidAtLoad);
#endif
}

}  // namespace
