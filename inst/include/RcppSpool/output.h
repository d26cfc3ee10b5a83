// Rcout and Rcerr: printing from any thread.
#pragma once

#include <ostream>
#include <sstream>
#include <string>

#ifdef RCPPSPOOL_STANDALONE
#include "host/standalone.h"
#else
#include "host/r_host.h"
#endif

namespace RcppSpool {

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
    explicit constexpr RPrinter(host::Stream s) noexcept : stream_(s) {}

    template <class T>
    RPrinter& operator<<(const T& value)
    {
        std::ostringstream& os = buffer();
        os << value;
        commit(false);
        return *this;
    }

    //! Manipulators: std::endl, std::flush, std::setw, ...
    RPrinter& operator<<(std::ostream& (*manip)(std::ostream&))
    {
        std::ostringstream& os = buffer();
        manip(os);
        commit(manip == static_cast<std::ostream& (*)(std::ostream&)>(std::flush) ||
               manip == static_cast<std::ostream& (*)(std::ostream&)>(std::endl));
        return *this;
    }

private:
    std::ostringstream& buffer() const
    {
        static thread_local std::ostringstream out, err;
        return stream_ == host::Stream::out ? out : err;
    }

    // R's main thread writes at once (the host keeps other threads' lines out
    // of its unfinished line). Other threads hand over what is complete: up to
    // the last newline or carriage return, or everything when flushing.
    void commit(bool flush) const
    {
        std::ostringstream& os = buffer();
        std::string text = os.str();
        if (host::isOutputThread()) {
            os.str(std::string());
            host::writeFromMain(stream_, text);
            return;
        }
        if (text.empty()) return;
        std::size_t cut = flush ? text.size() : text.find_last_of("\r\n");
        if (cut == std::string::npos) return;
        if (cut != text.size()) ++cut;  // keep the line end with its line
        host::deliverLines(stream_, text.substr(0, cut));
        os.str(text.substr(cut));
        os.seekp(0, std::ios_base::end);
    }

    host::Stream stream_;
};

//! RcppThread's name for the type of Rcerr (the same type here).
using RErrPrinter = RPrinter;

#ifndef RCPPSPOOL_RCOUT_DEFINED
#define RCPPSPOOL_RCOUT_DEFINED
//! Like std::cout (Rprintf in R), usable from any thread.
inline RPrinter Rcout(host::Stream::out);
//! Like std::cerr (REprintf in R), usable from any thread.
inline RPrinter Rcerr(host::Stream::err);
#endif

}  // namespace RcppSpool
