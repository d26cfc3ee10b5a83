// Parallel loops over index ranges: a contiguous run per thread, chunks sized adaptively, far halves taken as runs are used up.
#pragma once

#include "../abi.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "aligned_new.h"
#include "context.h"
#include "host_hooks.h"
#include "openmp_share.h"
#include "range_body.h"
#include "scheduler.h"
#include "trace.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {
namespace engine {

//! The shared state of one parallel loop over [begin, end).
//!
//! Each participant (a thread running part of the loop: the caller, and
//! workers brought in by tickets) owns a run of the range, [next, end), and
//! works from its front, a piece at a time. The range starts as one
//! contiguous run per participant, as OpenMP's static schedule cuts it. A
//! participant whose run is used up takes the far half of the run with the
//! most left and makes it its own; with one piece left, it takes that. So a
//! thread streams through long contiguous parts of the range, the same ones
//! on every call with the same threads (what its caches still hold), and
//! threads meet only where load balance needs it. Taking from the front of
//! another's run instead, as this loop once did, interleaved the two threads
//! piece by piece through the rest of that run: on a triangular loop of
//! 3,000 rows (parallelDist's shape, grain 1, 2 threads), ownership switched
//! 375-495 times along the range (now 3-4), and neighbouring rows, which
//! write neighbouring elements of a dist vector in every column, ran on
//! different cores: 0.23 s on 2 threads against 0.12-0.20 s on one.
//!
//! A participant's chunks start at one iteration and grow until a chunk
//! takes ~20 us (see Grain), so indexes and clocks are touched rarely for
//! cheap bodies while expensive bodies are still cancelled between single
//! iterations; and a chunk is never more than 1 / (2 x participants) of what
//! is left in its run (half, once its grain holds many cheap iterations: see
//! claim()), so that the end of each run is shared out finely (a Kendall
//! matrix of 10 columns, rows of 9, 8, ..., 0 pairs: 1.90x on 2 threads,
//! OpenMP's dynamic schedule 1.93x; plain static halves give 1.65x, as the
//! first half holds the largest rows). Unless nBatches is given, chunks of
//! 256 iterations or more end on a multiple of 64 (counted from index 0), so
//! that vectorised range bodies see aligned data. Before each chunk a
//! participant checks whether the loop was cancelled (an exception, the
//! user's interrupt, an enclosing cancellation). A ticket that arrives when
//! nothing is left costs a few atomic operations.
class LoopBase : public CacheLineAllocated {
public:
    //! `parentContext`: what the loop belongs to (it is cancelled with it);
    //! `counted`: where work pushed by iterations run on tickets is counted,
    //! the context that work pushed by the loop's starter counts in.
    LoopBase(Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t maxParticipants,
             std::size_t nBatches, Context* parentContext, Context* counted)
        : sched_(s),
          counted_(counted),
          ctx_(parentContext),
          remaining_(end - begin),
          maxParticipants_(static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(maxParticipants, 1 << 20)))),
          minChunk_(nBatches == 0 ? 1 : std::max<std::ptrdiff_t>(1, (end - begin + static_cast<std::ptrdiff_t>(nBatches) - 1) / static_cast<std::ptrdiff_t>(nBatches))),
          pieces_((end - begin + minChunk_ - 1) / minChunk_),
          // One run per possible participant (the caller and its tickets
          // have places 0, 1, ...: see invite()).
          nRuns_(static_cast<int>(std::min<std::ptrdiff_t>(maxParticipants_, pieces_))),
          heapRuns_(nRuns_ > kInlineRuns ? new Run[static_cast<std::size_t>(nRuns_)] : nullptr)
    {
        // At least kPiecesPerRun pieces a starting run: a loop of a few long
        // iterations is shared out best from one run, in order (the longest
        // may come first, as in a triangular matrix: 10 rows, 1.81-1.88x on
        // 2 threads in halves, 1.92-1.98x in one); the others start empty
        // and take their share from it. Run k starts at piece k * pieces_ /
        // nStart (computed without overflow): boundaries fall on multiples
        // of minChunk_, nBatches' bound. Without nBatches, runs of
        // kAlignedRun iterations or more start on a multiple of kAlignment,
        // as their pieces end (see claim()).
        const std::ptrdiff_t nStart = std::max<std::ptrdiff_t>(1, std::min<std::ptrdiff_t>(nRuns_, pieces_ / kPiecesPerRun));
        const std::ptrdiff_t q = pieces_ / nStart, r = pieces_ % nStart;
        const bool aligned = minChunk_ == 1 && q >= kAlignedRun;
        auto start = [&](std::ptrdiff_t k) {
            const std::ptrdiff_t s = std::min(end, begin + (k * q + std::min(k, r)) * minChunk_);
            return aligned && k > 0 && k < nStart ? alignUp(s) : s;
        };
        std::ptrdiff_t from = begin;
        for (int k = 0; k < nRuns_; ++k) {
            const std::ptrdiff_t to = k < nStart ? start(k + 1) : end;
            runs()[k].init(from, to);
            from = to;
        }
    }
    virtual ~LoopBase() = default;

    //! Posts a ticket for every participant's place the caller does not take,
    //! but never more than the loop has pieces. The caller, if it takes part,
    //! has place 0 (the first run), tickets the following ones.
    void invite(bool callerTakesPart)
    {
        nextPlace_.store(callerTakesPart ? 1 : 0, std::memory_order_relaxed);
        const int n = nRuns_ - (callerTakesPart ? 1 : 0);
        for (int k = 0; k < n; ++k) {
            retain();
            sched_.submit(Task::make(Ticket{this, -1}, nullptr));
        }
    }

    //! Posts a ticket for the caller's place (0), which the caller left (see
    //! process()): whoever takes it goes on with the caller's run.
    void inviteForCallersPlace()
    {
        retain();
        sched_.submit(Task::make(Ticket{this, 0}, nullptr));
    }

    //! Joins the loop, if fewer than maxParticipants run it, and runs chunks
    //! until none is left. `place`: the run to start from, or -1 for the
    //! next place not taken.
    void participate(int place)
    {
        if (!admit()) return;
        // A place of its own: a run that only this participant refills (see steal()).
        if (place < 0) place = nextPlace_.fetch_add(1, std::memory_order_relaxed);
        if (place < nRuns_) run(place, false);
        active_.fetch_sub(1, std::memory_order_relaxed);
    }

    //! The caller's own part: runs chunks, from the first run on, until none
    //! is left. The caller counts as one of the participants. `mayLeave`: a
    //! loop whose piece took kCallerLeavesAfterPiece or more is left to the
    //! pool's workers (see run()); returns true if the caller left it so,
    //! with work left in its place.
    bool process(bool mayLeave)
    {
        active_.fetch_add(1, std::memory_order_relaxed);
        const bool left = run(0, mayLeave);
        active_.fetch_sub(1, std::memory_order_relaxed);
        return left;
    }

    bool done() const { return remaining_.load(std::memory_order_acquire) == 0; }
    //! `t` is a ticket to this loop (see invite()).
    bool isTicket(const Task& t) const
    {
        const Ticket* k = t.inlineAs<Ticket>();
        return k && k->loop == this;
    }
    bool stopRequested() const { return interruptRequested() || ctx_.cancelled(); }
    Context& context() { return ctx_; }

    void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release()
    {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

protected:
    virtual void runRange(std::ptrdiff_t b, std::ptrdiff_t e) = 0;
    //! Called once, by whoever finishes the last iteration.
    virtual void onComplete() { sched_.notifyCompletion(this); }

    Scheduler& sched_;

private:
    //! The task that brings a thread into the loop. Trivially copyable, so it
    //! travels inline; discarding it (pool destroyed) releases the loop.
    struct Ticket {
        LoopBase* loop;
        int place;  //!< see participate()
        void operator()() const
        {
            loop->sched_.runWithin(&loop->ctx_, loop->counted_, [this] { loop->participate(place); });
            loop->release();
        }
        void discard() const { loop->release(); }
    };

    //! One participant's run of the range, [next, end): its owner claims
    //! pieces from the front, a thief takes the far half (the end moves),
    //! and the owner refills it when it is used up. Both ends change under
    //! the run's lock (a claim took one compare-and-swap on `next` before,
    //! and takes one exchange now); they are atomics so that a thief may
    //! look for the fullest run without it.
    struct alignas(64) Run : CacheLineAllocated {
        // Set by init() (no initializers: a loop over 2 items constructs its runs for every call).
        std::atomic<std::ptrdiff_t> next;
        std::atomic<std::ptrdiff_t> end;
        std::atomic<bool> locked;

        void init(std::ptrdiff_t from, std::ptrdiff_t to) noexcept
        {
            next.store(from, std::memory_order_relaxed);
            end.store(to, std::memory_order_relaxed);
            locked.store(false, std::memory_order_relaxed);
        }
        void lock() noexcept
        {
            if (!locked.exchange(true, std::memory_order_acquire)) return;
            lockContended();
        }
        [[gnu::noinline]] void lockContended() noexcept
        {
            do {
                while (locked.load(std::memory_order_relaxed)) Scheduler::cpuRelax();
            } while (locked.exchange(true, std::memory_order_acquire));
        }
        void unlock() noexcept { locked.store(false, std::memory_order_release); }
        std::ptrdiff_t left() const noexcept
        {
            return end.load(std::memory_order_relaxed) - next.load(std::memory_order_relaxed);
        }
    };
    static constexpr int kInlineRuns = 2;
    static constexpr std::ptrdiff_t kPiecesPerRun = 16;
    //! Without nBatches, pieces of at least 4 x kAlignment iterations end on
    //! a multiple of it (counted from index 0, as arrays are indexed): a range
    //! body then runs its vector loop on aligned elements, as OpenMP's static
    //! halves do. The first pieces (1, 8 iterations) had left every later
    //! piece starting at an index of 1 modulo 8: axpy over doubles took 14%
    //! longer, serially.
    static constexpr std::ptrdiff_t kAlignment = 64;
    static constexpr std::ptrdiff_t kAlignedRun = 16 * kAlignment;
    //! What a piece should take once its grain is known (see Grain).
    static constexpr std::chrono::microseconds kPieceTime{20};
    static constexpr std::ptrdiff_t kMaxGrowth = 64;
    //! The longest piece a participant takes from its own run, in grains
    //! (see claim()), once the grain holds kLongPieceGrain iterations or
    //! more. Costly iterations (a grain of a few) stay a grain a piece: a
    //! piece of 4 rows of a Kendall matrix in flight at the end could leave
    //! the other thread idle for 3 rows.
    static constexpr std::ptrdiff_t kLongPiece = 4;
    static constexpr std::ptrdiff_t kLongPieceGrain = 64;
    //! After growing, one full piece in kRetime is timed (see Grain).
    static constexpr int kRetime = 8;
    //! The piece after which R's main thread (the host's service thread)
    //! leaves a loop it called, with other participants, to the pool's
    //! workers and only waits, serving R (see blockingFor()): a piece that
    //! took a service period or more. Between shorter pieces it serves R
    //! anyway (output, progress, Ctrl-C: every kServicePeriod), so it stays
    //! in the loop, as oneTBB's and OpenMP's callers do: leaving after 200
    //! us, as it once did, moved the caller's share of every longer loop to
    //! a worker that was asleep (one more thread woken, the loop short of a
    //! participant until it came: 0.04-5.8 ms) and the body's allocations to
    //! that worker's glibc arena, where every free() looks its arena up
    //! (parallelDist's body at 2 threads, callgrind: 437.1 M instructions
    //! on two workers, oneTBB's original 433.5 M with R's main thread in
    //! the loop). Pieces that long are iterations that long (a grain is one
    //! iteration once an iteration takes kPieceTime): with them, R's main
    //! thread would answer R a piece late; a worker takes its place instead.
    static constexpr std::chrono::milliseconds kCallerLeavesAfterPiece{10};

    //! `i` rounded up to a multiple of kAlignment (negative indexes too;
    //! unchanged within kAlignment of the largest index, where it would overflow).
    static std::ptrdiff_t alignUp(std::ptrdiff_t i)
    {
        if (i > std::numeric_limits<std::ptrdiff_t>::max() - kAlignment) return i;
        std::ptrdiff_t r = i % kAlignment;
        if (r < 0) r += kAlignment;
        return r == 0 ? i : i + (kAlignment - r);
    }

    //! Takes a participant's place, if one is free.
    bool admit()
    {
        int a = active_.load(std::memory_order_relaxed);
        do {
            if (a >= maxParticipants_) return false;
        } while (!active_.compare_exchange_weak(a, a + 1, std::memory_order_relaxed));
        return true;
    }

    //! How a participant sizes its pieces: its grain, the iterations that
    //! take about kPieceTime, learnt from timed full pieces (only a full
    //! piece tells: one cut short, at a run's end or shrinking towards it,
    //! is quick for that reason; growing on such pieces had made the last
    //! pieces of a 1e6-iteration axpy 31 us long on one thread while the
    //! other had nothing left).
    struct Grain {
        std::ptrdiff_t size = 1;
        bool growing = true;  //!< not yet at kPieceTime: every full piece is timed
        int untimed = 0;      //!< full pieces run untimed since growing ended

        //! Whether to time the next piece (`full`: it has `size` iterations).
        //! Full pieces are timed while the grain grows, then one in kRetime
        //! (iterations may get cheaper along the range). A clock read costs
        //! ~35 ns here: after every piece it was 0.4% of a 1e6-iteration axpy.
        bool timeNext(bool full) { return full && (growing || ++untimed >= kRetime); }

        //! Long pieces from the participant's own run (see claim()): the
        //! grain is known and holds many iterations.
        bool settled() const { return !growing && size >= kLongPieceGrain; }

        //! From a full piece of `n` iterations that took `took`: the grain
        //! grows towards kPieceTime, by at most kMaxGrowth at a time (the
        //! first iterations may be cheaper than the later ones), and stops
        //! growing once a piece takes about kPieceTime; it halves when a piece
        //! timed later took more than twice that (iterations that get
        //! costlier along the range), at most, as one preempted piece says
        //! little. So indexes and clocks are touched rarely for cheap bodies
        //! (an axpy reaches its grain in 4 pieces; 7 when it grew by 8, then
        //! by 2), while expensive bodies are still cancelled between single
        //! iterations.
        void resize(std::ptrdiff_t n, std::chrono::nanoseconds took)
        {
            untimed = 0;
            // The first pieces of a cheap body grow without a division (the
            // same result as below): a loop over 2 items took 268-274 ns a
            // call with the division on its path, 246-254 without (P2's
            // loop, medians of 40 x 20,000).
            if (took.count() * kMaxGrowth <= std::chrono::nanoseconds(kPieceTime).count() && n == size &&
                size < (std::ptrdiff_t(1) << 34)) {
                size *= kMaxGrowth;
                growing = true;  // (a piece timed later may be this fast too)
                return;
            }
            const double fit = static_cast<double>(n) * static_cast<double>(std::chrono::nanoseconds(kPieceTime).count()) /
                               static_cast<double>(std::max<std::int64_t>(1, took.count()));
            const double g = static_cast<double>(size);
            // Less than a quarter more is not worth a change.
            growing = fit >= 1.25 * g && size < (std::ptrdiff_t(1) << 40);
            if (growing)
                size = static_cast<std::ptrdiff_t>(std::min(g * kMaxGrowth, fit));
            else if (fit < 0.5 * g)
                size = std::max<std::ptrdiff_t>(1, size / 2);
        }
    };

    //! Claims the next piece of the participant's own run `k`: [b, e).
    //! `grain`: iterations that take about kPieceTime; `settled`: its grain
    //! is settled (see Grain).
    [[gnu::always_inline]] bool claim(Run& k, std::ptrdiff_t grain, bool settled, std::ptrdiff_t& b, std::ptrdiff_t& e)
    {
        // Only its owner refills a run, and a thief only shortens it: seen
        // empty here, it is empty (the last claim of every run, unlocked).
        if (k.left() <= 0) return false;
        // Pieces shrink towards a run's end, so that participants finish
        // together, but not below a 32nd of `grain` (~0.6 us): smaller
        // pieces only add claims. The last piece may be up to 1.5 floors (a
        // 16th had ended an axpy loop on 2 threads with one idle for 3 us of
        // 105).
        const std::ptrdiff_t floor = std::max(minChunk_, grain / 32);
        // (One division per claim: a select between two had cost both.)
        const std::ptrdiff_t most = settled ? grain * kLongPiece : grain;
        const std::ptrdiff_t parts = settled ? maxParticipants_ : 2 * static_cast<std::ptrdiff_t>(maxParticipants_);
        k.lock();
        const std::ptrdiff_t cur = k.next.load(std::memory_order_relaxed);
        const std::ptrdiff_t left = k.end.load(std::memory_order_relaxed) - cur;
        if (left <= 0) {
            k.unlock();
            return false;
        }
        // Once the grain is known (and holds many iterations), a participant
        // takes half of what is left in its run, up to kLongPiece grains: a
        // thief still finds at least as much as the piece in flight. Each
        // piece costs a claim, a check and a call (and a clock read while
        // the grain grows): a 1e6-iteration axpy on 2 threads took 28 pieces
        // a thread, a grain or a quarter of what was left at a time, and
        // 1.007x OpenMP static's time; 14 pieces, 1.003x. While growing: a
        // grain, or a quarter of what is left on 2 threads.
        std::ptrdiff_t n = std::min(left, std::max(floor, std::min(most, left / parts)));
        if (minChunk_ == 1 && n >= 4 * kAlignment) n = std::min(left, alignUp(cur + n) - cur);
        // No piece much shorter than the floor (nor than nBatches allows) at a run's end.
        if (left - n < std::max(minChunk_, floor / 2)) n = left;
        k.next.store(cur + n, std::memory_order_relaxed);
        k.unlock();
        b = cur;
        e = cur + n;
        return true;
    }

    //! For participant `place`, whose run is used up: the far half of the
    //! run with the most left becomes its run, and its first piece is
    //! claimed into [b, e); a run with less than two `unit`s left is taken
    //! whole as that piece. False when no run has anything left (the end of
    //! every participant's part of the loop, inline; taking is not).
    [[gnu::always_inline]] bool steal(int place, const Grain& grain, std::ptrdiff_t& b, std::ptrdiff_t& e)
    {
        const int v = fullestRun();
        return v >= 0 && stealFrom(v, place, grain, b, e);
    }
    bool stealFrom(int v, int place, const Grain& grain, std::ptrdiff_t& b, std::ptrdiff_t& e)
    {
        Run* const all = runs();
        for (; v >= 0; v = fullestRun()) {
            const std::ptrdiff_t unit = std::max(minChunk_, grain.size / 32);  // claim()'s floor
            Run& victim = all[v];
            victim.lock();
            const std::ptrdiff_t cur = victim.next.load(std::memory_order_relaxed);
            const std::ptrdiff_t end = victim.end.load(std::memory_order_relaxed);
            if (cur >= end) {  // used up meanwhile
                victim.unlock();
                continue;
            }
            std::ptrdiff_t mid = cur;
            if (end - cur >= 2 * unit) {
                mid = end - (end - cur) / 2;  // the far half: both halves at least a unit
                if (minChunk_ == 1 && end - mid >= 4 * kAlignment) mid = alignUp(mid);
            }
            victim.end.store(mid, std::memory_order_relaxed);
            victim.unlock();
            if (mid == cur) {  // a last piece: run at once
                b = cur;
                e = end;
                return true;
            }
            Run& mine = all[place];
            mine.lock();
            mine.next.store(mid, std::memory_order_relaxed);
            mine.end.store(end, std::memory_order_relaxed);
            mine.unlock();
            if (claim(mine, grain.size, grain.settled(), b, e)) return true;
            // (taken by other thieves meanwhile: look again)
        }
        return false;
    }

    //! The run with the most iterations left, or -1 when all are used up.
    int fullestRun() const
    {
        int best = -1;
        std::ptrdiff_t most = 0;
        for (int k = 0; k < nRuns_; ++k) {
            const std::ptrdiff_t left = runs()[k].left();
            if (left > most) most = left, best = k;
        }
        return best;
    }

    //! Runs chunks of run `place`, refilling it from the others' (see
    //! steal()), until none is left, or, when `mayLeave`, until one of its
    //! pieces took kCallerLeavesAfterPiece (then returns true). Iterations done are
    //! counted once, at the end (remaining_ is shared by all participants:
    //! one atomic operation each, not one per chunk).
    bool run(int place, bool mayLeave)
    {
        const bool service = onServiceThread();
        Grain grain;
        std::ptrdiff_t finished = 0;
        auto lastService = std::chrono::steady_clock::now();
        auto t0 = lastService;
        const auto started = t0;
        bool t0IsNow = true;  // t0 was read after the last piece: the next one starts now
        OpenMpShare openmp;   // this participant's OpenMP regions, from its first piece
        Run& mine = runs()[place];
        std::ptrdiff_t b, e;
        while (claim(mine, grain.size, grain.settled(), b, e) || steal(place, grain, b, e)) {
            if (stopRequested()) {
                complete(finished + (e - b) + takeTheRest());
                return false;
            }
            if (!openmp.begun()) openmp.begin(maxParticipants_, started);
            // The service thread times every piece: it services the host by the clock.
            const bool full = e - b >= grain.size;
            const bool timed = service || grain.timeNext(full);
            if (timed && !t0IsNow) t0 = std::chrono::steady_clock::now();
            t0IsNow = false;
            const std::int64_t traced = traceId_ ? trace::now() : 0;
            try {
                runRange(b, e);
            } catch (...) {
                ctx_.fail(std::current_exception());
            }
            if (traced) trace::record(trace::kChunk, traceId_, traced);
            finished += e - b;
            if (!timed) continue;
            // The piece that used up its run sizes no next piece there: no
            // clock (half the clock reads of a loop over 2 items, and they
            // took a third of a nested loop's time in perf).
            if (mine.left() <= 0 && !service) continue;
            const auto t1 = std::chrono::steady_clock::now();
            const auto piece = t1 - t0;
            if (full) grain.resize(e - b, piece);
            t0 = t1;
            t0IsNow = true;
            if (service && (t1 - lastService >= Scheduler::kServicePeriod || serviceRequested())) {
                hostHooks().service();
                lastService = t0 = std::chrono::steady_clock::now();
            }
            // (Timed: `mayLeave` is the service thread's, which times every piece.)
            if (mayLeave && piece >= kCallerLeavesAfterPiece && fullestRun() >= 0) {
                complete(finished);
                return true;
            }
        }
        complete(finished);
        return false;
    }

    //! Takes every iteration nobody has claimed, so that nobody starts it;
    //! returns how many. (A half in a thief's hands, not yet its run's, is
    //! taken when the thief claims its first piece: it checks first.)
    std::ptrdiff_t takeTheRest()
    {
        std::ptrdiff_t taken = 0;
        for (int k = 0; k < nRuns_; ++k) {
            Run& r = runs()[k];
            r.lock();
            const std::ptrdiff_t end = r.end.load(std::memory_order_relaxed);
            taken += std::max<std::ptrdiff_t>(0, end - r.next.load(std::memory_order_relaxed));
            r.next.store(end, std::memory_order_relaxed);
            r.unlock();
        }
        return taken;
    }

    Run* runs() { return heapRuns_ ? heapRuns_.get() : inlineRuns_; }
    const Run* runs() const { return heapRuns_ ? heapRuns_.get() : inlineRuns_; }

    void complete(std::ptrdiff_t n)
    {
        if (n > 0 && remaining_.fetch_sub(n, std::memory_order_acq_rel) == n) onComplete();
    }

    Context* const counted_;
    Context ctx_;  // errors and cancellation of this loop (child of the caller's)
    std::atomic<int> refs_{1};
    std::atomic<std::ptrdiff_t> remaining_;
    std::atomic<int> nextPlace_{0};  // the place (run) of the next ticket
    alignas(64) std::atomic<int> active_{0};
    const int maxParticipants_;
    const std::ptrdiff_t minChunk_;
    const std::ptrdiff_t pieces_;  // ceil((end - begin) / minChunk_)
    const int nRuns_;  // one a participant
    // The loop's number in a timeline being recorded, else 0: read per
    // piece (a field beside the others), not the global flag.
    const std::uint64_t traceId_ = trace::loopId();
    std::unique_ptr<Run[]> heapRuns_;  // only for more than kInlineRuns
    Run inlineRuns_[kInlineRuns];
};

//! A loop calling `f(b, e)` for each chunk [b, e) it is cut into (a range
//! body), or `f(i)` for each index.
template <class F>
class IndexLoop : public LoopBase {
public:
    template <class G>
    IndexLoop(G&& f, Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t maxParticipants,
              std::size_t nBatches, Context* parent, Context* counted)
        : LoopBase(s, begin, end, maxParticipants, nBatches, parent, counted), f_(std::forward<G>(f))
    {}

protected:
    void runRange(std::ptrdiff_t b, std::ptrdiff_t e) override { runChunk(f_, b, e); }

private:
    F f_;
};

//! A loop that nobody blocks on (ThreadPool::parallelFor): it counts as one
//! unit in the context of whoever started it and reports its error there.
template <class F>
class DetachedLoop final : public IndexLoop<F> {
public:
    template <class G>
    DetachedLoop(G&& f, Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, std::size_t nBatches, Context* owner)
        : IndexLoop<F>(std::forward<G>(f), s, begin, end, s.inlineMode() ? 1 : s.numWorkers(), nBatches, owner,
                       owner),
          owner_(owner)
    {}

protected:
    void onComplete() override
    {
        if (this->context().hasError()) owner_->fail(this->context().takeError());
        this->sched_.finish(owner_);
    }

private:
    Context* owner_;
};

//! Ends a blocking call: on the host's service thread, lets the host finish
//! (release output) and turns a pending interrupt into UserInterruptException,
//! clearing it; otherwise rethrows `error`, if any. `service`: the calling
//! thread is the service thread (onServiceThread(), known to the caller).
inline void endBlockingCall(std::exception_ptr error, bool service)
{
    if (service) {
        if (auto after = hostHooks().afterBlockingCall) after();
        if (interruptRequested()) {
            interruptFlag().store(false, std::memory_order_relaxed);
            std::rethrow_exception(interruptError());
        }
    }
    if (error) std::rethrow_exception(error);
}
//! The same, for a caller that has not asked onServiceThread().
inline void endBlockingCall(std::exception_ptr error) { endBlockingCall(std::move(error), onServiceThread()); }

//! Runs `f(i)` for i in [begin, end) (or `f(b, e)` for the chunks [b, e)
//! the range is cut into: see isRangeBody) on the calling thread and up to
//! `nThreads - 1` workers of `s`, and returns when all iterations are done.
//! Rethrows the first exception of `f`; throws UserInterruptException when
//! the host reported an interrupt.
template <class F>
void blockingFor(Scheduler& s, std::ptrdiff_t begin, std::ptrdiff_t end, F& f, std::size_t nThreads,
                 std::size_t nBatches)
{
    if (end <= begin) return endBlockingCall(nullptr);
    const std::size_t participants = std::max<std::size_t>(1, std::min(nThreads, s.concurrency()));
    // R's main thread leaves a long loop to the other participants (see kCallerLeavesAfterPiece).
    const bool mayLeave = participants > 1 && !s.inlineMode() && s.isServiceThread();
    // Iterations on workers push as the caller would (its own iterations do).
    Context* counted = participants > 1 || mayLeave ? s.contextForNewWork() : nullptr;
    auto* loop = new IndexLoop<F&>(f, s, begin, end, participants, nBatches, Scheduler::enclosingContext(), counted);
    struct Releaser {
        LoopBase* l;
        ~Releaser() { l->release(); }
    } releaser{loop};
    // A caller from outside the pool takes a worker's place (see
    // Scheduler::outsideJoins()) before the tickets are queued: a ticket
    // queued first could wake the worker that is about to stand aside, for
    // nothing (a futex wake-up and a context switch; it happened in most
    // loops on a loaded machine, whenever the other worker had not yet gone
    // back to its search after the previous loop).
    struct OutsideParticipation {
        Scheduler* s;
        void leave()
        {
            if (s) std::exchange(s, nullptr)->outsideLeaves();
        }
        ~OutsideParticipation() { leave(); }
    } outside{s.isOwnWorker() ? nullptr : &s};
    if (outside.s) s.outsideJoins();
    loop->invite(true);
    const auto done = [&] { return loop->done(); };
    if (loop->process(mayLeave)) {
        // Left to the workers: the worker that stood aside for the caller
        // (if one did) may take its place now.
        outside.leave();
        loop->inviteForCallersPlace();
        // The caller waits, serving R. If nobody took its place meanwhile
        // (every worker busy elsewhere, or the pool paused), it takes its
        // place back and runs to the end, as before it left.
        while (!s.waitUntil(static_cast<LoopBase*>(loop), done,
                            std::chrono::steady_clock::now() + Scheduler::kServicePeriod * 2)) {
            bool tookBack = false;
            s.withdraw([&](const Task& t) { return loop->isTicket(t) && (tookBack = true); });
            if (!tookBack) continue;
            loop->process(false);
            break;
        }
    } else {
        // No chunk is left: tickets still queued would bring a thread for nothing.
        s.withdraw([loop](const Task& t) { return loop->isTicket(t); });
        outside.leave();
    }
    s.waitUntil(static_cast<LoopBase*>(loop), done);
    endBlockingCall(loop->context().hasError() ? loop->context().takeError() : nullptr);
    if (interruptRequested()) std::rethrow_exception(interruptError());  // cut short on a nested level
}

}  // namespace engine
}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
