// Checking for the user's interrupt, from any thread.
#pragma once

#include "abi.h"

#include <exception>

#include "client/host_calls.h"
#include "engine/interrupt_error.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

// With Rcpp (Rcpp.h included before this header, as usual), the exception is
// also Rcpp's own interrupt, so that an Rcpp function that lets it escape ends
// with R's interrupt condition, as if the user had interrupted R code. The two
// variants live in different inline namespaces: distinct types, no ODR clash
// between files that include Rcpp and files that do not.
#if !defined(RCPPSPOOL_STANDALONE) && defined(Rcpp_hpp)
inline namespace with_rcpp {
//! Thrown by checkUserInterrupt() and by blocking calls once the user
//! interrupted; what() is "C++ call interrupted by the user.".
class UserInterruptException : public std::exception, public Rcpp::internal::InterruptedException {
public:
    //! "C++ call interrupted by the user."
    const char* what() const noexcept override { return engine::kInterruptMessage; }
};
namespace interrupt_detail {
inline std::exception_ptr makeUserInterrupt() { return std::make_exception_ptr(UserInterruptException()); }
// Wins over the plain variant, whichever file of the shared object runs
// first. This shared object's own (engine::localHooks()), never shared.
RCPPSPOOL_HIDDEN inline const bool interruptErrorInstalled = [] {
    engine::localHooks().interruptError = &makeUserInterrupt;
    return true;
}();
}  // namespace interrupt_detail
}  // namespace with_rcpp
#else
inline namespace plain {
//! Thrown by checkUserInterrupt() and by blocking calls once the user
//! interrupted; what() is "C++ call interrupted by the user.".
class UserInterruptException : public std::exception {
public:
    //! "C++ call interrupted by the user."
    const char* what() const noexcept override { return engine::kInterruptMessage; }
};
namespace interrupt_detail {
inline std::exception_ptr makeUserInterrupt() { return std::make_exception_ptr(UserInterruptException()); }
RCPPSPOOL_HIDDEN inline const bool interruptErrorInstalled = [] {
    if (!engine::localHooks().interruptError) engine::localHooks().interruptError = &makeUserInterrupt;
    return true;
}();
}  // namespace interrupt_detail
}  // namespace plain
#endif

//! True once the user interrupted (Ctrl-C in R) during the current call. On
//! R's main thread it asks R (safely); elsewhere it reads a flag (a few ns).
//! `condition` lets callers check only every so often: false returns false.
inline bool isInterrupted(bool condition = true)
{
    if (!condition) return false;
    // Off the main thread a flag (a few ns); on it, the runtime's service.
    if (client::interruptRequested()) return true;
    if (!client::onServiceThread()) return false;
    return client::interrupted(false);
}

//! Throws UserInterruptException once the user interrupted (see isInterrupted()).
inline void checkUserInterrupt(bool condition = true)
{
    if (isInterrupted(condition)) {
        // Delivered on the main thread: the next call starts afresh.
        if (client::onServiceThread()) client::interrupted(true);
        throw UserInterruptException();
    }
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
