// Calling R's API where it may jump out (an R error, the user's interrupt)
// without the jump unwinding C++ frames: what a client's own code needs of
// the R host (onMainThread(), a service without the runtime).
#pragma once

#include "../abi.h"

#include <atomic>
#include <exception>
#include <string>

#include "r_api.h"
#include <Rversion.h>


namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

namespace detail {
inline void callCheckInterrupt(void*) { R_CheckUserInterrupt(); }
}  // namespace detail

//! Asks R whether the user interrupted. R_CheckUserInterrupt() jumps out on an
//! interrupt; inside R_ToplevelExec that jump ends there, returning FALSE,
//! instead of unwinding through C++ frames.
inline bool pollInterrupt() { return R_ToplevelExec(detail::callCheckInterrupt, nullptr) == FALSE; }

//! The R unwind token that `e` carries, if it is the exception by which
//! Rcpp or cpp11 turn a jump out of R code (an R error, an interrupt) into a
//! C++ exception, to be resumed (R_ContinueUnwind()) where that jump was
//! going; else null. Known only where Rcpp or cpp11 was included first, as
//! the headers ask; static, since its definition depends on that.
static inline SEXP unwindToken(const std::exception_ptr& e)
{
    if (!e) return nullptr;
    try {
        std::rethrow_exception(e);
    }
#if defined(RcppCommon_h)
    catch (const Rcpp::LongjumpException& x) {
        return x.token;
    }
#endif
#if defined(CPP11_ERROR_BUFSIZE) && defined(HAS_UNWIND_PROTECT)
    catch (const cpp11::unwind_exception& x) {
        return x.token;
    }
#endif
    catch (...) {
    }
    return nullptr;
}

//! Resumes an unwind that Rcpp or cpp11 caught, if `e` carries one: jumps
//! (never returns) to where R was going, inside the caller's guard.
static inline void resumeUnwind(const std::exception_ptr& e)
{
#if defined(R_VERSION) && R_VERSION >= R_Version(3, 5, 0)
    if (SEXP token = unwindToken(e)) R_ContinueUnwind(token);
#else
    (void)e;
#endif
}

//! How a guarded call on R's main thread ended (see callGuarded()).
enum class GuardedEnd { returned, rError, interrupted };

namespace detail {
struct Guarded {
    void (*body)(void*);
    void* data;
    std::string* message;
};
inline SEXP guardedBody(void* g)
{
    auto* x = static_cast<Guarded*>(g);
    x->body(x->data);
    return R_NilValue;
}
//! R's error condition: keeps its message (read without evaluating R code,
//! which could fail again).
inline SEXP guardedHandler(SEXP cond, void* g)
{
    auto* x = static_cast<Guarded*>(g);
    if (TYPEOF(cond) == VECSXP && Rf_xlength(cond) > 0 && TYPEOF(VECTOR_ELT(cond, 0)) == STRSXP &&
        Rf_xlength(VECTOR_ELT(cond, 0)) > 0)
        *x->message = CHAR(STRING_ELT(VECTOR_ELT(cond, 0), 0));
    else
        *x->message = "an R error";
    x->body = nullptr;  // marks the error
    return R_NilValue;
}
inline void guardedTop(void* g)
{
    R_tryCatchError(guardedBody, g, guardedHandler, g);
}
}  // namespace detail

//! Runs `body(data)` on R's main thread where R's API may jump out of it:
//! an R error is caught (its message in `message`, nothing printed) and the
//! user's interrupt stops there too (GuardedEnd::interrupted: the caller
//! raises the runtime's interrupt flag, which only it knows where to find).
//! A jump skips the destructors of C++ objects in `body`'s frames: code that
//! calls R through Rcpp (Rcpp::Function) or cpp11 gets C++ exceptions instead.
inline GuardedEnd callGuarded(void (*body)(void*), void* data, std::string& message)
{
    detail::Guarded g{body, data, &message};
    if (R_ToplevelExec(detail::guardedTop, &g) == FALSE) return GuardedEnd::interrupted;
    return g.body ? GuardedEnd::returned : GuardedEnd::rError;
}

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
