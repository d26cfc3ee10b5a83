// ProgressCounter and ProgressBar: progress of parallel work, updated from any
// thread, drawn by R's main thread.
//
// Updating (++p, p++, p += n) costs one relaxed atomic add on a worker thread;
// on the thread that may draw it adds a cheap clock read. Drawing follows one
// rule: at most one intermediate line per `printEvery` seconds, then the final
// "100% (done)" line exactly once.
//
// In R only the main thread draws: when it increments itself, and while it
// waits in (or takes part in) a blocking call of this library, through the
// host's redraw hook (the runtime's service, at least every 10 ms, and the
// end of a blocking call). Every live progress object is in the runtime's
// registry (runtime/progress_registry.h: each object with its drawing
// function, this file's drawDue()), which the hook walks; an object leaves it in its
// destructor, before anything it owns is destroyed, so the main thread never
// touches a destroyed object. When the last increment happens on a worker,
// the main thread draws the final line at its next service, at the end of the
// blocking call, or when it destroys the object; an object destroyed on a
// worker hands its final line to the main thread like any Rcout line.
// Without R (-DRCPPSPOOL_STANDALONE) any thread draws, under the object's
// mutex; the thread whose increment completes the count draws the final line.
//
// By default the text and the stream are RcppThread's (2.3, unchanged in
// 2.4), character for character, so that migrated code prints the same:
//     "\rComputing: 37%  (~2s remaining)       "
//     "\rComputing: 100% (done)                         \n"
//     "\rComputing: [===============                         ] 37%  (~2s remaining)       "
// through Rcout. Pass RcppSpool::Rcerr to the constructor (or call
// setStream(RcppSpool::Rcerr)) to print to R's message stream instead, and
// call setShowElapsed() to add the elapsed time. Nothing is drawn before the
// first increment, and an object destroyed before its count completes (an
// error, an interrupt) draws no final line, as with RcppThread.
//
// In R, progress can look like R's own instead: with useCli() (or
// options(RcppSpool.progress = "cli") when the object is made on the main
// thread) and the cli package installed, the main thread drives one cli
// progress bar (cli::cli_progress_bar()) per object, updated at most every
// 50 ms, which cli draws by its own rules and options (RStudio, knitr,
// progressr handlers, cli.progress_show_after: nothing for the first 2 s by
// default). Classes that override printProgress() keep their own text.
#pragma once

#include "abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "client/host_calls.h"
#include "output.h"
#ifndef RCPPSPOOL_STANDALONE
#include "host/cli_progress.h"
#endif

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

class ProgressPrinter;

namespace progress_detail {

//! Nanoseconds of the monotonic clock.
inline std::int64_t preciseNowNs() noexcept
{
#if defined(__linux__) && defined(CLOCK_MONOTONIC)
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
#else
    using namespace std::chrono;
    return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
#endif
}

//! About preciseNowNs(), read cheaply: on Linux the coarse clock (7 ns where
//! the precise one takes 50), which lags by about a kernel tick (1-4 ms);
//! two ticks are added to make up for it. The hot path uses it to decide
//! whether a draw may be due; the draw itself checks again with
//! preciseNowNs(), so a reading that is still late only delays a draw by a
//! few milliseconds and never breaks the rate limit.
RCPPSPOOL_HIDDEN inline std::int64_t fastNowNs() noexcept
{
#if defined(__linux__) && defined(CLOCK_MONOTONIC) && defined(CLOCK_MONOTONIC_COARSE)
    static const std::int64_t tick = [] {
        timespec res;
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return std::int64_t(-1);
        return std::int64_t(res.tv_sec) * 1000000000 + res.tv_nsec;
    }();
    if (tick < 0 || tick > 20000000) return preciseNowNs();  // unknown or too coarse
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec + 2 * tick;
#else
    return preciseNowNs();
#endif
}

//! Seconds as RcppThread writes them: at most two units of d, h, m, s
//! ("45s", "3m12s", "2h5m", "1d3h").
inline std::string formatTime(std::size_t secs)
{
    std::ostringstream msg;
    constexpr std::size_t minute = 60;
    constexpr std::size_t hour = 60 * minute;
    constexpr std::size_t day = 24 * hour;
    int numUnits = 0;
    if (secs / day > 0) {
        msg << secs / day << "d";
        secs = secs % day;
        numUnits++;
    }
    if (secs / hour > 0) {
        msg << secs / hour << "h";
        secs = secs % hour;
        numUnits++;
    }
    if ((secs / minute > 0) && (numUnits < 2)) {
        msg << secs / minute << "m";
        secs = secs % minute;
        numUnits++;
    }
    if (numUnits < 2) msg << secs << "s";
    return msg.str();
}

//! The bar of RcppThread's ProgressBar: `numBars` cells, '=' for the done part.
inline std::string makeBar(std::size_t pct, std::size_t numBars = 40)
{
    std::string bar = "[";
    std::size_t i = 0;
    for (; i < pct / 100.0 * numBars; i++) bar += '=';
    for (; i < numBars; i++) bar += ' ';
    bar += "] ";
    return bar;
}

//! Where progress is printed: the stream of `Rcerr` if `printer` is Rcerr,
//! else the stream of `Rcout` (the default, as in RcppThread).
inline host::Stream streamOf(const RPrinter& printer) noexcept
{
    return &printer == &Rcerr ? host::Stream::err : host::Stream::out;
}


}  // namespace progress_detail

//! What ProgressCounter and ProgressBar share: an atomic count, the drawing
//! rules, and the registration with R's main thread. Pass either by
//! `ProgressPrinter&` to code that only increments.
//!
//! It is also RcppThread's base class for progress printers of one's own,
//! with the same protected interface: derive from it, override
//! printProgress(), and read `it_`, `numIt_`, `isDone_`, `startTime_`, or
//! call progressString() and formatTime() there, as with RcppThread. What
//! differs is who calls printProgress(): in R, only R's main thread (when it
//! increments, while it waits in a blocking call of this library, and at the
//! end of that call), at most once per `printEvery` seconds and once more
//! when the count is complete; without R, the incrementing thread, under a
//! mutex. So printProgress() may print through Rcout (or Rcpp's) at once.
//!
//! Create it on any thread, increment it from any thread, and destroy it once
//! the work that increments it has finished (for example after the loop or
//! `wait()` returned): the destructor is safe against concurrent drawing,
//! but, as for any object, not against increments still running.
class ProgressPrinter {
public:
    //! RcppThread's constructor, for classes derived from ProgressPrinter:
    //! `numIt` units of work, printProgress() at most once per `printEvery`
    //! seconds (fractions allowed, unlike RcppThread) and once when done.
    ProgressPrinter(std::size_t numIt, double printEvery = 1)
        : ProgressPrinter(Style::counter, numIt, printEvery, "", Rcout)
    {}
    ProgressPrinter(const ProgressPrinter&) = delete;
    ProgressPrinter& operator=(const ProgressPrinter&) = delete;

    //! Leaves the registry, then, if the count reached the total and the
    //! final line was not drawn yet, draws this class's final line (a class
    //! derived from it is already gone: its printProgress() draws the final
    //! line at the end of the blocking call that completed the count, or
    //! when the main thread increments last). On a worker in R the line is
    //! handed to the main thread, which prints it with the next released output.
    virtual ~ProgressPrinter()
    {
#ifndef RCPPSPOOL_STANDALONE
        client::registerProgress(false, this, &drawDue);
        if (cli_.load(std::memory_order_relaxed)) {
            finishCli();
            return;
        }
#endif
        try {
            std::lock_guard<std::mutex> lk(drawMutex_);
            if (isDone_.load(std::memory_order_relaxed)) return;
            const std::size_t c = it_.load(std::memory_order_acquire);
            if (c == 0 || c < numIt_) return;  // unfinished (error, interrupt): as RcppThread, no final line
            std::string text = render(c, true, progress_detail::preciseNowNs());
            isDone_.store(true, std::memory_order_relaxed);
            emit(text);  // (from a worker in R: queued for the main thread)
        } catch (...) {
            // a destructor must not throw; losing a line is the lesser evil
        }
    }

    //! Draws the current state: "\r", the message, the bar (ProgressBar),
    //! and progressString(); marks the printer done when the count is
    //! complete. Called as the class comment says; override it to draw
    //! something else (RcppThread's interface).
    virtual void printProgress()
    {
        if (isDone_.load(std::memory_order_relaxed)) return;
        const std::size_t c = it_.load(std::memory_order_acquire);
        const bool final = c >= numIt_;
#ifndef RCPPSPOOL_STANDALONE
        if (drawWithCli(c, final)) {
            if (final) isDone_.store(true, std::memory_order_relaxed);
            return;
        }
#endif
        std::string text = render(c, final, progress_detail::preciseNowNs());
        if (final) isDone_.store(true, std::memory_order_relaxed);
        emit(text);
    }

    //! Counts one unit of work; returns the new count. On a thread that may
    //! draw (R's main thread; any thread without R) it draws if due.
    std::size_t operator++() { return add(1); }
    //! Counts one unit of work; returns the count before it.
    std::size_t operator++(int) { return add(1) - 1; }
    //! Counts `n` units of work at once; returns the new count.
    std::size_t operator+=(std::size_t n) { return add(n); }

    //! Units counted so far (may exceed total() if over-counted).
    std::size_t count() const noexcept { return it_.load(std::memory_order_relaxed); }
    //! The total given to the constructor.
    std::size_t total() const noexcept { return numIt_; }
    //! True once the final "100% (done)" line was drawn (or handed over).
    bool done() const noexcept { return isDone_.load(std::memory_order_relaxed); }

    //! Prints to `printer`: RcppSpool::Rcout (the default, as RcppThread) or
    //! RcppSpool::Rcerr (R's message stream, REprintf; std::cerr without R).
    //! Any other printer counts as Rcout. Takes effect at the next draw.
    void setStream(const RPrinter& printer) noexcept
    {
        stream_.store(progress_detail::streamOf(printer), std::memory_order_relaxed);
    }
    //! Adds the elapsed time to every line: "37%  (1s elapsed, ~2s remaining)"
    //! and "100% (done in 3s)". Off by default, where the text is RcppThread's.
    void setShowElapsed(bool on = true) noexcept { showElapsed_.store(on, std::memory_order_relaxed); }
    //! Draws through a progress bar of R's cli package instead of
    //! RcppThread's text (see the file's comment): from the next draw, if cli
    //! is installed (else, or if cli fails, the text as before). The bar's
    //! name is the message ("Computing"). Without R it does nothing. Also set
    //! by options(RcppSpool.progress = "cli") for objects made on R's main
    //! thread.
    void useCli(bool on = true) noexcept
    {
#ifndef RCPPSPOOL_STANDALONE
        cli_.store(on, std::memory_order_relaxed);
        if (on) nextDrawNs_.store(std::min(nextDrawNs_.load(std::memory_order_relaxed), startNs_ + kCliPeriodNs),
                                  std::memory_order_relaxed);
#else
        (void)on;
#endif
    }

protected:
    //! How the line is drawn.
    enum class Style { counter, bar };
    //! `total` units of work; at most one intermediate line per `printEvery`
    //! seconds (any value >= 0; NaN or negative count as 0: every increment
    //! may draw); `msg` starts each line; printed to the stream of `printer`.
    ProgressPrinter(Style style, std::size_t total, double printEvery, std::string msg,
                    const RPrinter& printer)
        : numIt_(total),
          printEvery_(printEvery),
          startTime_(std::chrono::steady_clock::now()),
          periodNs_(periodToNs(printEvery)),
          startNs_(progress_detail::preciseNowNs()),
          style_(style),
          msg_(std::move(msg)),
          stream_(progress_detail::streamOf(printer))
    {
        nextDrawNs_.store(startNs_ + periodNs_, std::memory_order_relaxed);
#ifndef RCPPSPOOL_STANDALONE
        client::registerProgress(true, this, &drawDue);
#endif
    }

    //! useCli() if options(RcppSpool.progress = "cli") is set (read on R's
    //! main thread only). ProgressCounter and ProgressBar ask; a class of
    //! one's own that draws itself does not.
    void useCliIfAsked()
    {
#ifndef RCPPSPOOL_STANDALONE
        if (host::cliProgressRequested()) useCli();
#endif
    }

    // ---- RcppThread's protected interface, for derived classes ------------

    //! RcppThread's rule for "a line is due now": once per printEvery_
    //! seconds since the start, and when the count is complete. RcppSpool
    //! does not use it (its own rule is the same, per thread that may draw).
    bool needsPrint()
    {
        using namespace std::chrono;
        const double passed = duration<double>(steady_clock::now() - startTime_).count();
        bool needsUpdate = printEvery_ <= 0 || passed / printEvery_ > double(numUpdates_ + 1);
        needsUpdate = needsUpdate || it_ == numIt_;
        if (needsUpdate) numUpdates_++;
        return needsUpdate;
    }
    //! Seconds left, estimated from the rate so far (RcppThread's estimate).
    std::size_t remainingSecs()
    {
        using namespace std::chrono;
        const std::size_t it = std::max<std::size_t>(1, std::min<std::size_t>(it_, numIt_));
        const float diff = duration<float>(steady_clock::now() - startTime_).count();
        return static_cast<std::size_t>((numIt_ - it) * diff / it);
    }
    //! RcppThread's text after the message: "100% (done)" and a newline when
    //! the count is complete, else "37%  (~2s remaining)" (padded with blanks).
    std::string progressString()
    {
        using namespace std::chrono;
        const std::int64_t now =
            startNs_ + duration_cast<nanoseconds>(steady_clock::now() - startTime_).count();
        const std::size_t c = it_.load(std::memory_order_acquire);
        return statusText(c, c >= numIt_, now, false);
    }
    //! Seconds as RcppThread writes them: "45s", "3m12s", "2h5m", "1d3h".
    std::string formatTime(std::size_t secs) { return progress_detail::formatTime(secs); }

    std::atomic_size_t it_{0};          //!< units counted (the hot path)
    std::atomic_size_t numUpdates_{0};  //!< lines due under needsPrint()'s rule
    std::atomic_bool isDone_{false};    //!< the final line was drawn
    const std::size_t numIt_;           //!< the total
    const double printEvery_;           //!< seconds between lines (size_t in RcppThread)
    const std::chrono::time_point<std::chrono::steady_clock> startTime_;

private:
#ifndef RCPPSPOOL_STANDALONE
    //! What R's main thread calls when it is serviced (see ApiTable::registerProgress).
    static void drawDue(void* self)
    {
        auto* p = static_cast<ProgressPrinter*>(self);
        if (p->isDone_.load(std::memory_order_relaxed)) return;
        std::lock_guard<std::mutex> lk(p->drawMutex_);
        p->drawLocked(progress_detail::preciseNowNs());
    }
#endif

    static std::int64_t periodToNs(double secs) noexcept
    {
        if (!(secs > 0)) return 0;                       // NaN, zero, negative
        if (secs > 1e9) return std::int64_t(1e18);       // "never" (about 30 years)
        return static_cast<std::int64_t>(secs * 1e9);
    }

    //! May this thread draw? In R: only the main thread. Without R: any.
    static bool mayDraw() noexcept
    {
#ifdef RCPPSPOOL_STANDALONE
        return true;
#else
        return host::isMainThread();
#endif
    }

    //! The hot path: one atomic add; where drawing is allowed, a coarse clock
    //! read and a comparison, and a draw at most once per period.
    std::size_t add(std::size_t n)
    {
        const std::size_t c = it_.fetch_add(n, std::memory_order_relaxed) + n;
        if (mayDraw() && !isDone_.load(std::memory_order_relaxed)) {
            if (c >= numIt_)
                draw(true);  // the final line: wait for a draw in progress
            else if (drawPeriodNs() == 0 || progress_detail::fastNowNs() >= nextDrawNs_.load(std::memory_order_relaxed))
                draw(false);  // intermediate: skip if another thread is drawing
        }
        return c;
    }

    void draw(bool wait)
    {
        std::unique_lock<std::mutex> lk(drawMutex_, std::defer_lock);
        if (wait)
            lk.lock();
        else if (!lk.try_lock())
            return;
        drawLocked(progress_detail::preciseNowNs());
    }

    //! Calls printProgress() if something changed and the period passed (or
    //! the count is complete). Requires drawMutex_.
    void drawLocked(std::int64_t now)
    {
        if (isDone_.load(std::memory_order_relaxed)) return;
        const std::size_t c = it_.load(std::memory_order_acquire);
        if (c == 0) return;  // nothing happened yet
        const bool final = c >= numIt_;
        if (!final && (c == drawnCount_ || now < nextDrawNs_.load(std::memory_order_relaxed))) return;
        drawnCount_ = c;
        nextDrawNs_.store(now + drawPeriodNs(), std::memory_order_relaxed);
        printProgress();
        // A derived printProgress() that does not mark the end itself (or
        // whose count overshot the total) must still not draw forever.
        if (final) isDone_.store(true, std::memory_order_relaxed);
    }

    //! The time between intermediate draws: printEvery, or at most 50 ms
    //! when cli draws (cli itself decides what to show when).
    std::int64_t drawPeriodNs() const noexcept
    {
        return cli_.load(std::memory_order_relaxed) ? std::min(periodNs_, kCliPeriodNs) : periodNs_;
    }
    static constexpr std::int64_t kCliPeriodNs = 50000000;

#ifndef RCPPSPOOL_STANDALONE
    //! The bar's name: the message without its trailing ": ".
    std::string cliName() const
    {
        std::string name = msg_;
        while (!name.empty() && (name.back() == ' ' || name.back() == ':')) name.pop_back();
        return name;
    }
    //! Draws count `c` through cli (main thread): false if cli is not used,
    //! not installed, or failed (the text is drawn instead, from now on).
    bool drawWithCli(std::size_t c, bool final)
    {
        if (!cli_.load(std::memory_order_relaxed)) return false;
        if (!cliBar_) {
            if (!host::CliBar::cliInstalled()) {
                cli_.store(false, std::memory_order_relaxed);
                return false;
            }
            cliBar_.reset(new host::CliBar());
        }
        if (cliBar_->update(std::min(c, numIt_), numIt_, cliName(), final)) return true;
        cli_.store(false, std::memory_order_relaxed);
        cliBar_.reset();  // here, on the main thread
        return false;
    }
    //! The destructor's part when cli draws: the bar gets its final state
    //! (complete, or closed as it stands) on the main thread; from a worker
    //! the bar is handed to the main thread (its next service point).
    void finishCli() noexcept
    {
        try {
            std::unique_lock<std::mutex> lk(drawMutex_);
            if (!cliBar_) return;  // nothing was drawn (cli shows nothing for quick work either)
            const std::size_t c = it_.load(std::memory_order_acquire);
            const bool complete = c >= numIt_ && !isDone_.load(std::memory_order_relaxed);
            struct Finish final : table::MainCall {
                std::unique_ptr<host::CliBar> bar;
                std::size_t total;
                std::string name;
                bool complete;
                static void runIt(table::MainCall* m)
                {
                    std::unique_ptr<Finish> self(static_cast<Finish*>(m));
                    if (self->complete)
                        self->bar->update(self->total, self->total, self->name, true);
                    else
                        self->bar->close();
                }
            };
            std::unique_ptr<Finish> f(new Finish());
            f->run = f->cancel = &Finish::runIt;
            f->bar = std::move(cliBar_);
            f->total = numIt_;
            f->name = cliName();
            f->complete = complete;
            if (host::isMainThread())
                Finish::runIt(f.release());
            else
                client::postMainCall(f.release());
        } catch (...) {
            // a destructor must not throw; an unfinished bar is the lesser evil
        }
    }
#endif

    //! Writes a drawn line (in R, on the main thread: first the lines workers
    //! completed before it, then the line itself; elsewhere it is queued
    //! whole). It bypasses RPrinter's bookkeeping of unfinished lines on
    //! purpose: a progress line is transient and must not hold back the
    //! output of workers.
    void emit(const std::string& text)
    {
        client::writeText(stream_.load(std::memory_order_relaxed), text.data(), text.size(), table::kWriteWhole);
    }

    //! "100% (done)" or "37%  (~2s remaining)", with the elapsed time if
    //! `showElapsed`, for count `c` at time `now` (RcppThread's text).
    std::string statusText(std::size_t c, bool final, std::int64_t now, bool showElapsed) const
    {
        const std::size_t it = std::min(c, numIt_);
        const float elapsed = float(double(now - startNs_) * 1e-9);
        std::ostringstream line;
        if (final) {
            if (showElapsed)
                line << "100% (done in " << progress_detail::formatTime(static_cast<std::size_t>(elapsed))
                     << ")                         \n";
            else
                line << "100% (done)                         \n";
        } else {
            double pct = std::round(it * 100.0 / numIt_);
            // RcppThread's estimate, in float as there: (total - it) * elapsed / it
            auto remaining = static_cast<std::size_t>((numIt_ - it) * elapsed / std::max<std::size_t>(it, 1));
            line << pct << "%  (";
            if (showElapsed) line << progress_detail::formatTime(static_cast<std::size_t>(elapsed)) << " elapsed, ";
            line << "~" << progress_detail::formatTime(remaining) << " remaining)       ";
        }
        return line.str();
    }

    //! The whole line for count `c` at time `now`.
    std::string render(std::size_t c, bool final, std::int64_t now) const
    {
        std::string line = "\r" + msg_;
        if (style_ == Style::bar) {
            const std::size_t it = std::min(c, numIt_);
            double pct = final ? 100.0 : std::round(it * 100.0 / numIt_);
            line += progress_detail::makeBar(static_cast<std::size_t>(pct));
        }
        return line + statusText(c, final, now, showElapsed_.load(std::memory_order_relaxed));
    }

    const std::int64_t periodNs_;
    const std::int64_t startNs_;
    std::atomic<std::int64_t> nextDrawNs_{0};  //!< no intermediate line before this time
    const Style style_;
    const std::string msg_;
    std::atomic<host::Stream> stream_;
    std::atomic<bool> showElapsed_{false};
    std::atomic<bool> cli_{false};  //!< draw through cli (R only)
#ifndef RCPPSPOOL_STANDALONE
    std::unique_ptr<host::CliBar> cliBar_;  //!< made at the first draw through cli (main thread)
#endif
    std::mutex drawMutex_;         //!< one draw at a time (and against the destructor)
    std::size_t drawnCount_ = 0;   //!< the count last drawn (under drawMutex_)
};

//! Progress in percent with the estimated time left, as RcppThread's
//! ProgressCounter: "Computing: 37%  (~2s remaining)       ", finally
//! "Computing: 100% (done)", each line starting with "\r" (redrawn in place),
//! through Rcout unless told otherwise.
//!
//!     RcppSpool::ProgressCounter cntr(n, 1, "Fitting: ");
//!     RcppSpool::parallelFor(0, n, [&](ptrdiff_t i) { work(i); cntr++; });
class ProgressCounter final : public ProgressPrinter {
public:
    //! `total` units of work; a line at most every `printEvery` seconds
    //! (fractions allowed); `msg` starts each line; printed through `printer`
    //! (RcppSpool::Rcout, the default, or RcppSpool::Rcerr).
    ProgressCounter(std::size_t total, double printEvery = 1, std::string msg = "Computing: ",
                             const RPrinter& printer = Rcout)
        : ProgressPrinter(Style::counter, total, printEvery, std::move(msg), printer)
    {
        useCliIfAsked();
    }
};

//! A bar of 40 cells with percent and the estimated time left, as RcppThread's
//! ProgressBar: "Computing: [===============                         ] 37%
//! (~2s remaining)", finally "... 100% (done)", each line starting with "\r"
//! (redrawn in place), through Rcout unless told otherwise.
//!
//!     RcppSpool::ProgressBar bar(n, 0.5, RcppSpool::Rcerr);
//!     RcppSpool::parallelFor(0, n, [&](ptrdiff_t i) { work(i); ++bar; });
class ProgressBar final : public ProgressPrinter {
public:
    //! `total` units of work; a line at most every `printEvery` seconds
    //! (fractions allowed); printed through `printer` (RcppSpool::Rcout, the
    //! default, or RcppSpool::Rcerr). Lines start with "Computing: ".
    ProgressBar(std::size_t total, double printEvery = 1, const RPrinter& printer = Rcout)
        : ProgressPrinter(Style::bar, total, printEvery, "Computing: ", printer)
    {
        useCliIfAsked();
    }

    //! The same with `msg` instead of "Computing: " before the bar.
    ProgressBar(std::size_t total, double printEvery, std::string msg, const RPrinter& printer = Rcout)
        : ProgressPrinter(Style::bar, total, printEvery, std::move(msg), printer)
    {
        useCliIfAsked();
    }
};


}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
