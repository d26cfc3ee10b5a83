// Text written by threads that may not talk to the host directly.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace RcppSpool {
namespace host {

enum class Stream { out, err };

//! Complete lines from worker threads, in the order they were completed,
//! until the main thread releases them.
class OutputQueue {
public:
    void add(Stream s, std::string text)
    {
        std::lock_guard<std::mutex> lk(m_);
        items_.emplace_back(s, std::move(text));
    }
    //! Takes everything queued so far.
    std::vector<std::pair<Stream, std::string>> takeAll()
    {
        std::lock_guard<std::mutex> lk(m_);
        return std::exchange(items_, {});
    }

private:
    std::mutex m_;
    std::vector<std::pair<Stream, std::string>> items_;
};

inline OutputQueue& outputQueue()
{
    static OutputQueue q;
    return q;
}

}  // namespace host
}  // namespace RcppSpool
