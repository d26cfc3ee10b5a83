// Text written by threads that may not talk to the host directly.
#pragma once

#include "../abi.h"

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "../engine/runtime.h"
#include "stream.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace host {

//! Complete lines from worker threads, in the order they were completed,
//! until the main thread releases them.
class OutputQueue {
public:
    void add(Stream s, std::string text)
    {
        std::lock_guard<std::mutex> lk(m_);
        items_.emplace_back(s, std::move(text));
    }
    //! Takes everything queued so far, except text for the streams marked
    //! `hold` (it stays queued, in order).
    std::vector<std::pair<Stream, std::string>> take(bool holdOut = false, bool holdErr = false)
    {
        std::lock_guard<std::mutex> lk(m_);
        if (!holdOut && !holdErr) return std::exchange(items_, {});
        std::vector<std::pair<Stream, std::string>> out, kept;
        for (auto& item : items_) {
            bool hold = item.first == Stream::out ? holdOut : holdErr;
            (hold ? kept : out).push_back(std::move(item));
        }
        items_ = std::move(kept);
        return out;
    }

private:
    std::mutex m_;
    std::vector<std::pair<Stream, std::string>> items_;
};

//! Never destroyed: a thread that ends during the process's exit (a pool's
//! worker, after static destruction began) may still hand over its last line.
RCPPSPOOL_HIDDEN inline OutputQueue& outputQueue()
{
    static OutputQueue* const q = new OutputQueue;
    return *q;
}

}  // namespace host
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
