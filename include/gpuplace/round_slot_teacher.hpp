#pragma once
/// \file round_slot_teacher.hpp
/// The round planner (rounds/rollout.hpp) acting in the round action mode (env/round_mode.hpp,
/// docs/rounds.md): at each round boundary of a basic_env whose env.action_mode is "round" it
/// plans the round's allocation on round_env_at() of the env, and each decision takes the first
/// slot whose job that allocation grants (the first valid slot when the slots show none of them:
/// they show the first env.slots jobs that fit, in the advisor's order). By name,
/// "rollout<F>h<H>:<placer>+class_gittins" acts so on a round-mode env (policy_registry.hpp), and
/// so it is a PPO teacher to clone (ppo "teacher"): unlike an advisor (env.round_advisor), whose
/// choice the network observes, nothing of the planner is in the observation.
///
/// The planner's base is a copy of the env's advisor at each boundary (so env.round_advisor must
/// be "class_gittins"): class_gittins with its episode's state (the scale it has estimated from the
/// jobs that finished), whatever boundary the teacher starts at.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "detail/rng.hpp"
#include "env.hpp"
#include "error.hpp"
#include "job_fields.hpp"
#include "round_env.hpp"
#include "rounds/gittins.hpp"
#include "rounds/rollout.hpp"

namespace gpuplace {

namespace env_detail {
/// What round_env_at() reads of a basic_env (its core and round front end) and the round env it makes.
struct round_env_access {
    template <class T, class J, class C>
    [[nodiscard]] static basic_round_env<T, J, C> at(const basic_env<T, J, C>& e, std::size_t rounds) {
        if (!e.started_) throw StateError("round_env_at(): the env has not been reset");
        const auto* r = std::get_if<3>(&e.front_);
        if (!r) throw StateError(std::string("round_env_at(): the env's action mode is ") + std::string(to_string(e.mode())) + ", not round");
        return basic_round_env<T, J, C>(e.core_, r->front(), rounds);
    }
    template <class T, class J, class C>
    [[nodiscard]] static const std::optional<gittins_round_policy>& advisor(const basic_env<T, J, C>& e) {
        static const std::optional<gittins_round_policy> no_advisor;
        const auto* r = std::get_if<3>(&e.front_);
        return r ? r->advisor() : no_advisor;
    }
};
}  // namespace env_detail

/// The round env at the round boundary where basic_env `e` (env.action_mode "round") stands: the
/// same episode, time, jobs, placements and rounds' records, without the allocation the agent is
/// building (step() with an allocation then runs the round as the agent's filled round would, and
/// fork() makes its futures). `rounds`: the count its rounds() starts from. StateError before
/// reset() and in another action mode.
template <class T, class J, class C>
[[nodiscard]] basic_round_env<T, J, C> round_env_at(const basic_env<T, J, C>& e, std::size_t rounds = 0) {
    return env_detail::round_env_access::at(e, rounds);
}

/// The round planner over class_gittins as a policy of the round action mode (see the file's
/// comment). `Env`: a basic_env; `make_placer`: the placer of the planner's rollouts, as
/// basic_round_rollout takes it.
template <class Env>
class basic_round_slot_teacher {
public:
    using round_env_type = basic_round_env<typename Env::topology_type, typename Env::job_type, typename Env::comm_type>;
    using placer_type = typename round_env_type::any_placer;
    using planner_type = basic_round_rollout<round_env_type, gittins_round_policy, placer_type>;

    basic_round_slot_teacher(round_rollout_options o, typename planner_type::placer_fn make_placer, std::uint64_t seed)
        : o_(o), make_(std::move(make_placer)), seed_(seed) {}

    /// Before acting: ConfigError unless env e's scenario runs in the round action mode with
    /// env.round_advisor "class_gittins" and makes no elastic jobs (rounds.elastic.share, job
    /// fields min_gpus / max_gpus: the planner's futures are forks, which such a scenario has
    /// none of). What act() would refuse in the middle of an episode, said before it starts.
    static void check(const Env& e) {
        const auto& s = e.config();
        if (s.env.mode != action_mode::round || s.env.round_advisor != "class_gittins")
            throw ConfigError("the round planner acts in the round action mode (env.action_mode \"round\") with env.round_advisor "
                              "\"class_gittins\", its base with the episode's state; the env's action mode is " +
                              std::string(to_string(s.env.mode)) + (s.env.mode == action_mode::round ? ", without an advisor" : ""));
        if (s.rounds.elastic.share > 0 || field_index(s.job_fields, "min_gpus") != std::string_view::npos ||
            field_index(s.job_fields, "max_gpus") != std::string_view::npos)
            throw ConfigError(std::string("the round planner plans on forked futures, which a scenario with elastic jobs (") +
                              (s.rounds.elastic.share > 0 ? "rounds.elastic.share > 0" : "job fields min_gpus / max_gpus") +
                              ") has none of (round_env::fork())");
    }

    /// The action in env e: the first slot whose job the planner's allocation of this round
    /// grants. ConfigError outside the round action mode or without env.round_advisor
    /// "class_gittins" (check()); StateError where the planner has no futures (elastic jobs: at
    /// the first round it contests, or at the first GPU-count step).
    [[nodiscard]] std::int64_t act(const Env& e) {
        const auto& advisor = env_detail::round_env_access::advisor(e);
        if (e.mode() != action_mode::round || !advisor) {
            check(e);
            throw StateError("the round planner: the env's advisor has not started (reset the env first)");
        }
        if (e.round_choosing() != round_job::none)
            throw StateError("the round planner plans on forked futures, which a scenario with elastic jobs has none of (round_env::fork()); "
                             "the env asks for an elastic job's GPU count");
        const double now = e.simulator().now();
        if (!(now == at_) || e.steps() < steps_) plan(e, *advisor, now);  // a new boundary, or a new episode
        steps_ = e.steps();
        const auto mask = e.action_mask();
        const std::size_t K = e.num_actions() - 1;
        for (std::size_t s = 0; s < K; ++s)
            if (const auto j = e.slot_job(s); mask[s] && j < planned_.size() && planned_[j]) return std::int64_t(s);
        for (std::size_t s = 0; s < K; ++s)
            if (mask[s]) return std::int64_t(s);
        return std::int64_t(K);
    }

    /// The planner's allocation of the current round (its grants, the locked jobs' included).
    [[nodiscard]] const round_allocation& planned() const noexcept { return alloc_; }
    /// What the planner did over the rounds it planned (boundaries: the rounds planned).
    [[nodiscard]] const round_rollout_stats& stats() const noexcept { return stats_; }

private:
    void plan(const Env& e, const gittins_round_policy& advisor, double now) {
        if (e.steps() < steps_ || !(now >= at_)) boundary_ = 0;
        auto r = round_env_at(e, boundary_);
        if (!planner_) planner_.emplace(advisor, o_, make_);
        planner_->reset(detail::mix_seed(seed_, boundary_), advisor);
        ++boundary_;
        alloc_.clear();
        planner_->allocate(r, alloc_);
        const auto& st = planner_->stats();
        stats_.boundaries += st.boundaries;
        stats_.contested += st.contested;
        stats_.overruled += st.overruled;
        stats_.rollouts += st.rollouts;
        for (std::size_t k = 0; k < st.taken.size(); ++k) stats_.taken[k] += st.taken[k];
        planned_.assign(e.simulator().jobs().size(), 0);
        for (const auto& g : alloc_.grants()) planned_[g.job] = 1;
        at_ = now;
    }

    round_rollout_options o_;
    typename planner_type::placer_fn make_;
    std::uint64_t seed_ = 0;
    std::optional<planner_type> planner_;
    round_allocation alloc_;
    std::vector<std::uint8_t> planned_;
    double at_ = std::numeric_limits<double>::quiet_NaN();
    std::size_t steps_ = 0, boundary_ = 0;
    round_rollout_stats stats_;
};

}  // namespace gpuplace
