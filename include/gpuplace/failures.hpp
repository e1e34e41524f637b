#pragma once
/// \file failures.hpp
/// Hardware failures and checkpoints (a scenario's "failures" key; off by default): the
/// configuration, Young/Daly's checkpoint interval, and the failure process, a renewal process
/// per failing unit (a node, or a GPU) that alternates a lifetime (exponential or Weibull, of mean
/// MTBF) and a repair (exponential, of mean repair time). The scheduling core (env/core.hpp) stops
/// the jobs on a unit that fails, each losing its progress since its last checkpoint, and keeps
/// the unit's GPUs out of every mask until it is repaired (docs/realities.md).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detail/enum_names.hpp"
#include "detail/rng.hpp"
#include "error.hpp"
#include "hierarchy.hpp"

namespace gpuplace {

namespace detail {
/// `v` as a message shows it ("30", "0.5", "nan", "-1").
[[nodiscard]] inline std::string failure_number(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}
}  // namespace detail

/// What fails as one: a node (level 1 of the hierarchy: every GPU of it) or a single GPU.
enum class failure_scope : std::uint8_t { node, gpu };
/// The distribution of a unit's time between failures.
enum class failure_distribution : std::uint8_t { exponential, weibull };

template <>
struct detail::enum_names<failure_scope> {
    static constexpr std::array<std::pair<failure_scope, std::string_view>, 2> values{
        {{failure_scope::node, "node"}, {failure_scope::gpu, "gpu"}}};
};
template <>
struct detail::enum_names<failure_distribution> {
    static constexpr std::array<std::pair<failure_distribution, std::string_view>, 2> values{
        {{failure_distribution::exponential, "exponential"}, {failure_distribution::weibull, "weibull"}}};
};
[[nodiscard]] inline std::string_view to_string(failure_scope s) noexcept { return detail::enum_name(s); }
[[nodiscard]] inline std::string_view to_string(failure_distribution d) noexcept { return detail::enum_name(d); }

/// A scenario's failures (key "failures"). The defaults: Llama 3's pre-training reported 419
/// unexpected interruptions in 54 days on 16,384 GPUs (2,048 nodes of 8), one per 6,334 node-hours
/// (Dubey et al., "The Llama 3 Herd of Models", 2024); docs/realities.md gives the other sources.
struct failures_config {
    bool enabled = false;
    failure_scope scope = failure_scope::node;
    double mtbf_hours = 6334.0;  ///< mean time between failures of one unit (a node, or a GPU with scope gpu)
    double repair_hours = 4.0;   ///< mean time a failed unit stays out of service (exponential)
    failure_distribution distribution = failure_distribution::exponential;
    double shape = 1.0;               ///< Weibull's shape k (< 1: failures cluster early in a unit's life)
    double restart_overhead = 30.0;   ///< seconds a job restarted after a failure holds its GPUs before progressing
    double checkpoint_interval = 1800.0;  ///< seconds of a run between checkpoints (0: no progress is ever lost)
    bool young_daly = false;          ///< the interval of each run is Young/Daly's (checkpoint_interval unused)
    double checkpoint_cost = 0.0;     ///< seconds a checkpoint takes (the run makes no progress meanwhile)
    friend bool operator==(const failures_config&, const failures_config&) = default;
};

/// Checks a failures configuration: ConfigError naming `path`'s key and the value.
inline void check_failures(const failures_config& f, std::string_view path = "/failures") {
    const auto bad = [&](const char* key, double v, const char* want) {
        throw ConfigError("config " + std::string(path) + "/" + key + ": " + want + " (got " + detail::failure_number(v) + ")");
    };
    if (!(f.mtbf_hours > 0) || !std::isfinite(f.mtbf_hours)) bad("mtbf_hours", f.mtbf_hours, "must be a finite number > 0");
    if (!(f.repair_hours >= 0) || !std::isfinite(f.repair_hours)) bad("repair_hours", f.repair_hours, "must be a finite number >= 0");
    if (!(f.shape > 0) || !(f.shape <= 100)) bad("shape", f.shape, "must be in (0, 100]");
    if (!(f.restart_overhead >= 0) || !(f.restart_overhead <= 1e7)) bad("restart_overhead", f.restart_overhead, "must be in [0, 1e7]");
    if (!(f.checkpoint_interval >= 0) || !(f.checkpoint_interval <= 1e9))
        bad("checkpoint_interval", f.checkpoint_interval, "must be in [0, 1e9]");
    if (!(f.checkpoint_cost >= 0) || !(f.checkpoint_cost <= 1e7)) bad("checkpoint_cost", f.checkpoint_cost, "must be in [0, 1e7]");
    if (f.young_daly && !(f.checkpoint_cost > 0))
        throw ConfigError("config " + std::string(path) + "/checkpoint_interval: \"young_daly\" needs a checkpoint_cost > 0 (got " +
                          detail::failure_number(f.checkpoint_cost) + ")");
}

/// Young/Daly's first-order optimal checkpoint interval sqrt(2 x cost x M) (Young, CACM 1974; Daly,
/// FGCS 2006), seconds, for a job whose mean time to interruption M is the unit MTBF over the
/// `units` units it spans.
[[nodiscard]] inline double young_daly_interval(double cost_s, double unit_mtbf_s, std::size_t units) noexcept {
    return std::sqrt(2.0 * cost_s * unit_mtbf_s / double(std::max<std::size_t>(units, 1)));
}

/// The failure process of a cluster: per unit, up until its next failure, then down until its
/// repair. Seeded by its own stream of the episode's seed; reseed() redraws what a forked future
/// does not know (every up unit's residual lifetime, given its age).
class failure_process {
public:
    static constexpr double never = std::numeric_limits<double>::infinity();
    /// One event: a unit failed (`failure`) or was repaired, at `time`.
    struct event {
        std::uint32_t unit = 0;
        bool failure = false;
        double time = 0;
    };

    /// Sizes the process for a hierarchy (allocates).
    void init(const failures_config& f, const level_hierarchy& h) {
        check_failures(f);
        f_ = f;
        const std::size_t G = h.num_gpus();
        ids_.resize(G);
        for (std::size_t g = 0; g < G; ++g) ids_[g] = static_cast<gpu_id>(g);
        first_.clear();
        if (f.scope == failure_scope::node && h.num_levels() > 1)
            for (std::size_t d = 0; d <= h.num_domains(1); ++d) first_.push_back(d < h.num_domains(1) ? h.first(1, d) : h.end(1, d - 1));
        else
            for (std::size_t g = 0; g <= G; ++g) first_.push_back(static_cast<gpu_id>(g));
        const std::size_t U = first_.size() - 1;
        next_.assign(U, never);
        since_.assign(U, 0.0);
        last_failure_.assign(U, -never);
        down_.assign(U, 0);
        of_gpu_.resize(G);
        for (std::size_t u = 0; u < U; ++u)
            for (auto g = first_[u]; g < first_[u + 1]; ++g) of_gpu_[g] = static_cast<std::uint32_t>(u);
        const double k = f.distribution == failure_distribution::weibull ? f.shape : 1.0;
        scale_ = f.mtbf_hours * 3600.0 / std::tgamma(1.0 + 1.0 / k);
    }

    /// Starts an episode at time `now`: every unit up, its first lifetime drawn from `seed`.
    void reset(std::uint64_t seed, double now) noexcept {
        rng_.seed(detail::mix_seed(seed, 0x6661696c75726573ULL));  // "failures"
        failures_ = 0;
        for (std::size_t u = 0; u < units(); ++u) {
            down_[u] = 0;
            since_[u] = now;
            last_failure_[u] = -never;
            next_[u] = now + lifetime();
        }
        find_next();
    }
    /// A forked future: every up unit's next failure redrawn from `seed`, given its age (the
    /// repairs under way stay as they are).
    void reseed(std::uint64_t seed, double now) noexcept {
        rng_.seed(detail::mix_seed(seed, 0x666f726b6661696cULL));  // "forkfail"
        for (std::size_t u = 0; u < units(); ++u)
            if (!down_[u]) next_[u] = now + residual(std::max(0.0, now - since_[u]));
        find_next();
    }

    /// When the next failure or repair happens.
    [[nodiscard]] double next_time() const noexcept { return next_time_; }
    /// Takes the next event out: a failing unit goes down until its repair, a repaired one comes
    /// up with a new lifetime. O(units).
    event pop() noexcept {
        const auto u = next_unit_;
        event e{u, !down_[u], next_[u]};
        if (e.failure) {
            down_[u] = 1;
            last_failure_[u] = e.time;
            ++failures_;
            next_[u] = e.time + (f_.repair_hours > 0 ? rng_.exponential(1.0 / (f_.repair_hours * 3600.0)) : 0.0);
        } else {
            down_[u] = 0;
            since_[u] = e.time;
            next_[u] = e.time + lifetime();
        }
        find_next();
        return e;
    }

    [[nodiscard]] const failures_config& config() const noexcept { return f_; }
    [[nodiscard]] std::size_t units() const noexcept { return next_.size(); }
    /// The GPUs of unit u (consecutive ids).
    [[nodiscard]] std::span<const gpu_id> gpus(std::uint32_t u) const noexcept {
        return std::span<const gpu_id>(ids_).subspan(first_[u], first_[u + 1] - first_[u]);
    }
    /// The unit GPU g belongs to.
    [[nodiscard]] std::uint32_t unit_of(gpu_id g) const noexcept { return of_gpu_[g]; }
    [[nodiscard]] bool is_down(std::uint32_t u) const noexcept { return down_[u] != 0; }
    /// When unit u fails next (up) or is repaired (down).
    [[nodiscard]] double next_of(std::uint32_t u) const noexcept { return next_[u]; }
    [[nodiscard]] bool any_down() const noexcept { return down_count_ > 0; }
    /// When unit u last failed (minus infinity: never in this episode).
    [[nodiscard]] double last_failure(std::uint32_t u) const noexcept { return last_failure_[u]; }
    /// Failures so far in the episode.
    [[nodiscard]] std::size_t failures() const noexcept { return failures_; }
    /// The mean time between failures of one unit, seconds.
    [[nodiscard]] double unit_mtbf_seconds() const noexcept { return f_.mtbf_hours * 3600.0; }

private:
    /// A lifetime of a new (or repaired) unit.
    double lifetime() noexcept {
        if (f_.distribution == failure_distribution::exponential) return rng_.exponential(1.0 / (f_.mtbf_hours * 3600.0));
        return scale_ * std::pow(-std::log1p(-rng_.uniform()), 1.0 / f_.shape);
    }
    /// The rest of a lifetime that has lasted `age` seconds (the exponential's is memoryless).
    double residual(double age) noexcept {
        if (f_.distribution == failure_distribution::exponential) return lifetime();
        const double a = std::pow(age / scale_, f_.shape) - std::log1p(-rng_.uniform());
        return std::max(0.0, scale_ * std::pow(a, 1.0 / f_.shape) - age);
    }
    void find_next() noexcept {
        next_time_ = never;
        down_count_ = 0;
        for (std::size_t u = 0; u < next_.size(); ++u) {
            down_count_ += down_[u];
            if (next_[u] < next_time_) next_time_ = next_[u], next_unit_ = static_cast<std::uint32_t>(u);
        }
    }

    failures_config f_;
    double scale_ = 1;
    detail::rng rng_;
    std::vector<gpu_id> ids_;         ///< 0 .. G-1 (a unit's GPUs are a range of it)
    std::vector<gpu_id> first_;       ///< per unit: its first GPU; one past the last at the end
    std::vector<std::uint32_t> of_gpu_;
    std::vector<double> next_, since_, last_failure_;  ///< per unit: next event, last renewal, last failure
    std::vector<std::uint8_t> down_;
    double next_time_ = never;
    std::uint32_t next_unit_ = 0;
    std::size_t failures_ = 0, down_count_ = 0;
};

/// What a scheduler may know of the failures (placement_view.hpp's failures()): which units are
/// down and until when, when each last failed, how many failed; never when an up unit will fail.
/// A view of a failure_process, valid while it lives; empty (false) when failures are off.
class failure_history {
public:
    failure_history() = default;
    explicit failure_history(const failure_process* p) noexcept : p_(p) {}
    explicit operator bool() const noexcept { return p_ != nullptr; }
    [[nodiscard]] std::size_t units() const noexcept { return p_->units(); }
    [[nodiscard]] std::uint32_t unit_of(gpu_id g) const noexcept { return p_->unit_of(g); }
    [[nodiscard]] std::span<const gpu_id> gpus(std::uint32_t u) const noexcept { return p_->gpus(u); }
    [[nodiscard]] bool is_down(std::uint32_t u) const noexcept { return p_->is_down(u); }
    /// When down unit u is repaired (infinity for a unit that is up).
    [[nodiscard]] double repair_time(std::uint32_t u) const noexcept { return p_->is_down(u) ? p_->next_of(u) : failure_process::never; }
    [[nodiscard]] double last_failure(std::uint32_t u) const noexcept { return p_->last_failure(u); }
    [[nodiscard]] std::size_t failures() const noexcept { return p_->failures(); }

private:
    const failure_process* p_ = nullptr;
};

}  // namespace gpuplace
