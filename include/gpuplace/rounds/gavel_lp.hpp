#pragma once
/// \file rounds/gavel_lp.hpp
/// Gavel's allocation policies that solve an LP (Narayanan et al., OSDI 2020, section 4; Gavel's
/// scheduler/policies/, MIT licence; written from their definitions, not copied), for the
/// mechanism of rounds/gavel.hpp. Needs the optional component gpuplace::lp (COIN-OR CLP,
/// lp/clp.hpp). Over the active jobs i (GPU count s_i, remaining steps R_i) and the GPU types t
/// (N_t GPUs), with T[i][t] job i's throughput on type t (steps/s, round_view::throughput), the
/// allocation X satisfies X >= 0, sum_t X[i][t] <= 1 and sum_i s_i X[i][t] <= N_t; job i's
/// effective throughput is thr_i(X) = sum_t T[i][t] X[i][t].
///  - max_min_fairness_perf: maximise min_i thr_i(X) s_i / prop_i, prop_i = sum_t T[i][t] N_t / N
///    (its throughput under an equal share of every type: Gavel's heterogeneity-aware LAS);
///  - min_total_duration_perf: minimise the makespan max_i R_i / thr_i(X) (as an LP: maximise z
///    with thr_i(X) >= R_i z; Gavel bisects on the makespan to 5%);
///  - finish_time_fairness_perf: minimise max_i rho_i, rho_i = (t_i + R_i / thr_i(X)) / (C_i +
///    R_i / iso_i): t_i its time since arrival, iso_i its throughput on an isolated 1/n share of
///    the cluster, C_i the time that share would have taken for the work it did (Themis' finish-
///    time fairness; bisection on rho, an LP feasibility problem at each);
///  - max_sum_throughput_perf: maximise sum_i thr_i(X) (steps/s, as Gavel's code does).
/// Each optimum is made unique by a second LP at the optimal value (Gavel's interior-point solver
/// returns a central point of the optimal face; a simplex solver a vertex): the jobs' total
/// normalised throughput is maximised there, so capacity the objective leaves free still goes
/// where it adds throughput. The heterogeneity-agnostic forms (no _perf) see every type at one
/// throughput (max_min_fairness: 1; the others: the job's throughput on the zoo's reference type,
/// as Gavel's V100) and solve over the types pooled into one; each job's share then spreads over
/// the types in proportion to their GPUs.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../lp/clp.hpp"
#include "../round_allocation.hpp"
#include "gavel.hpp"

namespace gpuplace {

/// Which of Gavel's LP policies.
enum class gavel_objective : std::uint8_t { max_min_fairness, min_total_duration, finish_time_fairness, max_sum_throughput };

namespace rounds_detail {

/// The LP's inputs: m jobs x n types (pooled: n = 1), their throughputs, GPU counts and each
/// type's GPUs.
struct lp_input {
    std::size_t m = 0, n = 0;
    std::vector<double> thr, cap, scale, remaining;
};

/// Fills `in` from view v: the types as they are (perf) or pooled into one at the throughput
/// `agnostic_thr(i)` of job i.
template <class F>
void lp_inputs(const round_view& v, bool perf, F&& agnostic_thr, lp_input& in) {
    const auto jobs = v.jobs();
    in.m = jobs.size();
    in.n = perf ? v.num_types() : 1;
    in.thr.assign(in.m * in.n, 0.0);
    in.cap.assign(in.n, 0.0);
    in.scale.resize(in.m);
    in.remaining.resize(in.m);
    for (std::size_t t = 0; t < v.num_types(); ++t) in.cap[perf ? t : 0] += v.type_gpus(t);
    for (std::size_t i = 0; i < in.m; ++i) {
        in.scale[i] = jobs[i].gpus;
        in.remaining[i] = v.remaining_steps(i);
        for (std::size_t t = 0; t < in.n; ++t) in.thr[i * in.n + t] = perf ? v.throughput(i, t) : agnostic_thr(i);
    }
}

/// The LP's common part: X[i][t] in [0, 1] (column i * n + t), rows "sum_t X <= 1" (row i) and
/// "sum_i s_i X <= N_t" (row m + t); `extra` columns get added by the caller.
inline void lp_base(const lp_input& in, lp::model& lp) {
    for (std::size_t i = 0; i < in.m; ++i) lp.add_row(-lp::model::inf, 1.0);
    for (std::size_t t = 0; t < in.n; ++t) lp.add_row(-lp::model::inf, in.cap[t]);
}

/// The allocation of the solved LP into x (rows in job order), spreading a pooled share over the
/// view's types in proportion to their GPUs.
inline void lp_read(const round_view& v, const lp_input& in, const lp::model& lp, gavel_allocation& x) {
    const std::size_t T = v.num_types();
    double total = 0;
    for (std::size_t t = 0; t < T; ++t) total += v.type_gpus(t);
    for (std::size_t i = 0; i < in.m; ++i)
        for (std::size_t t = 0; t < T; ++t) {
            const double share = in.n == 1 && T > 1 ? lp.value(int(i)) * v.type_gpus(t) / total : lp.value(int(i * in.n + t));
            x.at(i, t) = std::clamp(share, 0.0, 1.0);
        }
}

[[nodiscard]] inline const char* objective_name(gavel_objective o) noexcept {
    switch (o) {
        case gavel_objective::max_min_fairness: return "max_min_fairness";
        case gavel_objective::min_total_duration: return "min_total_duration";
        case gavel_objective::finish_time_fairness: return "finish_time_fairness";
        default: return "max_sum_throughput";
    }
}

}  // namespace rounds_detail

/// One of Gavel's LP allocations (GavelAllocator): `perf` the heterogeneity-aware form.
class gavel_lp_allocation {
public:
    gavel_lp_allocation() = default;
    gavel_lp_allocation(gavel_objective o, bool perf) : obj_(o), perf_(perf) {}

    void reset() {
        cumulative_.clear();
        prev_remaining_.clear();
        prev_iso_.clear();
        solves_ = 0;
    }

    void compute(const round_view& v, gavel_allocation& x) {
        if (v.jobs().empty()) return;
        const bool needs_durations = obj_ == gavel_objective::min_total_duration || obj_ == gavel_objective::finish_time_fairness;
        if (needs_durations && v.information() == duration_info::hidden)
            throw ConfigError(std::string("round policy ") + rounds_detail::objective_name(obj_) + (perf_ ? "_perf" : "") +
                              " needs the jobs' remaining work; durations.mode is hidden");
        rounds_detail::lp_inputs(
            v, perf_, [&](std::size_t i) { return obj_ == gavel_objective::max_min_fairness ? 1.0 : v.reference_throughput(i); }, in_);
        switch (obj_) {
            case gavel_objective::max_min_fairness: max_min(v, x); break;
            case gavel_objective::min_total_duration: min_makespan(v, x); break;
            case gavel_objective::finish_time_fairness: finish_time(v, x); break;
            default: max_sum(v, x); break;
        }
    }

    /// LP solves so far this episode.
    [[nodiscard]] std::size_t solves() const noexcept { return solves_; }

private:
    /// Adds the X columns with objective `c` (i * n + t) and their entries in the base rows plus
    /// one more row per job, `job_row(i)` + i, with coefficient job_coef(i, t) (none when < 0 rows).
    template <class Obj, class Coef>
    void add_x(lp::model& lp, Obj&& c, int job_row, Coef&& job_coef) {
        const auto& in = in_;
        for (std::size_t i = 0; i < in.m; ++i)
            for (std::size_t t = 0; t < in.n; ++t) {
                entries_.clear();
                entries_.push_back({int(i), 1.0});
                entries_.push_back({int(in.m + t), in.scale[i]});
                if (job_row >= 0) entries_.push_back({job_row + int(i), job_coef(i, t)});
                lp.add_column(c(i, t), 0.0, 1.0, entries_);
            }
    }

    lp::status solve(lp::model& lp) {
        ++solves_;
        return lp.solve();
    }
    void fail(lp::status s) const {
        throw Error(std::string("round policy ") + rounds_detail::objective_name(obj_) + (perf_ ? "_perf" : "") + ": the LP solver (" +
                    lp::solver_name() + ") found the allocation problem " + lp::to_string(s));
    }

    /// Second LP: the objective column fixed near its optimum, maximise sum_i sum_t w[i][t] X[i][t].
    template <class W>
    void polish(lp::model& lp, int zcol, double zstar, W&& w) {
        lp.set_column_bounds(zcol, zstar - 1e-7 * std::max(1.0, std::abs(zstar)), lp::model::inf);
        lp.set_objective(zcol, 0.0);
        for (std::size_t i = 0; i < in_.m; ++i)
            for (std::size_t t = 0; t < in_.n; ++t) lp.set_objective(int(i * in_.n + t), w(i, t));
        (void)solve(lp);  // the first solution stays feasible: keep it if this fails
    }

    void max_min(const round_view& v, gavel_allocation& x) {
        const auto& in = in_;
        double total = 0;
        for (double c : in.cap) total += c;
        coef_.assign(in.m * in.n, 0.0);
        for (std::size_t i = 0; i < in.m; ++i) {
            double prop = 0;
            for (std::size_t t = 0; t < in.n; ++t) prop += in.thr[i * in.n + t] * in.cap[t] / total;
            for (std::size_t t = 0; t < in.n; ++t) coef_[i * in.n + t] = prop > 0 ? in.thr[i * in.n + t] * in.scale[i] / prop : 0.0;
        }
        lp::model lp;
        rounds_detail::lp_base(in, lp);
        const int zrow = lp.num_rows();
        for (std::size_t i = 0; i < in.m; ++i) lp.add_row(-lp::model::inf, 0.0);  // z - sum_t c X <= 0
        add_x(lp, [](std::size_t, std::size_t) { return 0.0; }, zrow, [&](std::size_t i, std::size_t t) { return -coef_[i * in.n + t]; });
        entries_.clear();
        for (std::size_t i = 0; i < in.m; ++i) entries_.push_back({zrow + int(i), 1.0});
        const int z = lp.add_column(1.0, 0.0, lp::model::inf, entries_);
        if (const auto s = solve(lp); s != lp::status::optimal) fail(s);
        polish(lp, z, lp.value(z), [&](std::size_t i, std::size_t t) { return coef_[i * in.n + t]; });
        rounds_detail::lp_read(v, in, lp, x);
    }

    void max_sum(const round_view& v, gavel_allocation& x) {
        const auto& in = in_;
        lp::model lp;
        rounds_detail::lp_base(in, lp);
        add_x(lp, [&](std::size_t i, std::size_t t) { return in.thr[i * in.n + t]; }, -1, [](std::size_t, std::size_t) { return 0.0; });
        if (const auto s = solve(lp); s != lp::status::optimal) fail(s);
        rounds_detail::lp_read(v, in, lp, x);
    }

    void min_makespan(const round_view& v, gavel_allocation& x) {
        const auto& in = in_;
        lp::model lp;
        rounds_detail::lp_base(in, lp);
        const int zrow = lp.num_rows();
        for (std::size_t i = 0; i < in.m; ++i) lp.add_row(-lp::model::inf, 0.0);  // R_i z - thr_i(X) <= 0
        add_x(lp, [](std::size_t, std::size_t) { return 0.0; }, zrow, [&](std::size_t i, std::size_t t) { return -in.thr[i * in.n + t]; });
        entries_.clear();
        for (std::size_t i = 0; i < in.m; ++i) entries_.push_back({zrow + int(i), std::max(in.remaining[i], 0.0)});
        const int z = lp.add_column(1.0, 0.0, lp::model::inf, entries_);
        if (const auto s = solve(lp); s != lp::status::optimal) fail(s);
        polish(lp, z, lp.value(z), [&](std::size_t i, std::size_t t) {
            return in.remaining[i] > 0 ? in.thr[i * in.n + t] / in.remaining[i] : 0.0;
        });
        rounds_detail::lp_read(v, in, lp, x);
    }

    void finish_time(const round_view& v, gavel_allocation& x) {
        const auto& in = in_;
        const auto jobs = v.jobs();
        // the isolated share: 1/m of every type's GPUs, at most the job's whole time
        e_.assign(in.m, 0.0);
        age_.assign(in.m, 0.0);
        iso_.assign(in.m, 0.0);
        for (std::size_t i = 0; i < in.m; ++i) {
            double row = 0;
            for (std::size_t t = 0; t < in.n; ++t) row += in.cap[t] / double(in.m) / in.scale[i];
            const double f = std::max(row, 1.0);
            for (std::size_t t = 0; t < in.n; ++t) iso_[i] += in.thr[i * in.n + t] * (in.cap[t] / double(in.m) / in.scale[i]) / f;
            const auto j = jobs[i].job;
            auto& c = cumulative_[j];
            if (auto p = prev_remaining_.find(j); p != prev_remaining_.end() && prev_iso_[j] > 0)
                c += (p->second - in.remaining[i]) / prev_iso_[j];
            e_[i] = c + (iso_[i] > 0 ? in.remaining[i] / iso_[i] : 0.0);
            age_[i] = v.now() - jobs[i].submit;
        }
        prev_remaining_.clear();
        prev_iso_.clear();
        for (std::size_t i = 0; i < in.m; ++i) {
            prev_remaining_[jobs[i].job] = in.remaining[i];
            prev_iso_[jobs[i].job] = iso_[i];
        }
        // feasibility at rho: thr_i(X) >= R_i / (rho E_i - t_i) for every job with work left
        lp::model lp;
        rounds_detail::lp_base(in, lp);
        const int drow = lp.num_rows();
        for (std::size_t i = 0; i < in.m; ++i) lp.add_row(0.0, lp::model::inf);
        add_x(lp, [](std::size_t, std::size_t) { return 0.0; }, drow, [&](std::size_t i, std::size_t t) { return in.thr[i * in.n + t]; });
        double lo = 0;
        for (std::size_t i = 0; i < in.m; ++i)
            if (in.remaining[i] > 0 && e_[i] > 0) lo = std::max(lo, age_[i] / e_[i]);
        auto feasible = [&](double rho) {
            for (std::size_t i = 0; i < in.m; ++i) {
                double need = 0;
                if (in.remaining[i] > 0) {
                    const double room = rho * e_[i] - age_[i];
                    if (!(room > 0)) return false;
                    need = in.remaining[i] / room;
                }
                lp.set_row_bounds(drow + int(i), need, lp::model::inf);
            }
            return solve(lp) == lp::status::optimal;
        };
        double hi = std::max(2 * lo, 1.0);
        int grow = 0;
        while (!feasible(hi)) {
            if (++grow > 60) fail(lp::status::infeasible);
            lo = hi;
            hi *= 2;
        }
        for (int it = 0; it < 40 && hi - lo > 1e-4 * hi; ++it) {
            const double mid = 0.5 * (lo + hi);
            if (feasible(mid)) hi = mid;
            else lo = mid;
        }
        (void)feasible(hi);
        for (std::size_t i = 0; i < in.m; ++i)
            for (std::size_t t = 0; t < in.n; ++t)
                lp.set_objective(int(i * in.n + t), in.remaining[i] > 0 ? in.thr[i * in.n + t] / in.remaining[i] : 0.0);
        if (solve(lp) != lp::status::optimal) (void)feasible(hi);
        rounds_detail::lp_read(v, in, lp, x);
    }

    gavel_objective obj_ = gavel_objective::max_min_fairness;
    bool perf_ = true;
    rounds_detail::lp_input in_;
    std::vector<std::pair<int, double>> entries_;
    std::vector<double> coef_, e_, age_, iso_;
    std::unordered_map<std::uint32_t, double> cumulative_, prev_remaining_, prev_iso_;  ///< finish-time fairness, per job
    std::size_t solves_ = 0;
};

}  // namespace gpuplace
