// Override macros: std::cout, std::cerr and std::thread of user code through RcppSpool.
//
// Define one or more of these before including <RcppSpool.h>:
//
//   #define RCPPSPOOL_OVERRIDE_COUT 1    // std::cout   is RcppSpool::Rcout
//   #define RCPPSPOOL_OVERRIDE_CERR 1    // std::cerr   is RcppSpool::Rcerr
//   #define RCPPSPOOL_OVERRIDE_THREAD 1  // std::thread is RcppSpool::Thread
//
// They mean what RcppThread's RCPPTHREAD_OVERRIDE_COUT / _CERR / _THREAD mean,
// and are implemented the same way: the tokens `cout`, `cerr` and `thread`
// become macros naming RcppSpool's objects, which are made visible in
// namespace std. Existing code that prints with std::cout from worker threads,
// or starts std::threads, then prints safely (through R's main thread) and
// joins without freezing R, without being edited.
//
// RcppThread's names are accepted as synonyms: code migrated from RcppThread
// by swapping the include and the namespace keeps its
// `#define RCPPTHREAD_OVERRIDE_COUT 1` lines and behaves as before.
//
// A macro switches its override on when it is defined as nothing or as a
// nonzero number; `#define RCPPSPOOL_OVERRIDE_COUT 0` (RcppThread's default)
// leaves it off.
//
// Consequences, as with RcppThread:
// - Include <RcppSpool.h> after every other header (Rcpp.h, cpp11.hpp, ...):
//   a header read afterwards sees `cout`/`cerr`/`thread` renamed. The standard
//   headers that declare or use these names are included here, before the
//   macros, so including them again later is harmless.
// - std::cout / std::cerr then support `<<` (values and manipulators such as
//   std::endl, std::setw), not the other members of std::ostream, and cannot
//   be passed as a `std::ostream&`.
// - Rcpp::Rcout and Rcpp::Rcerr are not redirected (RcppThread does not
//   redirect them either); write RcppSpool::Rcout in threaded code.
// - Any other identifier spelled `cout`, `cerr` or `thread` in code after the
//   include is renamed too, which is harmless unless that code relies on the
//   spelling (e.g. `#x`).
#pragma once

#include "abi.h"

#include "output.h"
#include "thread.h"

// Which overrides are on. For a macro M: `(M + 0)` is M's value, and
// `(0 - M - 1) == 1` holds only when M is defined as nothing.
#if (defined(RCPPSPOOL_OVERRIDE_COUT) && \
     ((RCPPSPOOL_OVERRIDE_COUT + 0) != 0 || (0 - RCPPSPOOL_OVERRIDE_COUT - 1) == 1)) || \
    (defined(RCPPTHREAD_OVERRIDE_COUT) && \
     ((RCPPTHREAD_OVERRIDE_COUT + 0) != 0 || (0 - RCPPTHREAD_OVERRIDE_COUT - 1) == 1))
#define RCPPSPOOL_DETAIL_OVERRIDE_COUT 1
#endif
#if (defined(RCPPSPOOL_OVERRIDE_CERR) && \
     ((RCPPSPOOL_OVERRIDE_CERR + 0) != 0 || (0 - RCPPSPOOL_OVERRIDE_CERR - 1) == 1)) || \
    (defined(RCPPTHREAD_OVERRIDE_CERR) && \
     ((RCPPTHREAD_OVERRIDE_CERR + 0) != 0 || (0 - RCPPTHREAD_OVERRIDE_CERR - 1) == 1))
#define RCPPSPOOL_DETAIL_OVERRIDE_CERR 1
#endif
#if (defined(RCPPSPOOL_OVERRIDE_THREAD) && \
     ((RCPPSPOOL_OVERRIDE_THREAD + 0) != 0 || (0 - RCPPSPOOL_OVERRIDE_THREAD - 1) == 1)) || \
    (defined(RCPPTHREAD_OVERRIDE_THREAD) && \
     ((RCPPTHREAD_OVERRIDE_THREAD + 0) != 0 || (0 - RCPPTHREAD_OVERRIDE_THREAD - 1) == 1))
#define RCPPSPOOL_DETAIL_OVERRIDE_THREAD 1
#endif

// Everything in the standard library that declares or uses the names `cout`,
// `cerr` or `thread`, read now while these names still mean themselves (only
// when an override is on: the others need none of it).
#if defined(RCPPSPOOL_DETAIL_OVERRIDE_COUT) || defined(RCPPSPOOL_DETAIL_OVERRIDE_CERR) || \
    defined(RCPPSPOOL_DETAIL_OVERRIDE_THREAD)
#include <condition_variable>
#include <future>
#include <iostream>
#include <mutex>
#include <ostream>
#include <shared_mutex>
#include <thread>
#if __cplusplus > 201703L && defined(__has_include)
#if __has_include(<stop_token>)
#include <stop_token>
#endif
#if __has_include(<barrier>)
#include <barrier>
#endif
#if __has_include(<latch>)
#include <latch>
#endif
#if __has_include(<semaphore>)
#include <semaphore>
#endif
#endif
#endif

// The objects behind the macros. Each is declared once, whatever the number
// of headers or files that include this one (inline variables and aliases),
// and only when asked for. If `cout` (etc.) is already a macro, for instance
// because RcppThread.h was included with its own override, it is left alone.

#if defined(RCPPSPOOL_DETAIL_OVERRIDE_COUT) && !defined(cout)
namespace std {
//! What `std::cout` names under RCPPSPOOL_OVERRIDE_COUT: RcppSpool::Rcout.
RCPPSPOOL_HIDDEN inline ::RcppSpool::RPrinter& RcppSpoolRcout = ::RcppSpool::Rcout;
}  // namespace std
#define cout RcppSpoolRcout
#endif

#if defined(RCPPSPOOL_DETAIL_OVERRIDE_CERR) && !defined(cerr)
namespace std {
//! What `std::cerr` names under RCPPSPOOL_OVERRIDE_CERR: RcppSpool::Rcerr
//! (R's error stream, REprintf).
RCPPSPOOL_HIDDEN inline ::RcppSpool::RPrinter& RcppSpoolRcerr = ::RcppSpool::Rcerr;
}  // namespace std
#define cerr RcppSpoolRcerr
#endif

#if defined(RCPPSPOOL_DETAIL_OVERRIDE_THREAD) && !defined(thread)
namespace std {
//! What `std::thread` names under RCPPSPOOL_OVERRIDE_THREAD: RcppSpool::Thread
//! (std::thread's interface; join() keeps R responsive and rethrows the
//! thread's exception; a joinable thread is joined, not std::terminate()d,
//! when destroyed).
using RcppSpoolThread = ::RcppSpool::Thread;
}  // namespace std
#define thread RcppSpoolThread
#endif
