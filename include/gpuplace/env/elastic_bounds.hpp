#pragma once
/// \file env/elastic_bounds.hpp
/// Elastic jobs of the round front end (env/round_front.hpp, docs/rounds.md "Elastic jobs"): per
/// job of an episode the GPU counts a round policy may grant it, [lo, hi] (lo = hi = its request
/// unless it is elastic), and an elastic job's throughput at each of them on each GPU type.
///
/// Where the bounds come from: the declared job fields min_gpus / max_gpus (job_fields.hpp; either
/// one left out, or 0, is the request), else rounds.elastic.share draws the job elastic (a stream of the
/// episode's seed of its own, so the workload's draws are unchanged) with bounds
/// max(1, floor(request x min_scale)) and ceil(request x max_scale). Then, so that a throughput is
/// never extrapolated past the zoo's measurements: hi is capped at the largest GPU count the model
/// is measured at on every type of the cluster (and at the GPUs of the cluster's largest type), lo
/// raised to the smallest measured count; a job's own request always stays allowed. capped() counts
/// the jobs whose hi was lowered by the cap.
///
/// Throughput at k GPUs is the scheduling core's ideal step time at k (the comm model calibrated
/// to the zoo's ModelProfile::at(k): at a measured count the measurement, between two measured
/// counts a and b the per-GPU throughput interpolated linearly, T(k) = k ((1 - x) T(a) / a +
/// x T(b) / b) with x = (k - a) / (b - a)).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "../detail/rng.hpp"
#include "../error.hpp"
#include "../job_fields.hpp"
#include "../round_config.hpp"

namespace gpuplace::env_detail {

class elastic_bounds {
public:
    /// Fills the bounds of core's episode (core.begin_episode() has run) from its declared fields
    /// and rc's share. ConfigError naming the job for a declared bound that is not a whole number
    /// of GPUs >= 1, a min_gpus above the request or a max_gpus below it.
    template <class Core>
    void begin(const Core& core, const elastic_config& rc, std::uint64_t seed) {
        const auto& sim = core.simulator();
        const auto& cfg = core.config();
        const std::size_t n = sim.jobs().size();
        lo_.resize(n);
        hi_.resize(n);
        capped_ = 0;
        elastic_ = 0;
        const auto& ex = core.extras();
        const std::size_t fmin = field_index(cfg.job_fields, "min_gpus"), fmax = field_index(cfg.job_fields, "max_gpus");
        const auto& types = core.gpu_types();
        const std::size_t T = types.typed() ? types.num_types() : 1;
        std::uint32_t largest_type = 0;
        for (std::size_t t = 0; t < T; ++t)
            largest_type = std::max(largest_type, static_cast<std::uint32_t>(types.typed() ? types.count(t) : core.num_gpus()));
        detail::rng r(detail::mix_seed(seed, 0x656c6173746963ULL));  // "elastic"
        for (std::uint32_t j = 0; j < n; ++j) {
            const auto& job = sim.job(j);
            const std::uint32_t req = job.num_gpus;
            double dlo = NAN, dhi = NAN;
            if (ex.width && fmin != npos) dlo = ex.fields[j * ex.width + fmin];
            if (ex.width && fmax != npos) dhi = ex.fields[j * ex.width + fmax];
            if (dlo == 0) dlo = NAN;  // 0 (a field's default, say): the request
            if (dhi == 0) dhi = NAN;
            std::uint32_t lo = req, hi = req;
            if (dlo == dlo || dhi == dhi) {
                if (dlo == dlo) lo = whole(dlo, j, "min_gpus");
                if (dhi == dhi) hi = whole(dhi, j, "max_gpus");
                if (lo > req) fail(j, "min_gpus " + std::to_string(lo) + " is above its request of " + std::to_string(req) + " GPUs");
                if (hi < req) fail(j, "max_gpus " + std::to_string(hi) + " is below its request of " + std::to_string(req) + " GPUs");
            } else if (rc.share > 0 && r.uniform() < rc.share) {
                lo = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::floor(req * rc.min_scale)));
                hi = static_cast<std::uint32_t>(std::min(1e6, std::ceil(req * rc.max_scale)));
            }
            if (lo != hi) {
                std::uint32_t measured_max = largest_type, measured_min = 1;
                for (std::size_t t = 0; t < T; ++t) {
                    const auto& p = (types.typed() ? types.zoo_of(t) : core.zoo())[job.model];
                    measured_max = std::min(measured_max, p.max_measured_gpus());
                    measured_min = std::max(measured_min, p.points.front().gpus);
                }
                if (hi > std::max(req, measured_max)) {
                    hi = std::max(req, measured_max);
                    ++capped_;
                }
                lo = std::min(req, std::max(lo, measured_min));
            }
            lo_[j] = lo;
            hi_[j] = hi;
            elastic_ += lo != hi;
        }
        // the throughput tables of the elastic jobs: per type, per count lo..hi
        off_.assign(n, 0);
        table_.clear();
        for (std::uint32_t j = 0; j < n; ++j) {
            if (lo_[j] == hi_[j]) continue;
            off_[j] = static_cast<std::uint32_t>(table_.size());
            for (std::size_t t = 0; t < T; ++t)
                for (auto k = lo_[j]; k <= hi_[j]; ++k) table_.push_back(1.0 / core.ideal_step_time_on(j, t, k));
        }
    }

    [[nodiscard]] std::uint32_t lo(std::uint32_t j) const noexcept { return lo_[j]; }
    [[nodiscard]] std::uint32_t hi(std::uint32_t j) const noexcept { return hi_[j]; }
    [[nodiscard]] const std::vector<std::uint32_t>& his() const noexcept { return hi_; }
    /// Elastic job j's throughputs: from table()[offset(j)], per type, per count lo..hi.
    [[nodiscard]] std::uint32_t offset(std::uint32_t j) const noexcept { return off_[j]; }
    [[nodiscard]] const std::vector<double>& table() const noexcept { return table_; }
    /// Elastic jobs of the episode, and how many of them had their upper bound capped.
    [[nodiscard]] std::size_t elastic() const noexcept { return elastic_; }
    [[nodiscard]] std::size_t capped() const noexcept { return capped_; }

private:
    static constexpr std::size_t npos = std::string_view::npos;
    [[noreturn]] static void fail(std::uint32_t j, const std::string& what) {
        throw ConfigError("job " + std::to_string(j) + " (in submit order): " + what + " (job fields min_gpus / max_gpus, docs/rounds.md)");
    }
    static std::uint32_t whole(double v, std::uint32_t j, const char* name) {
        if (!(v >= 1 && v <= 1e6 && v == std::floor(v)))
            fail(j, std::string(name) + " " + std::to_string(v) + ": expected a whole number of GPUs >= 1");
        return static_cast<std::uint32_t>(v);
    }

    std::vector<std::uint32_t> lo_, hi_, off_;
    std::vector<double> table_;
    std::size_t elastic_ = 0, capped_ = 0;
};

}  // namespace gpuplace::env_detail
