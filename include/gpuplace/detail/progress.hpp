#pragma once
/// \file detail/progress.hpp
/// A progress line for long runs: "<what>: done / total (percent), elapsed, ETA" on a stream
/// (stderr for the programs), shown only once the work has taken a while, so that short runs
/// print nothing. On a terminal the line is redrawn in place (at most 5 times a second) from
/// `after_seconds` on; elsewhere (a log file, a pipe) a line is written every `line_seconds`. The
/// last report (done == total) ends the line.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

namespace gpuplace::detail {

class progress_line {
public:
    explicit progress_line(std::FILE* out, std::string what, double after_seconds = 2.0, double line_seconds = 10.0)
        : out_(out), what_(std::move(what)), tty_(is_terminal(out)), after_(tty_ ? after_seconds : line_seconds),
          every_(tty_ ? 0.2 : line_seconds), start_(clock::now()) {}
    progress_line(const progress_line&) = delete;
    progress_line& operator=(const progress_line&) = delete;
    /// Ends a line drawn in place that did not reach its total.
    ~progress_line() {
        if (drawn_ && tty_) std::fputc('\n', out_);
    }

    /// `done` of `total` units of work are finished (not thread-safe: the caller serialises).
    void operator()(std::size_t done, std::size_t total) {
        const double t = seconds(clock::now() - start_);
        const bool last = done >= total;
        if (t < after_ || (!last && drawn_ && t - last_ < every_)) return;
        last_ = t;
        drawn_ = true;
        char eta[32] = "";
        if (!last && done > 0) std::snprintf(eta, sizeof eta, ", ETA %.0f s", t / double(done) * double(total - done));
        std::fprintf(out_, "%s%s: %zu / %zu (%.0f%%), %.0f s%s%s", tty_ ? "\r" : "", what_.c_str(), done, total,
                     total ? 100.0 * double(done) / double(total) : 100.0, t, eta, tty_ ? "\033[K" : "\n");
        if (last && tty_) {
            std::fputc('\n', out_);
            drawn_ = false;
        }
        std::fflush(out_);
    }

private:
    using clock = std::chrono::steady_clock;
    [[nodiscard]] static double seconds(clock::duration d) noexcept { return std::chrono::duration<double>(d).count(); }
    [[nodiscard]] static bool is_terminal(std::FILE* f) noexcept {
#if defined(_WIN32)
        return _isatty(_fileno(f)) != 0;
#else
        return isatty(fileno(f)) != 0;
#endif
    }

    std::FILE* out_;
    std::string what_;
    bool tty_;
    double after_, every_;  ///< the first report, and between two (seconds)
    clock::time_point start_;
    double last_ = 0;
    bool drawn_ = false;
};

}  // namespace gpuplace::detail
