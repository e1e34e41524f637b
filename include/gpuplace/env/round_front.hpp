#pragma once
/// \file env/round_front.hpp
/// The round front end of the scheduling core (docs/rounds.md): time moves in rounds; at every
/// round boundary an allocation (round_allocation.hpp) says which jobs run in the next round, on
/// which GPU type, on how many GPUs, and the front end applies it to the waiting and the running
/// jobs alike:
///  - a running job granted its type and GPU count keeps its GPUs (no cost);
///  - a running job granted another type moves there: it checkpoints, and pays its restore time on
///    the new GPUs before it makes progress again;
///  - a running elastic job granted another GPU count is resized: it checkpoints and restarts on
///    that many GPUs, paying its restore time, like a move (env/elastic_bounds.hpp says which
///    counts each job may be granted);
///  - a running job not granted is suspended (it keeps all its work: it checkpoints at the boundary);
///  - a waiting job granted starts (its first start costs nothing) or resumes (paying its restore);
///  - the progress rule: a running job that has not yet made, since its last (re)start, progress
///    of at least that restart's restore time (and more than none) keeps its GPUs whatever the
///    allocation says (it is "locked"). So every restart buys at least as much progress as it cost
///    and every job finishes, whatever the ratio of round length to restore time.
/// New placements are made largest first (ties in grant order) by a placer (heuristics/*.hpp) on
/// the free GPUs of the granted type; a grant that does not fit waits. A round lasts
/// rounds.length seconds, or ends when no job runs any more; with no active job, time moves to the
/// next arrival. Jobs that arrive during a round wait for the next boundary (Gavel's mechanism).
///
/// What rounds did to each job (moves, suspensions, restores, suspended time) is kept in arrays of
/// this front end (round_record), not in the simulator's job records: a scenario without rounds
/// allocates none of it. basic_round_env (round_env.hpp) drives it with a round policy.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../gpu_types.hpp"
#include "../round_allocation.hpp"
#include "../round_config.hpp"
#include "elastic_bounds.hpp"

namespace gpuplace {

/// What rounds did to one job (round_env.hpp's round_records()).
struct round_record {
    std::uint32_t moves = 0;        ///< restarts on another GPU type while it was running
    std::uint32_t resizes = 0;      ///< restarts on another number of GPUs (elastic jobs)
    std::uint32_t suspensions = 0;  ///< times it lost its GPUs
    std::uint32_t restores = 0;     ///< checkpoint-restores paid: moves, resizes and resumes
    double restore_time = 0;        ///< seconds of restores it paid (held GPUs without progress)
    double suspended_time = 0;      ///< seconds between a suspension and the next resume
};

namespace env_detail {

template <class Core>
class round_front {
public:
    static constexpr std::uint32_t none = round_job::none;

    /// Sizes the front end for core's cluster and zoo, from the scenario's rounds. ConfigError for
    /// a restore time naming a model the zoo does not have.
    void init(const Core& core, const rounds_config& rc) {
        rc_ = rc;
        const auto& zoo = core.zoo();
        restore_model_.assign(zoo.size(), 0.0);
        for (std::size_t m = 0; m < zoo.size(); ++m) restore_model_[m] = rc.restore.seconds + rc.restore.per_gb * zoo[model_id(m)].memory_gb;
        for (const auto& [name, secs] : rc.restore.models) {
            std::size_t m = 0;
            while (m < zoo.size() && zoo[model_id(m)].name != name) ++m;
            if (m == zoo.size()) {
                std::string known;
                for (const auto& p : zoo.models()) known += (known.empty() ? "" : ", ") + p.name;
                throw ConfigError("config /rounds/restore/models/" + name + ": no model of that name in the zoo (its models: " + known + ")");
            }
            restore_model_[m] = secs;
        }
        const auto& types = core.gpu_types();
        const std::size_t G = core.num_gpus();
        type_names_.clear();
        type_gpus_.clear();
        if (types.typed()) {
            type_names_ = types.names();
            for (std::size_t t = 0; t < types.num_types(); ++t) type_gpus_.push_back(static_cast<std::uint32_t>(types.count(t)));
        } else {
            type_names_.push_back(zoo.gpu_type());
            type_gpus_.push_back(static_cast<std::uint32_t>(G));
        }
        type_of_.resize(G);
        for (std::size_t g = 0; g < G; ++g) type_of_[g] = static_cast<std::uint32_t>(types.type_of(gpu_id(g)));
        mask_.assign(G, 0);
        plan_.reserve(G);
    }

    [[nodiscard]] const rounds_config& config() const noexcept { return rc_; }
    /// The restore seconds of a (re)start of job j on model m.
    [[nodiscard]] double restore_of(model_id m) const noexcept { return restore_model_[m]; }
    [[nodiscard]] std::size_t num_types() const noexcept { return type_gpus_.size(); }

    /// Starts an episode (core.begin_episode() has run with `seed`): draws the elastic jobs' bounds,
    /// moves time to the first arrival, the first round boundary. Returns the reward of the time
    /// that passed. ConfigError for a job's bad min_gpus / max_gpus (elastic_bounds).
    double begin(Core& core, std::uint64_t seed = 0) {
        auto& sim = core.simulator_for_rounds();
        elastic_.begin(core, rc_.elastic, seed);
        if (elastic_.elastic() > 0) sim.reserve_slots(elastic_.his());  // room for each one's largest count
        active_.clear();
        set_jobs(core, 0);
        scal_buf_.reserve(elastic_.table().size());
        round_start_ = sim.now();
        double reward = 0;
        if (sim.has_events()) reward = step_time(core, sim.advance(), reward);  // to the first arrival
        round_start_ = sim.now();
        return reward;
    }

    /// Whether the scenario may make elastic jobs (rounds.elastic.share, or job fields min_gpus /
    /// max_gpus): their bounds are drawn per job, so redraw() cannot make a future of them.
    [[nodiscard]] bool may_be_elastic(const Core& core) const noexcept {
        const auto& f = core.config().job_fields;
        return rc_.elastic.share > 0 || elastic_.elastic() > 0 || field_index(f, "min_gpus") != std::string_view::npos ||
               field_index(f, "max_gpus") != std::string_view::npos;
    }

    /// After core.redraw_future(seed) (a forked future, round_env.hpp's fork()): the jobs that have
    /// not arrived are other jobs now, maybe more or fewer. Sizes the per-job arrays for them and
    /// sets their rates and records afresh; the arrived jobs keep theirs. Not with elastic jobs
    /// (may_be_elastic()): every job's bounds are then its request, drawn again here.
    void redraw(Core& core, std::uint64_t seed) {
        elastic_.begin(core, rc_.elastic, seed);
        set_jobs(core, std::min(core.simulator().arrived(), core.simulator().jobs().size()));
    }

    /// Whether every job of the episode has finished.
    [[nodiscard]] bool done(const Core& core) const noexcept { return core.simulator().all_done(); }
    /// The active jobs (arrived, not finished), in arrival order.
    [[nodiscard]] std::span<const std::uint32_t> active() const noexcept { return active_; }
    [[nodiscard]] std::span<const round_record> records() const noexcept { return records_; }
    /// The start of the current round.
    [[nodiscard]] double round_start() const noexcept { return round_start_; }
    /// The GPU type job j runs on, or none.
    [[nodiscard]] std::uint32_t run_type(std::uint32_t j) const noexcept { return run_type_[j]; }
    /// The GPUs job j holds now (0: none).
    [[nodiscard]] std::uint32_t held(std::uint32_t j) const noexcept { return held_[j]; }
    /// The GPU counts each job may be granted (env/elastic_bounds.hpp).
    [[nodiscard]] const elastic_bounds& elastic() const noexcept { return elastic_; }

    /// Whether running job j must keep its GPUs this round (the progress rule).
    [[nodiscard]] bool locked(const Core& core, std::uint32_t j) const noexcept {
        const auto& sim = core.simulator();
        if (!sim.is_running(j)) return false;
        const double useful = sim.useful_run_time(j);
        return useful <= 0 || useful < sim.restart_overhead(j);
    }

    /// What a round policy reads now (rebuilt by each call; valid until apply() or run()).
    [[nodiscard]] round_view view(const Core& core) {
        const auto& sim = core.simulator();
        const std::size_t T = num_types();
        jobs_buf_.clear();
        thr_buf_.clear();
        step_buf_.clear();
        scal_buf_.clear();
        const bool hidden = core.information() == duration_info::hidden;
        for (auto j : active_) {
            round_job r;
            r.job = j;
            r.model = sim.job(j).model;
            r.gpus = sim.job(j).num_gpus;
            r.submit = double(sim.job(j).submit_time);
            r.attained = sim.attained(j);
            const double ideal = sim.ideal_duration(j);
            r.done = std::max(0.0, ideal - sim.work_left(j));
            r.remaining = hidden ? std::numeric_limits<double>::quiet_NaN()
                                 : core.information() == duration_info::oracle ? sim.work_left(j) : std::max(0.0, core.shown(j) - r.done);
            r.type = run_type_[j];
            r.last_type = last_type_[j];
            r.ran_last_round = ran_last_[j];
            r.locked = locked(core, j);
            r.min_gpus = elastic_.lo(j);
            r.max_gpus = elastic_.hi(j);
            r.held = held_[j];
            if (r.min_gpus != r.max_gpus) {
                r.scaling = static_cast<std::uint32_t>(scal_buf_.size());
                const auto* p = elastic_.table().data() + elastic_.offset(j);
                scal_buf_.insert(scal_buf_.end(), p, p + T * (r.max_gpus - r.min_gpus + 1));
            }
            jobs_buf_.push_back(r);
            for (std::size_t t = 0; t < T; ++t) thr_buf_.push_back(thr_[j * T + t]);
            step_buf_.push_back(step_ref_[j]);
        }
        round_view::state s;
        s.now = sim.now();
        s.round_length = rc_.length;
        s.information = core.information();
        s.jobs = jobs_buf_;
        s.throughput = thr_buf_;
        s.step_time_ref = step_buf_;
        s.scaling = scal_buf_;
        s.type_names = type_names_;
        s.type_gpus = type_gpus_;
        s.arrivals_pending = sim.arrived() < sim.jobs().size();
        return round_view(s);
    }

    /// Why allocation `a` cannot be applied now, or "": each grant names an active job once, its
    /// GPU count (an elastic job's: one in its bounds) and a type of the cluster (or any_type).
    [[nodiscard]] std::string why_invalid(const Core& core, const round_allocation& a) {
        const auto& sim = core.simulator();
        for (auto j : active_) want_[j] = 1;  // active, not yet granted
        std::string why;
        const auto grants = a.grants();
        for (std::size_t i = 0; i < grants.size() && why.empty(); ++i) {
            const auto& g = grants[i];
            const std::string at = "round allocation grant " + std::to_string(i) + " (job " + std::to_string(g.job) + "): ";
            if (g.job >= sim.jobs().size()) why = at + "no such job (the episode has " + std::to_string(sim.jobs().size()) + ")";
            else if (want_[g.job] == 0) why = at + (g.job >= sim.arrived() ? "it has not arrived yet" : "it has finished");
            else if (want_[g.job] == 2) why = at + "it is granted twice";
            else if (g.gpus < elastic_.lo(g.job) || g.gpus > elastic_.hi(g.job))
                why = at + std::to_string(g.gpus) + " GPUs, but " + bounds_of(sim, g.job);
            else if (g.type != round_grant::any_type && g.type >= num_types())
                why = at + "GPU type " + std::to_string(g.type) + ", but the cluster has " + std::to_string(num_types()) + " type(s)";
            else want_[g.job] = 2;
        }
        for (auto j : active_) want_[j] = 0;
        for (const auto& g : grants)
            if (g.job < want_.size()) want_[g.job] = 0;
        return why;
    }

    /// Applies allocation `a` at this round boundary (InvalidAction, nothing changed, when
    /// why_invalid() says why): suspends, keeps, moves, starts and resumes jobs, placing new
    /// placements with `placer` (a placer's plan(view, out)) through placement views of type View
    /// made from `vs`. `validated`: the caller built `a` valid by construction (the round action
    /// mode), so the check, which builds its messages, is skipped.
    template <class View, class Placer>
    void apply(Core& core, const round_allocation& a, Placer& placer, const typename View::state& vs, bool validated = false) {
        if (!validated)
            if (auto why = why_invalid(core, a); !why.empty()) throw InvalidAction(why);
        auto& sim = core.simulator_for_rounds();
        const double now = sim.now();
        const auto grants = a.grants();
        // want_[j]: 0 not granted, else 1 | 2 when it moves (another type) | 4 when it is resized
        for (std::uint32_t i = 0; i < grants.size(); ++i) {
            want_[grants[i].job] = 1;
            grant_of_[grants[i].job] = i;
        }
        order_.clear();
        for (auto j : active_) {
            const bool granted = want_[j] != 0;
            if (!sim.is_running(j)) {
                if (granted) order_.push_back(j);
                continue;
            }
            if (locked(core, j)) continue;  // the progress rule: it keeps its GPUs
            if (!granted) {
                sim.stop(j, true);
                ++records_[j].suspensions;
                since_[j] = now;
                run_type_[j] = none;
                held_[j] = 0;
                continue;
            }
            const auto& gr = grants[grant_of_[j]];
            const bool same_type = gr.type == round_grant::any_type || gr.type == run_type_[j], same_size = gr.gpus == held_[j];
            if (same_type && same_size) continue;  // keeps its GPUs
            sim.stop(j, false);  // moves or is resized: its GPUs are free for the placements below
            want_[j] = static_cast<std::uint8_t>(1 | (same_type ? 0 : 2) | (same_size ? 0 : 4));
            held_[j] = 0;
            order_.push_back(j);
        }
        // new placements: largest first, ties in grant order
        std::sort(order_.begin(), order_.end(), [&](std::uint32_t x, std::uint32_t y) {  // a total order (std::stable_sort allocates)
            const auto kx = grants[grant_of_[x]].gpus, ky = grants[grant_of_[y]].gpus;
            return kx > ky || (kx == ky && grant_of_[x] < grant_of_[y]);
        });
        const auto& cl = sim.cluster();
        const std::size_t G = mask_.size();
        for (auto j : order_) {
            const auto& g = grants[grant_of_[j]];
            std::size_t room = 0;
            for (std::size_t q = 0; q < G; ++q) {
                mask_[q] = cl.is_free(gpu_id(q)) && (g.type == round_grant::any_type || type_of_[q] == g.type);
                room += mask_[q];
            }
            const bool mover = want_[j] != 1;
            const bool resized = g.gpus != sim.job(j).num_gpus;  // placed on another count than its request
            plan_.clear();
            const View view(vs, j, mask_, {}, false);
            bool placed = room >= g.gpus && placer.plan(resized ? view.with_request(g.gpus) : view, plan_) && plan_.size() == g.gpus;
            if (placed) {
                std::sort(plan_.begin(), plan_.end());
                for (std::size_t q = 0; q < plan_.size() && placed; ++q)
                    placed = plan_[q] < G && mask_[plan_[q]] && (q == 0 || plan_[q] != plan_[q - 1]);
            }
            auto& rec = records_[j];
            if (!placed) {  // waits: a mover was stopped for nothing, and is now suspended
                if (mover) {
                    sim.count_preemption(j);
                    ++rec.suspensions;
                    since_[j] = now;
                    run_type_[j] = none;
                }
                continue;
            }
            const bool first = !sim.has_started(j);
            const double overhead = first ? 0.0 : restore_model_[sim.job(j).model];
            const auto res = resized ? core.price_resized(j, plan_) : core.price(j, plan_);
            sim.restart(j, plan_, res.slowdown, res.cost, overhead);
            if (!first) {
                ++rec.restores;
                rec.restore_time += overhead;
                if (want_[j] & 2) ++rec.moves;
                if (want_[j] & 4) ++rec.resizes;
                if (!mover) rec.suspended_time += now - since_[j];
            }
            since_[j] = never;
            held_[j] = g.gpus;
            const auto& types = core.gpu_types();  // an untyped cluster is one type, the zoo's reference type
            run_type_[j] = types.typed() ? static_cast<std::uint32_t>(types.slowest(core.zoo(), sim.job(j).model, plan_)) : 0;
        }
        for (const auto& gr : grants) want_[gr.job] = 0;
        core.rethrow_comm_error();  // a registered model's error met while pricing the round
    }

    /// Runs the round that apply() set up: moves time to the next boundary (rounds.length after
    /// this one's start, or earlier when no job runs any more; with no active job, the next
    /// arrival). Returns the reward of the time that passed.
    double run(Core& core) {
        auto& sim = core.simulator_for_rounds();
        for (auto j : active_) {
            last_type_[j] = run_type_[j];
            ran_last_[j] = 0;
        }
        double reward = 0;
        const double until = round_start_ + rc_.length;
        if (sim.running() > 0) {  // a round of work: it ends at `until`, or once no job runs any more
            while (sim.now() < until) {
                reward = step_time(core, sim.advance(until), reward);
                if (sim.running() == 0) break;
            }
        } else if (!active_.empty()) {  // jobs wait, none runs (none was granted, or none fitted): an idle round
            while (sim.now() < until) reward = step_time(core, sim.advance(until), reward);
        } else if (sim.has_events()) {  // nothing to do: the next round starts at the next arrival
            reward = step_time(core, sim.advance(), reward);
        }
        for (auto j : active_)
            if (sim.is_running(j)) ran_last_[j] = sim.now() - round_start_;
        round_start_ = sim.now();
        return reward;
    }

private:
    static constexpr double never = std::numeric_limits<double>::infinity();

    /// Sizes the per-job arrays for the core's jobs and sets jobs `from` on afresh (no record, no
    /// GPUs, their rates on each type), with room in the buffers for every job: begin() from 0,
    /// redraw() from the first job that has not arrived.
    void set_jobs(const Core& core, std::size_t from) {
        const std::size_t n = core.simulator().jobs().size(), T = num_types();
        records_.resize(n);
        held_.resize(n);
        since_.resize(n);
        run_type_.resize(n);
        last_type_.resize(n);
        ran_last_.resize(n);
        thr_.resize(n * T);
        step_ref_.resize(n);
        want_.resize(n);
        grant_of_.resize(n);
        for (auto j = static_cast<std::uint32_t>(from); j < n; ++j) {
            records_[j] = round_record{};
            held_[j] = 0;
            since_[j] = never;
            run_type_[j] = last_type_[j] = none;
            ran_last_[j] = 0;
            want_[j] = 0;
            grant_of_[j] = 0;
            step_ref_[j] = core.ideal_step_time_ref(j);
            for (std::size_t t = 0; t < T; ++t) thr_[j * T + t] = 1.0 / core.ideal_step_time_on(j, t);
        }
        active_.reserve(n);
        jobs_buf_.reserve(n);
        thr_buf_.reserve(n * T);
        step_buf_.reserve(n);
        order_.reserve(n);
    }

    /// Accounts for one simulator step: arrivals join the active jobs, finished ones leave them.
    template <class Ev>
    double step_time(Core& core, const Ev& ev, double reward) {
        const auto& o = core.options();
        for (auto j = ev.first_arrival; j < ev.first_arrival + ev.arrivals; ++j) active_.push_back(j);
        for (const auto& r : ev.finished) {
            const auto j = static_cast<std::uint32_t>(r.id);
            last_type_[j] = run_type_[j];
            ran_last_[j] = r.end - round_start_;
            run_type_[j] = none;
            held_[j] = 0;
            active_.erase(std::find(active_.begin(), active_.end(), j));
        }
        return reward - (o.jct * ev.area + (ev.in_makespan ? o.makespan * ev.elapsed : 0.0)) / o.time_scale;
    }

    /// What GPU counts job j may be granted, for why_invalid().
    template <class Sim>
    [[nodiscard]] std::string bounds_of(const Sim& sim, std::uint32_t j) const {
        const auto req = sim.job(j).num_gpus, lo = elastic_.lo(j), hi = elastic_.hi(j);
        if (lo == hi) return "the job requests " + std::to_string(req) + " (it is not elastic)";
        return "the job is elastic from " + std::to_string(lo) + " to " + std::to_string(hi) + " GPUs (its request " + std::to_string(req) +
               "; the upper bound at most its model's largest measured count)";
    }

    rounds_config rc_;
    elastic_bounds elastic_;
    std::vector<double> restore_model_;  ///< per zoo model: its restore seconds
    std::vector<std::string> type_names_;
    std::vector<std::uint32_t> type_gpus_, type_of_;
    // per job (allocated at begin())
    std::vector<round_record> records_;
    std::vector<std::uint32_t> held_;  ///< GPUs each job holds now
    std::vector<double> since_;  ///< suspended since (never when not suspended)
    std::vector<std::uint32_t> run_type_, last_type_;
    std::vector<double> ran_last_;
    std::vector<double> thr_, step_ref_;  ///< per job x type: steps/s; per job: reference step time
    std::vector<std::uint32_t> active_;
    std::vector<std::uint8_t> want_;  ///< per job, in apply(): 0 not granted, else 1 | 2 (another type: moves) | 4 (another count: resized)
    std::vector<std::uint32_t> grant_of_;
    // scratch
    std::vector<round_job> jobs_buf_;
    std::vector<double> thr_buf_, step_buf_, scal_buf_;
    std::vector<std::uint32_t> order_;
    std::vector<std::uint8_t> mask_;
    std::vector<gpu_id> plan_;
    double round_start_ = 0;
};

}  // namespace env_detail
}  // namespace gpuplace
