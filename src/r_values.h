// R values from C++ values, and the guard every entry point runs in. The
// package's compiled side uses R's C API directly, not Rcpp: including Rcpp
// would cost every install of RcppSpool (and of every package that depends on
// it, on CRAN's builders too) most of its compile time, for a handful of
// small functions.
#pragma once

#include <RcppSpool.h>

#include <Rinternals.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

// R's interrupt: signals R's "interrupt" condition, as if the user had
// interrupted R code (declared in R_ext/GraphicsDevice.h and Rinterface.h).
extern "C" void Rf_onintr(void);

namespace native {

//! A character vector of `strings`.
inline SEXP strings(const std::vector<std::string>& values)
{
    SEXP out = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(values.size())));
    for (std::size_t i = 0; i < values.size(); ++i)
        SET_STRING_ELT(out, static_cast<R_xlen_t>(i), Rf_mkCharCE(values[i].c_str(), CE_UTF8));
    UNPROTECT(1);
    return out;
}

//! `message` as a string, or NULL when it is empty (no error).
inline SEXP stringOrNull(const std::string& message)
{
    return message.empty() ? R_NilValue : strings({message});
}

//! A named integer vector of (name, count) pairs.
inline SEXP namedCounts(const std::vector<std::pair<std::string, int>>& counts)
{
    SEXP out = PROTECT(Rf_allocVector(INTSXP, static_cast<R_xlen_t>(counts.size())));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        INTEGER(out)[i] = counts[i].second;
        names.push_back(counts[i].first);
    }
    Rf_setAttrib(out, R_NamesSymbol, strings(names));
    UNPROTECT(1);
    return out;
}

//! A list named `names` whose elements `values` makes, one at a time, while
//! the list (which holds the elements made so far) is protected.
template <class MakeValue>
SEXP namedList(const std::vector<const char*>& names, MakeValue&& value)
{
    const R_xlen_t n = static_cast<R_xlen_t>(names.size());
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP outNames = PROTECT(Rf_allocVector(STRSXP, n));
    for (R_xlen_t i = 0; i < n; ++i) {
        SET_STRING_ELT(outNames, i, Rf_mkChar(names[static_cast<std::size_t>(i)]));
        SET_VECTOR_ELT(out, i, value(static_cast<std::size_t>(i)));
    }
    Rf_setAttrib(out, R_NamesSymbol, outNames);
    UNPROTECT(2);
    return out;
}

//! Whether `e` is the user's interrupt. It need not be this library's own
//! type: the runtime's interrupt comes from whichever package installed the
//! hook last (the variant of a package that includes Rcpp is another type).
inline bool isUserInterrupt(const std::exception& e)
{
    return dynamic_cast<const RcppSpool::UserInterruptException*>(&e) ||
           std::strcmp(e.what(), RcppSpool::UserInterruptException().what()) == 0;
}

//! Runs `body` (which returns a SEXP) for R: a C++ exception becomes an R
//! error with its message, the user's interrupt R's interrupt condition. R's
//! errors jump over C++ frames, so they are raised here, after `body` and
//! everything it made are gone.
template <class Body>
SEXP callFromR(Body&& body)
{
    char message[4096];
    enum { ok, interrupted, failed } outcome = ok;
    SEXP out = R_NilValue;
    try {
        out = body();
    } catch (const std::exception& e) {
        outcome = isUserInterrupt(e) ? interrupted : failed;
        std::snprintf(message, sizeof message, "%s", e.what());
    } catch (...) {
        outcome = failed;
        std::snprintf(message, sizeof message, "%s", "unknown C++ exception");
    }
    if (outcome == interrupted) Rf_onintr();
    if (outcome == failed) Rf_error("%s", message);
    return out;
}

}  // namespace native
