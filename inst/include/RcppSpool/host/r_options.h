// Reading R options and raising R warnings from the C++ headers, with R's C
// API alone (no Rcpp), so that a package with only `LinkingTo: RcppSpool`
// sees the same settings as our R functions. R may only be called from R's
// main thread: every function here checks that it runs there.
#pragma once

#include "../abi.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "r_api.h"

#include "../engine/cores.h"
#include "main_thread.h"
#include "r_runtime.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! Copies an R value into the engine's R-free OptionValue (main thread only).
inline engine::OptionValue toOptionValue(SEXP x)
{
    using engine::OptionValue;
    OptionValue v;
    const double na = std::numeric_limits<double>::quiet_NaN();
    R_xlen_t n = Rf_xlength(x);
    switch (TYPEOF(x)) {
    case NILSXP: break;
    case LGLSXP:
        v.type = OptionValue::Type::logical;
        for (R_xlen_t i = 0; i < n; ++i) v.numbers.push_back(LOGICAL(x)[i] == NA_LOGICAL ? na : LOGICAL(x)[i]);
        break;
    case INTSXP:
        v.type = OptionValue::Type::integer;
        for (R_xlen_t i = 0; i < n; ++i) v.numbers.push_back(INTEGER(x)[i] == NA_INTEGER ? na : INTEGER(x)[i]);
        break;
    case REALSXP:
        v.type = OptionValue::Type::real;
        for (R_xlen_t i = 0; i < n; ++i) v.numbers.push_back(ISNAN(REAL(x)[i]) ? na : REAL(x)[i]);
        break;
    case STRSXP:
        v.type = OptionValue::Type::string;
        for (R_xlen_t i = 0; i < n; ++i) {
            SEXP s = STRING_ELT(x, i);
            v.stringIsNA.push_back(s == NA_STRING);
            v.strings.push_back(s == NA_STRING ? std::string() : std::string(CHAR(s)));
        }
        break;
    default:
        v.type = OptionValue::Type::other;
        v.otherType = Rf_type2char(TYPEOF(x));
        break;
    }
    return v;
}

//! Reads the R option `name` (getOption(name)); false when it is unset or
//! when not called on R's main thread (where R must not be touched).
inline bool readROption(const std::string& name, engine::OptionValue& out)
{
    if (!isMainThread()) return false;
    // Rf_install() only looks the name up (symbols are never collected);
    // Rf_GetOption1() walks R's option list and allocates nothing.
    SEXP value = Rf_GetOption1(Rf_install(name.c_str()));
    if (value == R_NilValue) return false;
    out = toOptionValue(value);
    return true;
}

//! A hash of an option's value: its type, length and, for atomic vectors,
//! every element (strings by their text). Equal hashes mean equal values
//! (R may reuse an address for a new value, so addresses are not compared).
inline std::uint64_t hashOptionValue(SEXP x)
{
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    auto mix = [&h](const void* data, std::size_t n) {
        auto p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    };
    int type = TYPEOF(x);
    R_xlen_t n = type == NILSXP ? 0 : Rf_xlength(x);
    mix(&type, sizeof type);
    mix(&n, sizeof n);
    switch (type) {
    case LGLSXP: mix(LOGICAL(x), sizeof(int) * n); break;
    case INTSXP: mix(INTEGER(x), sizeof(int) * n); break;
    case REALSXP: mix(REAL(x), sizeof(double) * n); break;
    case STRSXP:
        for (R_xlen_t i = 0; i < n; ++i) {
            SEXP s = STRING_ELT(x, i);
            if (s == NA_STRING) {
                mix("\x01NA", 3);
            } else {
                const char* c = CHAR(s);
                mix(c, std::strlen(c) + 1);
            }
        }
        break;
    default: break;  // other types are never read as values: their type is all that counts
    }
    return h;
}

//! Records which R options a computation reads, and tells afterwards
//! whether any of them changed (main thread only), so that the settings need
//! not be recomputed at every loop: re-reading a dozen options costs about a
//! microsecond, recomputing everything ten times more.
class OptionSnapshot {
public:
    //! A reader for the computation: readROption(), recording each option.
    engine::OptionReader reader()
    {
        return [this](const std::string& name, engine::OptionValue& out) {
            if (!isMainThread()) return false;
            SEXP sym = Rf_install(name.c_str());
            SEXP value = Rf_GetOption1(sym);
            seen_.push_back({sym, hashOptionValue(value)});
            if (value == R_NilValue) return false;
            out = toOptionValue(value);
            return true;
        };
    }

    //! True when every option that was read still has the same value.
    bool unchanged() const
    {
        if (!isMainThread()) return false;
        for (auto& s : seen_)
            if (hashOptionValue(Rf_GetOption1(s.first)) != s.second) return false;
        return true;
    }

private:
    std::vector<std::pair<SEXP, std::uint64_t>> seen_;  // symbol (never collected), hash of the value
};

namespace detail {
inline void raiseWarning(void* message)
{
    Rf_warningcall(R_NilValue, "%s", static_cast<const char*>(message));
}
}  // namespace detail

//! Gives an R warning (main thread only; elsewhere nothing happens). It runs
//! inside R_ToplevelExec(): a warning can jump (options(warn = 2) turns it
//! into an error, a handler can exit), and a jump must not cross the C++
//! frames of whoever called us. The price: calling handlers outside (e.g.
//! tryCatch(warning = )) do not see it; R prints it as usual.
inline void rWarning(const std::string& message)
{
    if (!isMainThread()) return;
    R_ToplevelExec(detail::raiseWarning, const_cast<char*>(message.c_str()));
}

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
