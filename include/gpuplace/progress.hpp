#pragma once
/// \file progress.hpp
/// A progress line for long runs: "<what>: done / total (percent), elapsed, ETA" on a stream
/// (stderr for the programs), shown only once the work has taken a while, so that short runs print
/// nothing; on a terminal redrawn in place, elsewhere a line every few seconds. evaluate()'s
/// progress callback can feed it.

#include "detail/progress.hpp"

namespace gpuplace {

/// progress_line line(stderr, "episodes"); line(done, total) after each unit of work (see
/// detail/progress.hpp for the first-line delay and the interval between lines).
using detail::progress_line;

}  // namespace gpuplace
