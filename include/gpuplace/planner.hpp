#pragma once
/// \file planner.hpp
/// Rollout planners (docs/planning.md): at each decision of the placement or job action mode, every
/// valid action is scored by playing it and then a base policy on futures of the env, and the
/// action with the best mean return wins.
///  - fair: the futures are forks (basic_env::fork): the present kept, what the scheduler cannot
///    know redrawn; every action is scored on the same futures (common random numbers), and the
///    planner leaves the base policy's own action only for one whose paired difference of returns
///    over the futures exceeds `margin` standard errors. Causal.
///  - hindsight: the future is the env's own (a copy that knows the arrivals and durations to come):
///    an estimate of the headroom above the base, NOT causal.
/// Over several base policies (parallel rollout, Chang, Givan and Chong 2004) each action is
/// played under every base on the same futures and scored by its best base's mean return; the
/// action kept by the margin rule is that of the base whose own action scores best.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "detail/progress.hpp"
#include "detail/rng.hpp"
#include "detail/thread_pool.hpp"
#include "env_concepts.hpp"
#include "error.hpp"

namespace gpuplace {

/// A rollout planner's options.
struct rollout_options {
    std::size_t futures = 4;   ///< forks per action (ignored with hindsight: one, the true future)
    std::size_t horizon = 0;   ///< decisions played after the action (0: to the end of the episode)
    bool hindsight = false;    ///< score on the env's own future (not causal)
    double margin = 1.0;       ///< fair: standard errors by which an action must beat the base's action
    std::size_t threads = 1;   ///< threads over the forks, then over (action, future) pairs
    /// In rounds only (round_rollout_options::terminal_value, name suffix "v"): a value at the
    /// rollout's cut. A planner over a heuristic refuses it (named_policy()).
    bool terminal_value = false;
    /// hindsight: the base policy's own action is kept unless another scores more than `min_gain`
    /// higher (a teacher's labels: where the future does not separate the actions clearly, the
    /// base's). Off: the lowest of the best-scoring actions.
    bool ties_to_base = false;
    double min_gain = 0;       ///< with ties_to_base: in units of the return (sum of JCTs in hours by default)
    /// Rollouts on lazy forks (basic_env::set_lazy, where E has it): placement candidates made
    /// only as far as the base policy reads them. The same returns and decisions, faster.
    bool lazy = true;
    /// The largest cluster (GPUs) the planner runs on (0: any). Playing every candidate to the end
    /// of the episode on every future at each decision costs about jobs^2 x candidates x futures x
    /// GPUs per episode: on 10k-100k GPUs an episode takes days, so a larger cluster is refused
    /// (check_scale()) with an error naming its size and this limit.
    std::size_t max_gpus = default_max_gpus;
    /// When set, a progress line per episode on this stream (progress.hpp: shown only once the
    /// episode has taken a while): "<label> seed S: jobs started: done / total (percent), ETA" (the
    /// ETA assumes the decisions to come cost what the past ones did: later ones cost less).
    std::FILE* progress = nullptr;
    std::string label = "rollout planner";  ///< the progress line's name of the planner

    /// max_gpus's default: on 4,096 GPUs an episode of rollout:pack over 160 jobs takes about a
    /// minute on one thread (docs/planning.md); the cost grows with the GPUs and the jobs squared.
    static constexpr std::size_t default_max_gpus = 4096;

    /// ConfigError naming `gpus` and max_gpus when the planner `name` would run on a cluster of
    /// more GPUs than max_gpus.
    void check_scale(const std::string& name, std::size_t gpus) const {
        if (max_gpus == 0 || gpus <= max_gpus || horizon > 0) return;
        throw ConfigError("policy \"" + name + "\": a rollout planner on " + std::to_string(gpus) +
                          " GPUs does not finish in reasonable time (every decision plays each candidate to the end of the "
                          "episode on " + std::to_string(hindsight ? 1 : futures) +
                          (hindsight || futures == 1 ? " future" : " futures") + ", about jobs^2 x GPUs work an episode); the limit is " +
                          std::to_string(max_gpus) + " GPUs (rollout_options::max_gpus; a horizon bounds each rollout instead: "
                          "rollout<F>h<H>:<policy>, e.g. rollout4h32:pack)");
    }
};

/// A rollout planner over env type E: "hindsight" on any RolloutEnv, the fair planner on a
/// ForkableEnv (env_concepts.hpp; ConfigError for a type without fork()).
template <RolloutEnv E>
class rollout_policy {
public:
    /// A base policy made per rollout from a seed (any_policy::make's shape).
    using base_factory = std::function<std::function<std::int64_t(const E&)>(std::uint64_t)>;

    rollout_policy(base_factory base, rollout_options o) : rollout_policy(std::vector<base_factory>{std::move(base)}, o) {}
    /// Over several bases (parallel rollout): every action played under each on the same futures,
    /// its score the best base's mean return; a decision plays bases.size() times as many rollouts.
    rollout_policy(std::vector<base_factory> bases, rollout_options o)
        : bases_(std::move(bases)), o_(o), pool_(std::max<std::size_t>(1, o.threads)) {
        if (bases_.empty()) throw ConfigError("rollout: at least one base policy");
        if (o_.futures == 0 && !o_.hindsight) throw ConfigError("rollout: futures must be >= 1");
        if (!ForkableEnv<E> && !o_.hindsight)
            throw ConfigError("rollout: the fair planner plays on forked futures, and this env type has no fork(seed) "
                              "(env_concepts.hpp, ForkableEnv); \"hindsight:\" plays on copies");
    }
    rollout_policy(const rollout_policy& o) : rollout_policy(o.bases_, o.o_) {}

    void reset(std::uint64_t seed) {
        seed_ = seed;
        decisions_ = 0;
        seconds_ = 0;
        line_.reset();
        if (o_.progress) line_ = std::make_unique<detail::progress_line>(o_.progress, o_.label + " seed " + std::to_string(seed) + ": jobs started");
    }

    /// The action with the best mean return over the futures, under its best base (ties: the lower
    /// action, then the earlier base).
    std::int64_t act(const E& e) {
        if constexpr (requires { e.mode() == action_mode::gpu; })
            if (e.mode() == action_mode::gpu)
                throw ConfigError("rollout: plans over the candidates of the placement or job action mode (env.action_mode), not the gpu mode");
        if (decisions_ == 0) o_.check_scale(o_.label, e.num_gpus());
        if constexpr (requires { e.info().jobs_done; })
            if (line_) {  // jobs started (finished or running): a decision starts one, a finish can take hours
                const auto in = e.info();
                (*line_)(in.jobs_done + in.running, std::max<std::size_t>(in.jobs_total, 1));
            }
        const auto t0 = std::chrono::steady_clock::now();
        const auto mask = e.action_mask();
        actions_.clear();
        for (std::size_t a = 0; a < mask.size(); ++a)
            if (mask[a]) actions_.push_back(std::int64_t(a));
        if (actions_.size() <= 1) {
            means_.assign(actions_.size(), 0.0);
            if (!actions_.empty()) return actions_[0];
            if constexpr (requires { e.defer_action(); }) return e.defer_action();
            else return std::int64_t(e.num_actions()) - 1;
        }
        const std::size_t F = o_.hindsight ? 1 : o_.futures, A = actions_.size(), B = bases_.size();
        score_.assign(A * B * F, 0.0);  // [action][base][future]
        // common random numbers: future f's fork seed and base seed are the same for every action
        const std::uint64_t decision = detail::mix_seed(seed_, 0x726f6c6c6f7574ULL + decisions_);
        // the futures: one fork per future, made once and copied for each action (a fork is a
        // function of its seed, so a copy of it is the fork each action would have made; a copy
        // costs a fraction of a fork, which redraws the workload to come)
        if (!o_.hindsight) {
            if (futures_.size() < F) futures_.resize(F);
            std::atomic<std::size_t> nf{0};
            auto make = [&](std::size_t) {
                for (std::size_t f; (f = nf.fetch_add(1)) < F;) {
                    futures_[f].emplace(fork(e, detail::mix_seed(decision, f)));
                    if constexpr (requires { futures_[f]->set_lazy(true); })
                        if (o_.lazy) futures_[f]->set_lazy(true);
                }
            };
            pool_.run(make);
        }
        if (sims_.size() < pool_.size()) sims_.resize(pool_.size());
        std::atomic<std::size_t> next{0};
        auto task = [&](std::size_t w) {
            for (std::size_t k; (k = next.fetch_add(1)) < A * B * F;) {
                const std::size_t a = k / (B * F), b = k / F % B, f = k % F;
                const std::uint64_t fs = detail::mix_seed(decision, f);
                // each worker's rollout env is assigned over, its buffers reused
                const E& from = o_.hindsight ? e : *futures_[f];
                if constexpr (std::is_copy_assignable_v<E>) {
                    if (sims_[w]) *sims_[w] = from;
                    else sims_[w].emplace(from);
                } else {
                    sims_[w].emplace(from);
                }
                E& sim = *sims_[w];
                if constexpr (requires { sim.set_lazy(true); })
                    if (o_.lazy && o_.hindsight) sim.set_lazy(true);
                auto base = bases_[b](fs);
                double ret = sim.step(actions_[a]).reward;
                for (std::size_t d = 0; !sim.done() && (o_.horizon == 0 || d < o_.horizon); ++d) ret += sim.step(base(sim)).reward;
                score_[k] = ret;
            }
        };
        pool_.run(task);
        std::int64_t best = actions_[0];
        std::size_t best_row = 0;  // (action, base) of the best score: a row of F futures in score_
        double best_score = -std::numeric_limits<double>::infinity();
        means_.assign(A, 0.0);
        base_means_.assign(A * B, 0.0);
        for (std::size_t a = 0; a < A; ++a) {
            for (std::size_t b = 0; b < B; ++b) {
                double m = 0;
                for (std::size_t f = 0; f < F; ++f) m += score_[(a * B + b) * F + f];
                m /= double(F);
                base_means_[a * B + b] = m;
                if (b == 0 || m > means_[a]) means_[a] = m;
                if (m > best_score) best_score = m, best = actions_[a], best_row = a * B + b;
            }
        }
        // the base policy's own action, its index among the valid ones (A if not among them) and its
        // row; over several bases, that of the base whose own action scores best
        std::int64_t mine = best;
        std::size_t ib = A, mine_row = 0;
        if ((o_.hindsight && o_.ties_to_base) || (!o_.hindsight && F > 1)) {
            for (std::size_t b = 0; b < B; ++b) {
                const auto own = bases_[b](detail::mix_seed(decision, 0x62617365ULL))(e);
                const auto i = std::size_t(std::find(actions_.begin(), actions_.end(), own) - actions_.begin());
                if (i < A && (ib == A || base_means_[i * B + b] > base_means_[mine_row])) mine = own, ib = i, mine_row = i * B + b;
                else if (ib == A && b == 0) mine = own;
            }
        }
        if (o_.hindsight && o_.ties_to_base && ib < A && !(best_score > base_means_[mine_row] + o_.min_gain)) best = mine;
        if (!o_.hindsight && F > 1) {  // keep the base's action unless the best beats it clearly
            const auto ia = std::size_t(std::find(actions_.begin(), actions_.end(), best) - actions_.begin());
            if (ib < A && ia != ib) {
                const double* x = &score_[best_row * F];
                const double* y = &score_[mine_row * F];
                double m = 0, ss = 0;
                for (std::size_t f = 0; f < F; ++f) m += x[f] - y[f];
                m /= double(F);
                for (std::size_t f = 0; f < F; ++f) {
                    const double d = x[f] - y[f] - m;
                    ss += d * d;
                }
                const double se = std::sqrt(ss / double(F - 1) / double(F));
                if (!(m > o_.margin * se)) best = mine;
            }
        }
        ++decisions_;
        seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return best;
    }

    /// The last decision's valid actions and the mean return of each over its futures, under its
    /// best base (an action alone: 0). A teacher's counterfactual scores: every action on the same
    /// futures.
    [[nodiscard]] std::span<const std::int64_t> last_actions() const noexcept { return actions_; }
    [[nodiscard]] std::span<const double> last_scores() const noexcept { return means_; }

    /// The number of base policies (parallel rollout: more than one).
    [[nodiscard]] std::size_t bases() const noexcept { return bases_.size(); }
    /// Mean wall-clock seconds per decision so far in this episode.
    [[nodiscard]] double seconds_per_decision() const noexcept { return decisions_ ? seconds_ / double(decisions_) : 0.0; }
    [[nodiscard]] const rollout_options& options() const noexcept { return o_; }

private:
    [[nodiscard]] static E fork(const E& e, std::uint64_t seed) {
        if constexpr (ForkableEnv<E>) return e.fork(seed);
        else return E(e);  // not reached: the constructor refuses the fair planner without fork()
    }

    std::vector<base_factory> bases_;
    rollout_options o_;
    detail::block_pool pool_;
    std::uint64_t seed_ = 0, decisions_ = 0;
    double seconds_ = 0;
    std::unique_ptr<detail::progress_line> line_;  ///< with o_.progress: this episode's
    std::vector<std::int64_t> actions_;
    std::vector<double> score_, means_, base_means_;  ///< [action][base][future], [action], [action][base]
    std::vector<std::optional<E>> futures_;  ///< fair: this decision's forks, one per future
    std::vector<std::optional<E>> sims_;     ///< per worker: the env a rollout plays on
};

}  // namespace gpuplace
