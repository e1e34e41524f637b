#pragma once
/// \file env/round_mode.hpp
/// The round action mode (env.action_mode "round", docs/mdp.md): rounds (docs/rounds.md) with an
/// agent building each round's allocation a job at a time. Discrete(K + 1): slots 0..K-1 are the
/// first K active jobs (arrived, not finished: running or waiting), least attained service first
/// (then arrival), that are not granted yet and fit in the GPUs the allocation leaves; the last
/// action, stop, applies the allocation (the round front end, env/round_front.hpp: the chosen jobs'
/// new placements made by env.placer) and runs the round. By default a round is filled: the round
/// runs once no job fits in the GPUs left, and stop is never valid while one does (no GPU idles
/// while a job that fits waits). With env.round_idle, stop is valid once the allocation holds a
/// job, and with none only as the other modes' wait is (env.allow_defer, while arrivals are
/// pending), so that every episode ends. Locked jobs (the progress rule) are granted automatically when
/// the round opens. An elastic job (bounds min < max: the round front end's, from its min_gpus /
/// max_gpus fields or the scenario's elastic share, env/elastic_bounds.hpp) is chosen in two
/// steps: its slot, then its GPU count, action a meaning min + a GPUs (valid up to max and the
/// GPUs left; stop applies the allocation without it). A round in which no job can be
/// chosen runs without a decision, and so does one whose allocation a choice fills up.
///
/// env.round_advisor "class_gittins": that round policy (rounds/gittins.hpp) ranks the round's
/// jobs at each boundary; the slots follow its ranking instead (highest index per GPU-second
/// first), so the first valid slot, the heuristic action, fills the round as class_gittins does,
/// and each slot also shows advised (the policy grants the job this round) and advice_rank (1 for
/// its first, falling linearly over the jobs it ranks).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../observation.hpp"
#include "../round_allocation.hpp"
#include "../rounds/gittins_sample.hpp"
#include "gpu_mode.hpp"
#include "round_front.hpp"
#include "slots.hpp"

namespace gpuplace {

/// Per slot of the round mode, before the per-type features speed_<type> (throughput on the type
/// over throughput on the zoo's reference type, consolidated) and on_<type> (it runs there now).
inline constexpr std::string_view round_slot_feature_names[] = {"valid", "request", "attained", "done", "remaining",
                                                                "wait",  "running", "ran_last_round"};
/// Per slot after the per-type features, with env.round_advisor.
inline constexpr std::string_view round_advice_feature_names[] = {"advised", "advice_rank"};
/// The round mode's "round" segment.
inline constexpr std::string_view round_feature_names[] = {"gpus_left", "locked_gpus", "active_jobs", "granted_jobs",
                                                           "choosing_gpus", "busy_gpus", "time", "finished_jobs"};

namespace env_detail {

template <class Core, class View>
class round_mode : public slot_front_end {
public:
    static constexpr std::uint32_t none = round_job::none;

    void init(Core& core, const observation_writer& obs) {
        const auto& cfg = core.config();
        if (cfg.colocation.enabled) throw ConfigError("config /colocation/enabled: the round action mode runs on exclusive GPUs (no co-location)");
        if (cfg.preemption.enabled)
            throw ConfigError("config /preemption/enabled: in the round action mode the agent decides who runs (set preemption.enabled false)");
        if (!(cfg.rounds.length > 0))
            throw ConfigError("config /rounds/length: " + std::to_string(cfg.rounds.length) + " (expected > 0 seconds)");
        core.enable_reallocation();
        front_.init(core, cfg.rounds);
        G_ = core.num_gpus();
        placer_ = cfg.env.placer;
        allow_empty_ = cfg.env.allow_defer;
        may_idle_ = cfg.env.round_idle;
        const std::size_t K = cfg.env.slots, T = front_.num_types();
        std::vector<std::string> names(std::begin(round_slot_feature_names), std::end(round_slot_feature_names));
        const auto& tn = core.gpu_types().typed() ? core.gpu_types().names() : std::vector<std::string>{core.zoo().gpu_type()};
        for (std::size_t t = 0; t < T; ++t) names.push_back("speed_" + tn[t]);
        for (std::size_t t = 0; t < T; ++t) names.push_back("on_" + tn[t]);
        advisor_.reset();
        if (cfg.env.round_advisor == "class_gittins") {
            advisor_.emplace(gittins_prior_of(cfg), cfg.rounds.restore.seconds);
            for (auto n : round_advice_feature_names) names.emplace_back(n);
        }
        const std::vector<std::string_view> views(names.begin(), names.end());
        F_ = views.size();
        obs_segment round{"round", 0, std::size(round_feature_names), {}, {}};
        for (auto n : round_feature_names) round.fields.emplace_back(n);
        slots_.init(K, "slot_", views, obs.layout(), {}, &round);
        round_off_ = K * F_;
        vals_.assign(F_, 0.0f);
        job_.assign(K, 0);
        reserve_placers(core.hierarchy());
    }

    void reset(const Core&) noexcept {}

    /// Starts an episode (in place of the core's reset()): the workload of `seed`, time at the
    /// first round boundary with a decision. Returns the reward of the time that passed.
    template <class Features, class State>
    double begin(Core& core, std::uint64_t seed, const Features& features, State&& state) {
        core.begin_episode(seed, features);
        const std::size_t n = core.simulator().jobs().size();
        granted_.assign(n, 0);
        pending_ = none;
        alloc_.clear();
        alloc_.reserve(n);
        order_.reserve(n);
        if (advisor_) {
            advisor_->reset(seed);
            advisor_->reserve(n);
            advice_.clear();
            advice_.reserve(n);
            advised_.assign(n, 0);
            rank_.assign(n, 0.0f);
            ranked_.clear();
            ranked_.reserve(n);
            at_.assign(n, 0);
        }
        double reward = front_.begin(core, seed);  // the seed draws a share's elastic jobs
        return open_round(core, reward, state());
    }

    /// The job of slot s (index into simulator().jobs()); in the GPU-count step, slot 0's job.
    [[nodiscard]] std::uint32_t slot_job(std::size_t s) const noexcept { return job_[s]; }
    /// The job whose GPU count is being chosen, or none.
    [[nodiscard]] std::uint32_t choosing() const noexcept { return pending_; }
    /// The allocation built so far this round.
    [[nodiscard]] const round_allocation& allocation() const noexcept { return alloc_; }
    [[nodiscard]] const round_front<Core>& front() const noexcept { return front_; }
    /// The advisor (env.round_advisor), with its episode's state, or none.
    [[nodiscard]] const std::optional<gittins_round_policy>& advisor() const noexcept { return advisor_; }
    /// Job j's GPU bounds: the round front end's (env/elastic_bounds.hpp: its min_gpus and max_gpus
    /// fields or the scenario's elastic share, capped at the counts the zoo measured; the request
    /// alone for a job that is not elastic).
    [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> bounds(const Core&, std::uint32_t j) const noexcept {
        return {front_.elastic().lo(j), front_.elastic().hi(j)};
    }

    /// The slots of the current decision, their observation and the mask.
    void write(Core& core, const observation_writer& obs, const typename View::state&) {
        slots_.clear();
        n_ = 0;
        if (core.simulator().all_done()) return;
        const auto v = front_.view(core);
        const std::size_t K = slots_.slots(), T = front_.num_types(), left = G_ - used_;
        const auto jobs = v.jobs();
        const auto put = [&](std::size_t s, std::size_t i) {
            const auto& r = jobs[i];
            vals_[0] = 1.0f;
            vals_[1] = obs.request(r.gpus);
            vals_[2] = obs.squash(r.attained);
            vals_[3] = obs.squash(r.done);
            vals_[4] = std::isnan(r.remaining) ? 0.0f : obs.squash(r.remaining);
            vals_[5] = obs.squash(v.now() - r.submit);
            vals_[6] = r.type != none ? 1.0f : 0.0f;
            vals_[7] = v.round_length() > 0 ? static_cast<float>(std::min(1.0, r.ran_last_round / v.round_length())) : 0.0f;
            for (std::size_t t = 0; t < T; ++t) {
                vals_[8 + t] = static_cast<float>(std::min(1.0, v.throughput(i, t) / v.reference_throughput(i)));
                vals_[8 + T + t] = r.type == t ? 1.0f : 0.0f;
            }
            if (advisor_) {
                vals_[8 + 2 * T] = advised_[r.job] ? 1.0f : 0.0f;
                vals_[9 + 2 * T] = rank_[r.job];
            }
            slots_.put(s, vals_);
            job_[s] = r.job;
        };
        if (pending_ != none) {  // the GPU count of an elastic job: slot 0 shows it, action a is min + a GPUs
            std::size_t i = 0;
            while (jobs[i].job != pending_) ++i;
            put(0, i);
            const auto [lo, hi] = bounds(core, pending_);
            auto m = slots_.mask();
            std::fill(m.begin(), m.end(), std::uint8_t{0});
            for (std::size_t a = 0; a < K && lo + a <= std::min<std::size_t>(hi, left); ++a) m[a] = 1;
            n_ = 1;
        } else if (advisor_) {  // the advisor's ranking (by job, made when the round opened)
            for (std::size_t i = 0; i < jobs.size(); ++i) at_[jobs[i].job] = static_cast<std::uint32_t>(i);
            order_.clear();
            for (auto j : ranked_) order_.push_back(at_[j]);
        } else {
            order_.resize(jobs.size());  // least attained service first, then arrival (the LAS queue's order)
            for (std::size_t i = 0; i < jobs.size(); ++i) order_[i] = static_cast<std::uint32_t>(i);
            std::sort(order_.begin(), order_.end(), [&](std::uint32_t x, std::uint32_t y) {  // (std::stable_sort allocates)
                return jobs[x].attained < jobs[y].attained || (jobs[x].attained == jobs[y].attained && x < y);
            });
        }
        if (pending_ == none) {
            for (std::size_t o = 0; o < order_.size() && n_ < K; ++o) {
                const auto i = order_[o];
                if (granted_[jobs[i].job] || bounds(core, jobs[i].job).first > left) continue;
                put(n_++, i);
            }
        }
        float* c = slots_.obs().data() + round_off_;
        const auto& sim = core.simulator();
        const double na = double(jobs.size());
        c[0] = float(left) / float(G_);
        c[1] = float(locked_gpus_) / float(G_);
        c[2] = static_cast<float>(na / (na + double(K)));
        c[3] = na > 0 ? static_cast<float>(double(alloc_.size()) / na) : 0.0f;
        c[4] = pending_ != none ? 1.0f : 0.0f;
        c[5] = float(sim.cluster().busy_gpus()) / float(G_);
        c[6] = obs.squash(sim.now());
        c[7] = sim.jobs().empty() ? 1.0f : float(sim.finished().size()) / float(sim.jobs().size());
        // stop, with env.round_idle: with a job granted, or (the job mode's wait) with none while
        // arrivals are pending; without it never while a job fits (n_ > 0: a slot or a GPU count)
        slots_.mask()[K] = may_idle_ && (!alloc_.empty() || (allow_empty_ && v.arrivals_pending()));
    }

    /// Grants a slot's job (or, for an elastic one, moves to its GPU-count step), grants the
    /// chosen GPU count, or stops: applies the allocation and runs rounds up to the next decision.
    template <class State>
    front_step step(Core& core, observation_writer& obs, std::int64_t action, double reward, State&& state) {
        const typename View::state st = state();
        const auto a = static_cast<std::size_t>(action), K = slots_.slots();
        bool decided = false;
        if (a == K) {
            pending_ = none;
            reward = run_round(core, reward, st);
            decided = true;
        } else if (pending_ != none) {
            grant(pending_, bounds(core, pending_).first + std::uint32_t(a));
            pending_ = none;
        } else if (const auto j = job_[a]; bounds(core, j).first < bounds(core, j).second) {
            pending_ = j;
        } else {
            grant(j, core.simulator().job(j).num_gpus);
        }
        if (!decided && pending_ == none) {  // the round runs when no other job can be chosen
            write(core, obs, st);
            if (n_ == 0) {
                reward = run_round(core, reward, st);
                decided = true;
            }
        }
        write(core, obs, st);
        return {reward, decided};
    }

    template <class E>
    [[nodiscard]] std::string why_invalid(const E&, std::int64_t action) const {
        if (pending_ != none && action >= 0 && std::size_t(action) < slots_.slots() && !slots_.mask()[std::size_t(action)])
            return "GPU count " + std::to_string(action) + " (min_gpus + " + std::to_string(action) +
                   ") of the elastic job being granted is outside its bounds or the GPUs left";
        return slots_.why_invalid(action, "job slots", "stop", "job (" + std::to_string(n_) + " active jobs fit in the GPUs left)",
                                  may_idle_ ? "(nothing is granted yet, and no arrival is pending or env.allow_defer is off)"
                                            : "(a job still fits in the GPUs left: a round is filled unless env.round_idle is set)");
    }

    /// A round-robin-free baseline for teachers and tests: the first valid slot (the least attained
    /// job that fits, or with env.round_advisor the advisor's highest-ranked: its fill of the round;
    /// its request in the GPU-count step when it fits, else the largest count), stop when none.
    template <class P>
    [[nodiscard]] std::int64_t heuristic_action(const Core& core, const observation_writer&, P&, const typename View::state&) const {
        const auto m = slots_.mask();
        if (pending_ != none) {
            const auto want = core.simulator().job(pending_).num_gpus - bounds(core, pending_).first;
            if (want < slots_.slots() && m[want]) return std::int64_t(want);
            for (std::size_t a = slots_.slots(); a-- > 0;)
                if (m[a]) return std::int64_t(a);
        }
        return slots_.first_valid();
    }

private:
    void grant(std::uint32_t j, std::uint32_t k) {
        alloc_.grant(j, round_grant::any_type, k);
        granted_[j] = 1;
        used_ += k;
    }

    /// The advisor's ranking and allocation at this boundary (every boundary: its scale estimate
    /// reads what each round did).
    void advise(Core& core) {
        const auto v = front_.view(core);
        for (const auto& g : advice_.grants()) advised_[g.job] = 0;
        for (auto j : ranked_) rank_[j] = 0.0f;
        advice_.clear();
        advisor_->allocate(v, advice_);
        for (const auto& g : advice_.grants()) advised_[g.job] = 1;
        const auto jobs = v.jobs();
        const auto& r = advisor_->ranked();
        ranked_.clear();
        for (std::size_t p = 0; p < r.size(); ++p) {
            ranked_.push_back(jobs[r[p]].job);
            rank_[jobs[r[p]].job] = static_cast<float>(1.0 - double(p) / double(r.size()));
        }
    }

    /// Opens the round at this boundary: the locked jobs granted; rounds without a decision run.
    double open_round(Core& core, double reward, const typename View::state& st) {
        while (!core.simulator().all_done()) {
            if (advisor_) advise(core);
            for (const auto& g : alloc_.grants()) granted_[g.job] = 0;
            alloc_.clear();
            used_ = locked_gpus_ = 0;
            for (auto j : front_.active())
                if (front_.locked(core, j)) {
                    grant(j, core.simulator().job(j).num_gpus);
                    locked_gpus_ += core.simulator().job(j).num_gpus;
                }
            bool any = false;
            for (auto j : front_.active()) any = any || (!granted_[j] && bounds(core, j).first <= G_ - used_);
            if (any) break;
            reward = apply_and_run(core, reward, st);
        }
        return reward;
    }

    double run_round(Core& core, double reward, const typename View::state& st) {
        return open_round(core, apply_and_run(core, reward, st), st);
    }

    double apply_and_run(Core& core, double reward, typename View::state st) {
        st.queue = front_.active();
        switch (placer_) {
            case placer_kind::pack: front_.template apply<View>(core, alloc_, pack_, st, true); break;
            case placer_kind::first_fit: front_.template apply<View>(core, alloc_, ff_, st, true); break;
            case placer_kind::load_balance: front_.template apply<View>(core, alloc_, lb_, st, true); break;
            case placer_kind::topology_greedy: front_.template apply<View>(core, alloc_, tg_, st, true); break;
        }
        return reward + front_.run(core);
    }

    round_front<Core> front_;
    round_allocation alloc_;
    std::vector<std::uint8_t> granted_;  ///< per job: granted in the allocation being built
    std::size_t G_ = 0, n_ = 0, F_ = 0, round_off_ = 0, used_ = 0, locked_gpus_ = 0;
    std::uint32_t pending_ = none;       ///< the elastic job whose GPU count is being chosen
    placer_kind placer_ = placer_kind::pack;
    bool allow_empty_ = true;  ///< env.allow_defer: stop with nothing granted while arrivals are pending
    bool may_idle_ = false;    ///< env.round_idle: stop while a job that fits is left out
    std::vector<float> vals_;
    std::vector<std::uint32_t> job_;    ///< per slot: its job
    std::vector<std::uint32_t> order_;  ///< the active jobs' positions in slot order
    std::optional<gittins_round_policy> advisor_;  ///< env.round_advisor
    round_allocation advice_;                      ///< the advisor's allocation of this round
    std::vector<std::uint8_t> advised_;            ///< per job: in advice_
    std::vector<float> rank_;                      ///< per job: its advice_rank this round
    std::vector<std::uint32_t> ranked_, at_;       ///< the advisor's ranking (jobs); per job its position in the view
};

}  // namespace env_detail
}  // namespace gpuplace
