#pragma once
/// \file rounds/rollout.hpp
/// A rollout planner in rounds (docs/planning.md, "Planning in rounds"): at each round boundary
/// it asks a base round policy for its allocation, and alternatives fill the same round in other
/// orders (round_rollout_order below). Where an alternative grants other jobs than the
/// base, each distinct allocation is played on the same `futures` forks of the env (round_env.hpp's
/// fork(): the jobs to come and hidden durations redrawn, with `base_durations` the active jobs'
/// durations as the base believes them; causal), followed by the base policy for
/// `horizon` rounds, and the base's allocation is kept unless another's return beats it by
/// `margin` standard errors of the paired differences (common random numbers: future f is the
/// same fork for every candidate).
/// With `hindsight` the one future is the env's own (a copy: the true arrivals and durations to
/// come), and the best candidate is taken wherever its return beats the base's: an estimate of
/// the headroom of these candidates, NOT causal.
///
/// Cost: a contested boundary plays (candidates x futures) rollouts of `horizon` rounds each; a
/// boundary where every candidate grants the same jobs (a round with room for everyone) plays none.

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "../detail/rng.hpp"
#include "../detail/thread_pool.hpp"
#include "../round_allocation.hpp"
#include "../round_policy.hpp"

namespace gpuplace {

/// The rollout planner's settings (round policy names `rollout<F>h<H>:<placer>+<round policy>`).
struct round_rollout_options {
    std::size_t futures = 8;   ///< forks a candidate is played on (at least 2: the margin needs a standard error; hindsight: 1)
    std::size_t horizon = 20;  ///< rounds each rollout plays, the candidate's included (0: to the episode's end)
    double margin = 1.0;       ///< standard errors by which a candidate must beat the base's allocation
    /// With durations hidden, each future's active jobs' durations drawn as the base policy
    /// believes them (its draw_duration(), where it has one: class_gittins's class sizes above
    /// what each job has done, at the episode's scale) rather than by the fork from every job's
    /// sizes. Either way a future reads only what the scheduler knows. On by default: chosen on
    /// the validation split (docs/planning.md, "Planning in rounds").
    bool base_durations = true;
    /// A value at the cut: a rollout that stops after `horizon` rounds with jobs still active is
    /// charged what those jobs must still cost at least (cut_cost() below), in the reward's units,
    /// so that work done on a job that does not finish within the horizon counts. The work left is
    /// the fork's (drawn from the base's belief with base_durations): causal. Off by default
    /// (by name, the suffix "v": rollout8h20v:).
    bool terminal_value = false;
    /// Play each candidate on the env's own future (a copy, which keeps the arrivals and the
    /// durations to come) instead of forks, and take the best wherever it beats the base's
    /// return: NOT causal, a measure of what these candidates could gain (by name
    /// "hindsight[h<H>][v]:", docs/planning.md). `futures`, `margin` and `base_durations` do not apply.
    bool hindsight = false;
    /// Threads over the futures (the calling thread included): each plays its futures' rollouts.
    /// The decisions are the same for any count (a future is a function of its seed).
    std::size_t threads = 1;
};

/// The orders in which the planner's alternatives fill a round (locked jobs first, then every job
/// whose GPUs fit, ties to the earlier position), after its base's allocation. running_first,
/// multi_gpu_first and single_gpu_first rank by the base's own order (its ranked(); a base without
/// one has the other four alternatives only).
/// Chosen on the validation split (docs/planning.md, "Planning in rounds").
enum class round_rollout_order : std::uint8_t {
    least_attained_time,     ///< attained GPU-time over the job's GPUs
    least_attained_service,  ///< attained GPU-time (the `las` discipline's order)
    running_first,           ///< the jobs that hold GPUs now, then the base's order: no preemption this round
    arrival,                 ///< first come, first served
    fewest_gpus,             ///< the fewest GPUs first, then least attained GPU-time: the most jobs at once
    multi_gpu_first,         ///< jobs of more than one GPU first, each group in the base's order
    single_gpu_first,        ///< one-GPU jobs first, each group in the base's order
};
inline constexpr std::size_t round_rollout_orders = std::size_t(round_rollout_order::single_gpu_first) + 1;  ///< the last order's, plus one

/// What the planner did in an episode.
struct round_rollout_stats {
    std::size_t boundaries = 0;  ///< round boundaries it decided
    std::size_t contested = 0;   ///< of them, where an alternative granted other jobs than the base
    std::size_t overruled = 0;   ///< of them, where an alternative's allocation was taken
    std::size_t rollouts = 0;    ///< rollouts played
    /// Of the overruled, how often each alternative's allocation was taken (by round_rollout_order).
    std::array<std::size_t, round_rollout_orders> taken{};
};

/// The rollout planner over base round policy `Base` (copied into every rollout, so it must be
/// copyable with its episode state, as class_gittins is), for round env type `RoundEnv` (a
/// basic_round_env), its rollouts placing with a `Placer` that `make_placer(seed, env)` makes
/// afresh for each rollout (by default a default-constructed heuristic, reset and reserved; the
/// registry passes RoundEnv::any_placer, so that one planner type serves every placer).
template <class RoundEnv, RoundPolicy Base, class Placer>
    requires std::copy_constructible<Base>
class basic_round_rollout {
public:
    using placer_fn = std::function<Placer(std::uint64_t seed, const RoundEnv&)>;

    basic_round_rollout(Base base, round_rollout_options o, placer_fn make_placer = default_placer())
        : base_(std::move(base)), o_(o), make_placer_(std::move(make_placer)) {
        o_.futures = o_.hindsight ? 1 : std::max<std::size_t>(o_.futures, 2);
        o_.threads = std::max<std::size_t>(o_.threads, 1);
    }

    void reset(std::uint64_t seed) {
        base_.reset(seed);
        seed_ = seed;
        stats_ = {};
    }
    /// Starts from `base` as it stands (a copy of a base mid-episode, e.g. the round action mode's
    /// advisor: round_slot_teacher.hpp) instead of resetting the base.
    void reset(std::uint64_t seed, const Base& base) {
        base_ = base;
        seed_ = seed;
        stats_ = {};
    }

    /// Fills `out` (empty) for env `e` at a round boundary.
    void allocate(RoundEnv& e, round_allocation& out) {
        const round_view v = e.view();
        ++stats_.boundaries;
        cand_.resize(1 + round_rollout_orders);
        for (auto& c : cand_) c.clear();
        base_.allocate(v, cand_[0]);
        const auto jobs = v.jobs();
        using order = round_rollout_order;
        auto fill = [&](order o, auto key) { fill_by(v, cand_[1 + std::size_t(o)], key); };
        fill(order::least_attained_time, [&](std::size_t i) { return jobs[i].attained / double(std::max(jobs[i].gpus, 1u)); });
        fill(order::least_attained_service, [&](std::size_t i) { return jobs[i].attained; });
        fill(order::arrival, [&](std::size_t i) { return jobs[i].submit; });
        fill(order::fewest_gpus, [&](std::size_t i) { return std::pair(jobs[i].gpus, jobs[i].attained); });
        if constexpr (requires(const Base& b) { { b.ranked() } -> std::convertible_to<const std::vector<std::uint32_t>&>; }) {
            rank_.assign(jobs.size(), 0);  // each job's place in the base's order (the locked are not ranked)
            std::uint32_t k = 0;
            for (const auto i : base_.ranked()) rank_[i] = k++;
            fill(order::running_first, [&](std::size_t i) { return std::pair(jobs[i].held == 0, rank_[i]); });
            fill(order::multi_gpu_first, [&](std::size_t i) { return std::pair(jobs[i].gpus <= 1, rank_[i]); });
            fill(order::single_gpu_first, [&](std::size_t i) { return std::pair(jobs[i].gpus > 1, rank_[i]); });
        } else {
            for (const auto o : {order::running_first, order::multi_gpu_first, order::single_gpu_first}) cand_[1 + std::size_t(o)] = cand_[0];
        }
        // the distinct allocations (as sets of granted jobs), the base's first
        keys_.resize(cand_.size());
        for (std::size_t c = 0; c < cand_.size(); ++c) {
            keys_[c].clear();
            for (const auto& g : cand_[c].grants()) keys_[c].push_back(g.job);
            std::sort(keys_[c].begin(), keys_[c].end());
        }
        distinct_.assign(1, 0);
        for (std::size_t c = 1; c < cand_.size(); ++c)
            if (std::none_of(distinct_.begin(), distinct_.end(), [&](std::size_t d) { return keys_[d] == keys_[c]; })) distinct_.push_back(c);
        std::size_t pick = 0;
        if (distinct_.size() > 1) {
            ++stats_.contested;
            pick = best(e);
            if (pick != 0) {
                ++stats_.overruled;
                ++stats_.taken[pick - 1];  // candidate 1 + order
            }
        }
        for (const auto& g : cand_[pick].grants()) out.grant(g.job, g.type, g.gpus);
    }

    [[nodiscard]] const round_rollout_stats& stats() const noexcept { return stats_; }
    [[nodiscard]] const round_rollout_options& options() const noexcept { return o_; }

    /// What the jobs active in env r must still cost at least, in the reward's units (reward.jct /
    /// reward.time_scale per job-second in the system; arrivals to come are left out, the same for
    /// every candidate; `tail` a buffer): in ascending order of GPU-seconds left (work left x
    /// GPUs), each job ends no earlier than its own work left, nor than the GPU-seconds left of it
    /// and the jobs before it over the cluster's GPUs (the single-machine bound of a schedule by
    /// least area first).
    [[nodiscard]] static double cut_cost(const RoundEnv& r, std::vector<std::pair<double, double>>& tail) {
        const auto& sim = r.simulator();
        tail.clear();
        for (const auto j : r.active()) {
            const double left = sim.work_left(j);
            tail.emplace_back(left * double(sim.job(j).num_gpus), left);
        }
        std::sort(tail.begin(), tail.end());
        const double gpus = double(std::max<std::size_t>(r.num_gpus(), 1));
        double area = 0, cost = 0;
        for (const auto& [a, left] : tail) {
            area += a;
            cost += std::max(left, area / gpus);
        }
        return cost * r.config().reward.jct / r.config().reward.time_scale;
    }

private:
    [[nodiscard]] static placer_fn default_placer() {
        if constexpr (std::default_initializable<Placer> && requires(Placer& p, const RoundEnv& e) {
                          p.reset(std::uint64_t{0});
                          p.reserve(e.hierarchy());
                      })
            return [](std::uint64_t seed, const RoundEnv& e) {
                Placer p;
                p.reset(seed);
                p.reserve(e.hierarchy());
                return p;
            };
        else
            return {};
    }

    /// The round filled in ascending `key(i)` of each job's position i in the view (ties to the
    /// earlier position), locked jobs first, while their GPUs fit.
    template <class Key>
    void fill_by(const round_view& v, round_allocation& out, Key key) {
        const auto jobs = v.jobs();
        std::size_t left = 0;
        for (std::size_t t = 0; t < v.num_types(); ++t) left += v.type_gpus(t);
        order_.clear();
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            if (jobs[i].locked) {
                out.grant(jobs[i].job, jobs[i].type, jobs[i].held);
                left -= std::min<std::size_t>(left, jobs[i].held);
            } else {
                order_.push_back(static_cast<std::uint32_t>(i));
            }
        }
        std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
            const auto ka = key(std::size_t(a)), kb = key(std::size_t(b));
            return ka < kb || (ka == kb && a < b);
        });
        for (auto i : order_) {
            if (jobs[i].gpus > left) continue;
            out.grant(jobs[i].job, round_grant::any_type, jobs[i].gpus);
            left -= jobs[i].gpus;
        }
    }

    /// Future `seed` of env e: e.fork(seed), the active jobs' durations drawn by the base's belief
    /// with base_durations (where Base has draw_duration()); with hindsight, e's own (a copy).
    [[nodiscard]] RoundEnv future(const RoundEnv& e, std::uint64_t seed) const {
        if (o_.hindsight) return e;
        if constexpr (requires(const Base& b, const round_job& r) { { b.draw_duration(r, 1.0, 0.5) } -> std::convertible_to<double>; }) {
            if (o_.base_durations)
                return e.fork(seed, [this](const round_job& r, double step, double u) { return base_.draw_duration(r, step, u); });
        }
        return e.fork(seed);
    }

    /// Plays each distinct candidate on the same forks; the candidate (index into cand_) to take.
    std::size_t best(const RoundEnv& e) {
        const std::size_t F = o_.futures, K = distinct_.size(), T = std::min(o_.threads, F);
        ret_.assign(K * F, 0.0);
        auto play = [&](std::size_t worker) {  // futures worker, worker + T, ...: each in its slots of ret_
            round_allocation next;
            std::vector<std::pair<double, double>> tail;  // cut_cost()'s (GPU-seconds left, seconds left) per active job
            for (std::size_t f = worker; f < F; f += T) {
                const auto fseed = detail::mix_seed(seed_, (std::uint64_t(e.rounds()) << 16) ^ f);
                const RoundEnv fork = future(e, fseed);
                for (std::size_t k = 0; k < K; ++k) {
                    RoundEnv r(fork);
                    Base b(base_);
                    Placer p = make_placer_(fseed, r);
                    double g = r.step(cand_[distinct_[k]], p);
                    for (std::size_t h = 1; (o_.horizon == 0 || h < o_.horizon) && !r.done(); ++h) {
                        next.clear();
                        b.allocate(r.view(), next);
                        g += r.step(next, p);
                    }
                    if (o_.terminal_value && !r.done()) g -= cut_cost(r, tail);
                    ret_[k * F + f] = g;
                }
            }
        };
        if (T <= 1) {
            play(0);
        } else {
            if (!pool_.p || pool_.p->size() != T) pool_.p = std::make_unique<detail::block_pool>(T);
            pool_.p->run(play);
        }
        stats_.rollouts += K * F;
        std::size_t pick = 0;
        double gain = 0;
        for (std::size_t k = 1; k < K; ++k) {
            double s = 0, s2 = 0;
            for (std::size_t f = 0; f < F; ++f) {
                const double d = ret_[k * F + f] - ret_[f];
                s += d;
                s2 += d * d;
            }
            const double mean = s / double(F);
            // hindsight (one future, the true one): any gain counts; fair: `margin` standard errors of the paired differences
            const double se = F > 1 ? std::sqrt(std::max(0.0, (s2 - double(F) * mean * mean) / double(F - 1)) / double(F)) : 0.0;
            if ((o_.hindsight || mean > o_.margin * se) && mean > 0 && mean > gain) gain = mean, pick = k;
        }
        return distinct_[pick];
    }

    Base base_;
    round_rollout_options o_;
    placer_fn make_placer_;
    std::uint64_t seed_ = 0;
    round_rollout_stats stats_;
    std::vector<round_allocation> cand_;
    std::vector<std::vector<std::uint32_t>> keys_;
    std::vector<std::size_t> distinct_;
    std::vector<std::uint32_t> order_;
    std::vector<std::uint32_t> rank_;
    std::vector<double> ret_;
    /// The worker threads, made on first use; a copy of the planner makes its own.
    struct pool_slot {
        std::unique_ptr<detail::block_pool> p;
        pool_slot() = default;
        pool_slot(const pool_slot&) noexcept {}
        pool_slot& operator=(const pool_slot&) noexcept { return *this; }
        pool_slot(pool_slot&&) noexcept = default;
        pool_slot& operator=(pool_slot&&) noexcept = default;
        ~pool_slot() = default;
    } pool_;
};

}  // namespace gpuplace
