// The host for plain C++ (-DRCPPSPOOL_STANDALONE): no R, nothing to service.
#pragma once

#include "../abi.h"

#include <exception>
#include <iostream>
#include <mutex>
#include <string>

#include "../engine/runtime.h"
#include "output_queue.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! Writes text to std::cout / std::cerr. Called with whole lines by any thread;
//! the lock keeps lines of different threads apart.
RCPPSPOOL_HIDDEN inline void write(Stream s, const std::string& text)
{
    static std::mutex m;
    std::lock_guard<std::mutex> lk(m);
    std::ostream& os = s == Stream::out ? std::cout : std::cerr;
    os << text;
    os.flush();
}

//! Without R no thread is special: every thread hands over whole lines.
inline bool isOutputThread() { return false; }
inline void writeFromMain(Stream s, const std::string& text) { write(s, text); }

//! Complete lines of any thread are written at once.
inline void deliverLines(Stream s, const std::string& lines) { write(s, lines); }

//! Text that is not part of a thread's lines (a progress line): written at once.
inline void writeWhole(Stream s, const std::string& text) { write(s, text); }

//! Nothing to release: text is written as it completes.
inline void releaseOutput() {}

//! Without R there is no unwind to resume.
inline void resumeUnwind(const std::exception_ptr&) {}

//! How a guarded call ended (in R, an R error or an interrupt may end it).
enum class GuardedEnd { returned, rError, interrupted };
//! Without R nothing can jump out of `body`: it is simply called.
inline GuardedEnd callGuarded(void (*body)(void*), void* data, std::string&)
{
    body(data);
    return GuardedEnd::returned;
}

}  // namespace host

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
