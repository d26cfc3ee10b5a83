// The host for plain C++ (-DRCPPSPOOL_STANDALONE): no R, nothing to service.
#pragma once

#include <iostream>
#include <mutex>
#include <string>

#include "output_queue.h"

namespace RcppSpool {
namespace host {

//! Writes text to std::cout / std::cerr. Called with whole lines by any thread;
//! the lock keeps lines of different threads apart.
inline void write(Stream s, const std::string& text)
{
    static std::mutex m;
    std::lock_guard<std::mutex> lk(m);
    std::ostream& os = s == Stream::out ? std::cout : std::cerr;
    os << text;
    os.flush();
}

//! Without R every thread may write directly.
inline bool mayWriteDirectly() { return true; }

//! Nothing to release: text is written as it completes.
inline void releaseOutput() {}

}  // namespace host
}  // namespace RcppSpool
