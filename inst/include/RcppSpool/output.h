// Rcout and Rcerr: printing from any thread.
#pragma once

#include "abi.h"

#include <ostream>
#include <streambuf>
#include <string>

#include "client/host_calls.h"
#include "engine/thread_local_object.h"
#include "host/stream.h"

namespace RcppSpool {
inline namespace RCPPSPOOL_ABI {

//! A stream that may be written from any thread, like std::cout.
//!
//! Each thread assembles its own text, so a line built by several `<<` on one
//! thread arrives whole. In R, text of threads other than R's main thread is
//! queued line by line and released by the main thread: while it waits, when
//! a blocking call returns (by error too), and whenever it writes itself, even
//! `Rcout << ""`; lines of other threads never split a line the main thread
//! has begun. A thread's partial line is handed over at its newline (or
//! carriage return) or at std::flush / std::endl, however long it is.
//! Rcerr writes to the error stream (REprintf in R), never to stdout.
class RPrinter {
public:
    //! A stream to `s` (out or err): the library defines Rcout and Rcerr, use those.
    explicit constexpr RPrinter(host::Stream s) noexcept : stream_(s) {}

    template <class T>
    RPrinter& operator<<(const T& value)
    {
        if (Format* f = format()) {
            f->stream << value;
            f->handOver(stream_, table::kWritePiece);
        } else {
            Format late;  // the thread ends, its Formats are gone (see format())
            late.stream << value;
            late.handOver(stream_, table::kWritePiece);
        }
        return *this;
    }

    //! Manipulators: std::endl, std::flush, std::setw, ...
    RPrinter& operator<<(std::ostream& (*manip)(std::ostream&))
    {
        const bool flush = manip == static_cast<std::ostream& (*)(std::ostream&)>(std::flush) ||
                           manip == static_cast<std::ostream& (*)(std::ostream&)>(std::endl);
        if (Format* f = format()) {
            manip(f->stream);
            f->handOver(stream_, flush ? table::kWriteFlush : table::kWritePiece);
        } else {
            Format late;
            manip(late.stream);
            late.handOver(stream_, flush ? table::kWriteFlush : table::kWritePiece);
        }
        return *this;
    }

    //! Hands over the calling thread's unfinished line, if any (as a flush
    //! would). Thread calls it when its function returns, so that text
    //! without a final newline is not lost with the thread.
    void flushThisThread() const { client::writeText(stream_, "", 0, table::kWriteFlush); }

private:
    //! The characters of one `<<`, handed over from where they were written
    //! (a std::ostringstream would copy them out with str(), and the runtime
    //! copies them again); the string keeps its capacity for the next `<<`.
    class Piece : public std::streambuf {
    public:
        const std::string& text() const noexcept { return text_; }
        void clear() noexcept { text_.clear(); }

    protected:
        int_type overflow(int_type c) override
        {
            if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
            text_.push_back(traits_type::to_char_type(c));
            return c;
        }
        std::streamsize xsputn(const char* s, std::streamsize n) override
        {
            text_.append(s, static_cast<std::size_t>(n));
            return n;
        }

    private:
        std::string text_;
    };

    // Formats one `<<` at a time, per thread and stream; the stream keeps its
    // flags, widths and precision across them. The lines themselves are the
    // runtime's (ApiTable::write): only the formatting is this file's code.
    struct Format {
        Piece piece;
        std::ostream stream{&piece};
        void handOver(host::Stream s, int kind)
        {
            client::writeText(s, piece.text().data(), piece.text().size(), kind);
            piece.clear();
        }
    };
    struct Formats {
        Format out, err;
        ~Formats() { engine::runtime::threadLocalEnded<Formats>(); }
    };
    //! The calling thread's Format for this stream. While the thread ends, a
    //! thread_local destroyed after its Formats (a user's object whose
    //! destructor prints) gets a second one (engine/thread_local_object.h);
    //! it had used the destroyed stream and lost the text. Null after that:
    //! each `<<` is formatted on its own.
    RCPPSPOOL_HIDDEN Format* format() const
    {
        Formats* mine = engine::runtime::lastingThreadLocal<Formats>();
        if (!mine) return nullptr;
        return stream_ == host::Stream::out ? &mine->out : &mine->err;
    }

    host::Stream stream_;
};

//! RcppThread's name for the type of Rcerr (the same type here).
using RErrPrinter = RPrinter;

#ifndef RCPPSPOOL_RCOUT_DEFINED
#define RCPPSPOOL_RCOUT_DEFINED
//! Like std::cout (Rprintf in R), usable from any thread.
RCPPSPOOL_HIDDEN inline RPrinter Rcout(host::Stream::out);
//! Like std::cerr (REprintf in R), usable from any thread.
RCPPSPOOL_HIDDEN inline RPrinter Rcerr(host::Stream::err);
#endif

}  // namespace RCPPSPOOL_ABI
}  // namespace RcppSpool
