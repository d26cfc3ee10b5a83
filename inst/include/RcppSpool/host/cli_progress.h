// A progress bar of R's cli package, drawn by R's main thread (R host only).
#pragma once

#include "../abi.h"

#include <cstddef>
#include <string>

#include "../client/host_calls.h"
#include "r_api.h"
#include "main_thread.h"
#include "r_guarded.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! One cli progress bar (cli::cli_progress_bar()), made, updated and closed
//! on R's main thread only, by calling cli's R functions. Every call is
//! guarded (callGuarded()): if cli fails, the bar says so (failed()) and the
//! caller falls back to its own text. cli decides when and how it draws (its
//! options: cli.progress_show_after, cli.dynamic, cli.progress_handlers, ...).
class CliBar {
public:
    CliBar() = default;
    CliBar(const CliBar&) = delete;
    CliBar& operator=(const CliBar&) = delete;
    //! Releases the bar's id (main thread only, as every member).
    ~CliBar()
    {
        if (id_) R_ReleaseObject(id_);
    }

    //! True when the cli package can be loaded (asked once).
    RCPPSPOOL_HIDDEN static bool cliInstalled()
    {
        static const bool installed = [] {
            SEXP pkg = PROTECT(Rf_mkString("cli"));
            SEXP call = PROTECT(Rf_lang3(Rf_install("requireNamespace"), pkg, Rf_ScalarLogical(TRUE)));
            SET_TAG(CDDR(call), Rf_install("quietly"));
            SEXP value = R_NilValue;
            const bool ok = eval(call, &value) && Rf_asLogical(value) == TRUE;
            UNPROTECT(2);
            return ok;
        }();
        return installed;
    }

    //! Shows `count` of `total` (the bar is made at the first call, named
    //! `name`); `final` closes it. False if cli failed.
    bool update(std::size_t count, std::size_t total, const std::string& name, bool final)
    {
        if (failed_) return false;
        if (!id_ && !open(total, name)) return fail();
        SEXP fn = PROTECT(cliFunction("cli_progress_update"));
        SEXP set = PROTECT(Rf_ScalarReal(static_cast<double>(count)));
        SEXP call = PROTECT(Rf_lang4(fn, set, id_, R_GlobalEnv));
        SET_TAG(CDR(call), Rf_install("set"));
        SET_TAG(CDDR(call), Rf_install("id"));
        SET_TAG(CDR(CDDR(call)), Rf_install(".envir"));
        const bool ok = eval(call, nullptr);
        UNPROTECT(3);
        if (!ok) return fail();
        if (final) close();
        return true;
    }

    //! Closes the bar (cli::cli_progress_done()), if it was made.
    void close()
    {
        if (!id_ || closed_) return;
        closed_ = true;
        SEXP fn = PROTECT(cliFunction("cli_progress_done"));
        SEXP call = PROTECT(Rf_lang3(fn, id_, R_GlobalEnv));
        SET_TAG(CDR(call), Rf_install("id"));
        SET_TAG(CDDR(call), Rf_install(".envir"));
        eval(call, nullptr);
        UNPROTECT(2);
    }

    bool failed() const { return failed_; }

private:
    //! cli::<name>, as a call's function.
    static SEXP cliFunction(const char* name)
    {
        return Rf_lang3(R_DoubleColonSymbol, Rf_install("cli"), Rf_install(name));
    }

    bool open(std::size_t total, const std::string& name)
    {
        SEXP fn = PROTECT(cliFunction("cli_progress_bar"));
        SEXP nm = PROTECT(Rf_mkString(name.c_str()));
        SEXP tot = PROTECT(Rf_ScalarReal(static_cast<double>(total)));
        SEXP call = PROTECT(Rf_lang5(fn, nm, tot, Rf_ScalarLogical(FALSE), R_GlobalEnv));
        SET_TAG(CDR(call), Rf_install("name"));
        SET_TAG(CDDR(call), Rf_install("total"));
        SET_TAG(CDR(CDDR(call)), Rf_install(".auto_close"));
        SET_TAG(CDDR(CDDR(call)), Rf_install(".envir"));
        SEXP id = R_NilValue;
        const bool ok = eval(call, &id) && TYPEOF(id) == STRSXP;
        if (ok) {
            R_PreserveObject(id);
            id_ = id;
        }
        UNPROTECT(4);
        return ok;
    }

    bool fail()
    {
        close();
        failed_ = true;
        return false;
    }

    //! Evaluates `call` in the global environment, guarded: false on an R
    //! error or an interrupt (which raises the engine's flag as usual).
    static bool eval(SEXP call, SEXP* value)
    {
        struct Data {
            SEXP call;
            SEXP* value;
            static void go(void* p)
            {
                auto* d = static_cast<Data*>(p);
                SEXP v = Rf_eval(d->call, R_GlobalEnv);
                if (d->value) *d->value = v;  // protected by the caller's preserve
            }
        } data{call, value};
        std::string message;
        const GuardedEnd end = callGuarded(&Data::go, &data, message);
        if (end == GuardedEnd::interrupted) client::interruptFlag().store(true, std::memory_order_relaxed);
        return end == GuardedEnd::returned;
    }

    SEXP id_ = nullptr;  // the bar's id (a string), preserved
    bool closed_ = false;
    bool failed_ = false;
};

//! True when R's option RcppSpool.progress is "cli" (main thread only;
//! elsewhere false).
inline bool cliProgressRequested()
{
    if (!isMainThread()) return false;
    SEXP v = Rf_GetOption1(Rf_install("RcppSpool.progress"));
    return TYPEOF(v) == STRSXP && Rf_xlength(v) == 1 && std::string(CHAR(STRING_ELT(v, 0))) == "cli";
}

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
