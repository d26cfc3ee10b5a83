// The versioned C table through which a client reaches the runtime.
//
// A client (a package built against these headers) packages what must be a
// template, the user's loop body, as an opaque unit: a function pointer and
// the address of its storage. Everything else (scheduler, workers, splitting
// and waiting, thread counts) is the runtime's code, compiled once, reached
// through this table: in R, RcppSpool's shared library serves it as the
// C-callable "RcppSpool_api"; in plain C++ it is compiled into the program
// (see client/api.h). Nothing that crosses it depends on a layout the
// runtime owns, and no exception crosses it: the runtime reports a status and
// a message, the client keeps its own exceptions and rethrows them itself,
// so a client and a runtime need not even share a C++ standard library.
//
// The table only grows: a new entry goes at the end with a new kApiVersion;
// no entry's signature or meaning ever changes. A client asks for the
// version it was built with and gets the table only from a runtime of that
// version or later, which has every entry it knows.
#pragma once

#include "../abi.h"

#include <cstddef>
#include <cstdint>

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace client {

//! What a call through the table reports.
enum ApiStatus : int {
    kOk = 0,
    kCallbackFailed = 1,   //!< the client's callback failed; the client kept its exception
    kInterrupted = 2,      //!< the user interrupted (Ctrl-C in R)
    kInvalidArgument = 3,  //!< a bad setting or argument; the message says which
    kFailed = 4,           //!< any other error of the runtime; the message says what
};

//! nThreads for "what defaultThreads() says", decided by the runtime.
constexpr std::size_t kAutoThreads = static_cast<std::size_t>(-1);

//! A loop body as the runtime sees it: runs the indices [begin, end) of
//! `self`'s loop and returns 0, or nonzero when the body threw (the client
//! keeps the exception). Called concurrently from several threads.
using RangeFn = int (*)(void* self, std::ptrdiff_t begin, std::ptrdiff_t end);

//! The runtime's entry points. C layout: it crosses shared objects.
struct ApiTable {
    std::uint32_t version;  //!< kApiVersion of the runtime
    std::uint32_t size;     //!< sizeof(ApiTable) of the runtime: entries past it are absent

    // -- version 1 --
    //! Runs body(self, b, e) over chunks [b, e) covering [begin, end) on the
    //! caller and up to nThreads - 1 workers of the global pool (kAutoThreads:
    //! defaultThreads()); nBatches as RcppSpool::parallelFor. Blocks until
    //! done. On an error, writes a message of at most messageSize bytes
    //! (ending in '\0') to `message`.
    int (*parallelFor)(std::ptrdiff_t begin, std::ptrdiff_t end, RangeFn body, void* self, std::size_t nThreads,
                       std::size_t nBatches, char* message, std::size_t messageSize);
    //! availableCores() into `*out`; kInvalidArgument for a bad setting.
    int (*availableCores)(std::size_t* out, char* message, std::size_t messageSize);
    //! defaultThreads() into `*out`; kInvalidArgument for a bad setting.
    int (*defaultThreads)(std::size_t* out, char* message, std::size_t messageSize);
};

//! The version of the table these headers know.
constexpr std::uint32_t kApiVersion = 1;

}  // namespace client
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
