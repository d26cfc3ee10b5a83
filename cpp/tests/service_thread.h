// Tests: the calling thread as the host's service thread (R's main thread).
#pragma once

#include <RcppSpool.h>

#include <thread>

namespace test_service {

//! Makes the calling thread the host's service thread (R's main thread: it
//! waits without running tasks, and is served while it waits) while this lives.
class AsServiceThread {
public:
    AsServiceThread()
    {
        mainId() = std::this_thread::get_id();
        saved_ = RcppSpool::engine::hostHooks();
        RcppSpool::engine::hostHooks().isServiceThread = [] { return std::this_thread::get_id() == mainId(); };
        RcppSpool::engine::hostHooks().service = [] {};
    }
    ~AsServiceThread() { RcppSpool::engine::hostHooks() = saved_; }
    AsServiceThread(const AsServiceThread&) = delete;
    AsServiceThread& operator=(const AsServiceThread&) = delete;

private:
    static std::thread::id& mainId()
    {
        static std::thread::id id;
        return id;
    }
    RcppSpool::engine::HostHooks saved_;
};

}  // namespace test_service
