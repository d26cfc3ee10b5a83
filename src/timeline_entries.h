// The entry points behind timeline(), timeline_start(), timeline_stop() and
// write_trace() (R/timeline.R, which checks their arguments first): the
// runtime's recording (engine/trace.h) as R vectors, and back as JSON.
#pragma once

#include "r_values.h"

#include <RcppSpool/timeline.h>

#include <string>
#include <vector>

namespace {

namespace rt = RcppSpool::engine::trace;

//! Starts a recording of at most `events` spans a thread. Errors if one runs.
SEXP timelineStart(SEXP events)
{
    return native::callFromR([&] {
        RcppSpool::timelineStart(static_cast<std::size_t>(Rf_asReal(events)));
        return R_NilValue;
    });
}

//! TRUE while a recording runs.
SEXP timelineRunning() { return Rf_ScalarLogical(rt::running() ? 1 : 0); }

//! Stops the recording: list(spans = list(thread, kind, start, end, label,
//! id, pieces), threads = thread names, seconds, dropped).
SEXP timelineStop()
{
    return native::callFromR([&] {
        const RcppSpool::Timeline t = RcppSpool::timelineStop();
        const R_xlen_t n = static_cast<R_xlen_t>(t.spans.size());
        SEXP thread = PROTECT(Rf_allocVector(INTSXP, n));
        SEXP kind = PROTECT(Rf_allocVector(STRSXP, n));
        SEXP start = PROTECT(Rf_allocVector(REALSXP, n));
        SEXP end = PROTECT(Rf_allocVector(REALSXP, n));
        SEXP label = PROTECT(Rf_allocVector(STRSXP, n));
        SEXP id = PROTECT(Rf_allocVector(REALSXP, n));
        SEXP pieces = PROTECT(Rf_allocVector(INTSXP, n));
        SEXP kinds[rt::kKinds];
        for (int k = 0; k < rt::kKinds; ++k) kinds[k] = PROTECT(Rf_mkChar(rt::kindName(k)));
        for (R_xlen_t i = 0; i < n; ++i) {
            const rt::Spanned& s = t.spans[static_cast<std::size_t>(i)];
            INTEGER(thread)[i] = s.thread;
            SET_STRING_ELT(kind, i, kinds[s.kind]);
            REAL(start)[i] = s.start;
            REAL(end)[i] = s.end;
            SET_STRING_ELT(label, i, s.label.empty() ? NA_STRING : Rf_mkCharCE(s.label.c_str(), CE_UTF8));
            REAL(id)[i] = s.id ? static_cast<double>(s.id) : NA_REAL;
            INTEGER(pieces)[i] = static_cast<int>(s.count);
        }
        SEXP spans = PROTECT(native::namedList({"thread", "kind", "start", "end", "label", "id", "pieces"},
                                               [&](std::size_t i) {
                                                   SEXP cols[] = {thread, kind, start, end, label, id, pieces};
                                                   return cols[i];
                                               }));
        SEXP threads = PROTECT(native::strings(t.threadNames));
        SEXP out = native::namedList({"spans", "threads", "seconds", "dropped"}, [&](std::size_t i) {
            switch (i) {
            case 0: return spans;
            case 1: return threads;
            case 2: return Rf_ScalarReal(t.seconds);
            default: return Rf_ScalarReal(static_cast<double>(t.dropped));
            }
        });
        UNPROTECT(9 + rt::kKinds);
        return out;
    });
}

//! Writes spans (columns as timelineStop() gives them, checked by R) as
//! Chrome's trace-event JSON to `path`.
SEXP timelineWrite(SEXP spans, SEXP threads, SEXP dropped, SEXP path)
{
    return native::callFromR([&] {
        RcppSpool::Timeline t;
        SEXP thread = VECTOR_ELT(spans, 0), kind = VECTOR_ELT(spans, 1), start = VECTOR_ELT(spans, 2),
             end = VECTOR_ELT(spans, 3), label = VECTOR_ELT(spans, 4), id = VECTOR_ELT(spans, 5),
             pieces = VECTOR_ELT(spans, 6);
        const R_xlen_t n = XLENGTH(thread);
        t.spans.reserve(static_cast<std::size_t>(n));
        for (R_xlen_t i = 0; i < n; ++i) {
            int k = 0;
            while (k < rt::kKinds && std::strcmp(CHAR(STRING_ELT(kind, i)), rt::kindName(k)) != 0) ++k;
            const double idv = REAL(id)[i];
            t.spans.push_back(rt::Spanned{INTEGER(thread)[i], k, REAL(start)[i], REAL(end)[i],
                                          ISNAN(idv) ? 0 : static_cast<std::uint64_t>(idv),
                                          static_cast<std::uint32_t>(INTEGER(pieces)[i]),
                                          STRING_ELT(label, i) == NA_STRING ? std::string()
                                                                            : std::string(CHAR(STRING_ELT(label, i)))});
        }
        for (R_xlen_t i = 0; i < XLENGTH(threads); ++i) t.threadNames.emplace_back(CHAR(STRING_ELT(threads, i)));
        t.dropped = static_cast<std::uint64_t>(Rf_asReal(dropped));
        RcppSpool::writeTrace(t, CHAR(STRING_ELT(path, 0)));
        return R_NilValue;
    });
}

}  // namespace
