// Thread: std::thread that keeps R responsive while joined and reports exceptions.
#pragma once

#include "abi.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "client/calls.h"
#include "client/host_calls.h"
#include "engine/signal_mask.h"
#include "output.h"
#include "thread_pool.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! A thread with std::thread's interface. join() on R's main thread keeps R
//! responsive (output, interrupts) and rethrows an exception thrown by the
//! thread's function. The destructor joins a joinable thread (rather than
//! terminating the process, as std::thread would).
class Thread {
public:
    //! std::thread's member types, so that code written for std::thread
    //! (also through RCPPSPOOL_OVERRIDE_THREAD) can name them.
    using id = std::thread::id;
    //! As std::thread::native_handle_type.
    using native_handle_type = std::thread::native_handle_type;

    Thread() noexcept = default;

    //! Starts `f(args...)`; f and args are decay-copied.
    template <class F, class... Args>
    explicit Thread(F&& f, Args&&... args) : state_(std::make_shared<State>())
    {
        auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
        client::findRuntime();
        engine::AsyncSignalsBlocked inherited;  // see signal_mask.h: R's handlers run on R's threads
        thread_ = std::thread([st = state_, call]() mutable {
            try {
                call();
            } catch (...) {
                st->error = std::current_exception();
            }
            Rcout.flushThisThread();
            Rcerr.flushThisThread();
            std::lock_guard<std::mutex> lk(st->m);
            st->done = true;
            st->cv.notify_all();
        });
    }

    Thread(Thread&&) noexcept = default;
    //! Joins this thread (if joinable), then takes `other`'s.
    Thread& operator=(Thread&& other) noexcept
    {
        if (this != &other) {
            quietJoin();
            thread_ = std::move(other.thread_);
            state_ = std::move(other.state_);
        }
        return *this;
    }
    Thread(const Thread&) = delete;
    Thread& operator=(const Thread&) = delete;

    //! Joins the thread if it is joinable (std::thread would terminate the process); an exception of its
    //! function is dropped.
    ~Thread() noexcept { quietJoin(); }

    //! Waits for the thread to finish, then rethrows its exception, if any.
    //! On R's main thread an interrupt is raised for the thread (its
    //! isInterrupted() turns true) and, once the thread has ended, thrown
    //! as UserInterruptException.
    void join()
    {
        if (!thread_.joinable()) throw std::system_error(std::make_error_code(std::errc::invalid_argument));
        if (client::onServiceThread()) {
            // An interrupt stays raised until the thread has ended, so that
            // the thread can see it; endBlockingCall() below throws it. The
            // thread's end wakes this wait at once (a thread that lives 20 us
            // is joined in microseconds, not after a polling period).
            std::unique_lock<std::mutex> lk(state_->m);
            while (!state_->cv.wait_for(lk, kServicePeriod, [&] { return state_->done; })) {
                lk.unlock();
                client::serviceMainThread();
                lk.lock();
            }
        }
        thread_.join();
        std::exception_ptr e = std::exchange(state_->error, nullptr);
        client::endBlockingCall(e);
    }

    //! As std::thread::detach(): the thread runs on alone; its exception is lost.
    void detach() { thread_.detach(); }
    //! As std::thread::joinable().
    bool joinable() const noexcept { return thread_.joinable(); }
    //! As std::thread::get_id().
    std::thread::id get_id() const noexcept { return thread_.get_id(); }
    //! As std::thread::native_handle().
    std::thread::native_handle_type native_handle() { return thread_.native_handle(); }
    //! Exchanges the threads of `*this` and `other`.
    void swap(Thread& other) noexcept
    {
        thread_.swap(other.thread_);
        state_.swap(other.state_);
    }
    //! As std::thread::hardware_concurrency(): the machine's hardware threads (availableCores() counts those
    //! this process may use).
    static unsigned int hardware_concurrency() noexcept { return std::thread::hardware_concurrency(); }

private:
    //! How often join() on R's main thread services it (as the runtime's waits do).
    static constexpr std::chrono::milliseconds kServicePeriod{10};

    struct State {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;  // guarded by m
        std::exception_ptr error;
    };

    void quietJoin() noexcept
    {
        if (thread_.joinable()) thread_.join();
    }

    std::thread thread_;
    std::shared_ptr<State> state_;
};

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
