// onMainThread(): a call that any thread hands to R's main thread.
#pragma once

#include "abi.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "client/host_calls.h"
#include "client/future_state.h"
#include "future.h"
#include "host/main_thread.h"
#ifdef RCPPSPOOL_STANDALONE
#include "host/standalone.h"  // callGuarded()
#else
#include "host/r_guarded.h"
#endif
#include "thread_pool.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! An R error signalled in a call made with onMainThread(); what() is R's
//! message. Rethrown where the call's Future is waited for: a parallel loop
//! whose body waited for it ends with this error, and reaches R as an R error
//! with that message.
class RError : public std::runtime_error {
public:
    //! An error with R's `message`.
    explicit RError(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {

//! The queued call: `call`, and the state its Future waits on.
template <class R, class Call>
struct MainThreadCall final : table::MainCall {
    Call call;
    client::FutureState<R>* state;  // one reference held here

    MainThreadCall(Call c, client::FutureState<R>* s) : call(std::move(c)), state(s)
    {
        run = &runIt;
        cancel = &cancelIt;
    }
    //! Runs the call where R's API may jump out of it (an R error, an
    //! interrupt) and completes the state in every case.
    void runHere()
    {
        if (state->isAbandoned()) return state->cancel();  // nobody wants it
        std::string message;
        bool returned = false;
        struct Body {
            MainThreadCall* self;
            bool* returned;
            static void go(void* p)
            {
                auto* b = static_cast<Body*>(p);
                b->self->state->compute(b->self->call);  // keeps a C++ exception
                // Rcpp (Rcpp::Function) and cpp11 catch an R error as a C++
                // exception carrying R's jump: resume the jump here, inside
                // the guard, where it ends as an R error. (Resumed later, at
                // the .Call's end, it would jump to this guard, long gone.)
                host::resumeUnwind(b->self->state->error());
                *b->returned = true;
            }
        } body{this, &returned};
        const host::GuardedEnd end = host::callGuarded(&Body::go, &body, message);
        if (returned) return state->complete();
        if (end == host::GuardedEnd::rError)
            return state->fail(std::make_exception_ptr(RError(message)));
        client::interruptFlag().store(true, std::memory_order_relaxed);  // the runtime's: every wait sees it
        state->fail(engine::interruptError());
    }
    static void runIt(table::MainCall* c)
    {
        auto* self = static_cast<MainThreadCall*>(c);
        self->runHere();
        self->state->release();
        delete self;
    }
    static void cancelIt(table::MainCall* c)
    {
        auto* self = static_cast<MainThreadCall*>(c);
        self->state->cancel();
        self->state->release();
        delete self;
    }
};

}  // namespace detail

//! Runs `f(args...)` on R's main thread, where it may use R's API (call an R
//! function, draw R's random numbers, allocate an R object, warn), and
//! returns a Future for its result. From any thread: a pool worker, a
//! Thread, a std::thread.
//!
//! Called on the main thread, `f` runs at once. Called on another thread,
//! the call is queued and the main thread runs it at its next service point:
//! while it waits in any RcppSpool call (a blocking parallelFor, wait(),
//! get(): it is woken for the call; Thread::join(): within 10 ms), or when
//! such a call returns. The
//! calls run one at a time, in the order they were made (a thread's calls in
//! its order). A worker that waits for the Future runs other tasks
//! meanwhile, so a parallel loop whose body calls onMainThread(...).get()
//! cannot deadlock the main thread that waits for the loop. While the main
//! thread is busy elsewhere (running R code between RcppSpool calls), queued
//! calls wait; get() on them then waits too.
//!
//! `f` and the arguments are decay-copied, as for async(). A C++ exception
//! thrown by `f` is rethrown by get(); an R error in `f` becomes RError with
//! R's message (nothing is printed); the user's interrupt cancels every call
//! not yet run (their get() throws UserInterruptException) and ends the
//! waiting RcppSpool call on the main thread as any interrupt does. An R
//! error or interrupt leaves `f` by a jump that skips the destructors of its
//! C++ objects, as anywhere in R's C API: call R through Rcpp (Rcpp::Function,
//! whose errors are C++ exceptions) or cpp11 to have them run.
//!
//! Cost: a queued call is an allocation, a lock, and a wake-up of the main
//! thread; the vignette gives measured latencies. Use it for the odd call
//! (one item in a hundred), not for every iteration of a fine loop.
//! Without R (RCPPSPOOL_STANDALONE) there is no main thread to serve: `f`
//! runs on the calling thread, at once.
template <class F, class... Args>
auto onMainThread(F&& f, Args&&... args) -> Future<detail::ResultOf<F, Args...>>
{
    using R = detail::ResultOf<F, Args...>;
    auto call = detail::bind(std::forward<F>(f), std::forward<Args>(args)...);
    using Call = decltype(call);
    void* sched = ThreadPool::globalInstance().handle();
    // Without R there is no main thread to serve; on it, the call runs now.
#if defined(RCPPSPOOL_STANDALONE)
    const bool runHere = true;
#else
    const bool runHere = host::isMainThread();
#endif
    if (runHere) {
        auto* state = new client::FutureState<R>(sched, 2);
        Future<R> future(state);
        auto* here = new detail::MainThreadCall<R, Call>(std::move(call), state);
        detail::MainThreadCall<R, Call>::runIt(here);
        return future;
    }
    auto* state = new client::FutureState<R>(sched, 2);
    Future<R> future(state);
    auto* queued = new detail::MainThreadCall<R, Call>(std::move(call), state);
    try {
        client::postMainCall(queued);
    } catch (...) {
        queued->cancel(queued);  // no runtime to queue it in (client/api.h says why)
        throw;
    }
    return future;
}

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
