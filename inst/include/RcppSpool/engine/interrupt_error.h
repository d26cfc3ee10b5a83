// The exception that reports the user's interrupt: each shared object's own.
#pragma once

#include "../abi.h"

#include <exception>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! What every exception that reports the user's interrupt says: this one
//! and the public API's UserInterruptException (both of its variants).
inline constexpr const char* kInterruptMessage = "C++ call interrupted by the user.";

//! Reports the user's interrupt where no host supplied its own exception.
class Interrupted : public std::exception {
public:
    const char* what() const noexcept override { return kInterruptMessage; }
};

//! This shared object's own maker of the interrupt's exception (its
//! UserInterruptException, installed by interrupt.h): never shared, so that
//! each package throws its own type (with Rcpp's interrupt as a base where
//! it includes Rcpp), whoever's runtime saw the interrupt.
struct LocalHooks {
    std::exception_ptr (*interruptError)() = nullptr;
};
RCPPSPOOL_HIDDEN inline LocalHooks& localHooks() noexcept
{
    static LocalHooks hooks;
    return hooks;
}

//! The exception to throw for the user's interrupt.
inline std::exception_ptr interruptError()
{
    if (auto f = localHooks().interruptError) return f();
    return std::make_exception_ptr(Interrupted());
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
