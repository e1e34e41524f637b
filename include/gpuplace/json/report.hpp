#pragma once
/// \file json/report.hpp
/// JSON form of results: to_json() of an episode's metrics (gpuplace/metrics.hpp) and of an
/// evaluation report (gpuplace/eval_report.hpp).

#include "../compiled.hpp"
#include "../evaluate.hpp"
#include "../metrics.hpp"
#include "parse.hpp"

namespace gpuplace {

[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const metrics& m);

/// Per policy, mean and standard error of each metric plus the per-seed metrics.
[[nodiscard]] GPUPLACE_INLINE detail::json to_json(const eval_report& r);

}  // namespace gpuplace

#ifndef GPUPLACE_COMPILED
#include "impl/report_inl.hpp"  // the definitions (compiled once into gpuplace::compiled otherwise)
#endif
