#pragma once
/// \file simulator.hpp
/// Event-driven, continuous-time simulation of a cluster: arrivals and completions in a priority
/// queue, the GPUs each running job holds, and a record of every finished job. It makes no
/// scheduling decisions: the environment (or any scheduler) calls start() for the jobs it places,
/// suspend() for the jobs it preempts (with preemption on), and learns from what advance()
/// returns which jobs arrived and finished.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "cluster.hpp"
#include "detail/inline.hpp"
#include "colocation.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "topology.hpp"

namespace gpuplace {

/// What one basic_simulator::advance() did.
struct advance_result {
    double elapsed = 0;        ///< seconds time moved
    double area = 0;           ///< jobs in system x elapsed: the integral of jobs in system over the interval
    bool in_makespan = false;  ///< a job had arrived before the interval (the makespan runs from the first submit)
    std::span<const job_record> finished;  ///< the jobs that finished, in order (valid until the next advance() or reset())
    std::uint32_t first_arrival = 0;       ///< the jobs that arrived: first_arrival, first_arrival + 1, ...
    std::uint32_t arrivals = 0;            ///< how many arrived
};

/// What suspending a running job costs (basic_simulator::set_preemption()).
struct preemption_costs {
    double restart_overhead = 0;     ///< seconds a resumed job holds its GPUs before it makes progress again
    double checkpoint_interval = 0;  ///< seconds of progress between checkpoints; a suspended job loses what it
                                     ///< made since its last one (0: it checkpoints when suspended, losing nothing)
};

template <Job J = TrainingJob>
class basic_simulator {
public:
    using job_type = J;
    static constexpr double never = std::numeric_limits<double>::infinity();

    basic_simulator() = default;

    /// Sizes the simulator for a topology (allocates).
    template <Topology T>
    void resize(const T& t) {
        cluster_.resize(t);
    }
    void resize(const level_hierarchy& h) { cluster_.resize(h); }

    /// Turns co-location on: up to `max_jobs_per_gpu` jobs per GPU, each job progressing at the rate
    /// its interference factors give (a multi-GPU job at its slowest GPU's rate). Call before
    /// resize(). A null table keeps GPUs exclusive.
    void set_colocation(std::shared_ptr<const interference_table> table, std::size_t max_jobs_per_gpu) {
        table_ = std::move(table);
        cluster_.set_max_jobs_per_gpu(table_ ? max_jobs_per_gpu : 1);
        cluster_.track_changes(table_ != nullptr);  // the env's room caches replay the change log
    }
    [[nodiscard]] bool colocation() const noexcept { return table_ != nullptr; }
    [[nodiscard]] const interference_table* interference() const noexcept { return table_.get(); }

    /// Turns preemption on: suspend() may stop a running job, which later resumes (possibly on
    /// other GPUs) with the work it had left at its last checkpoint, paying the restart overhead
    /// (exclusive GPUs only: not with co-location). Call before reset().
    void set_preemption(const preemption_costs& c) {
        preempt_ = true;
        costs_ = c;
    }
    [[nodiscard]] bool preemption() const noexcept { return preempt_; }

    /// Turns failures on (failures.hpp; with preemption's machinery, exclusive GPUs only): fail()
    /// stops a job, which resumes paying `restart_overhead`; each run checkpoints at the interval
    /// set_checkpointing() gives it. Call before reset(), after set_preemption() if any.
    void enable_failures(double restart_overhead);
    /// Failures on: job j's run (about to start) checkpoints every `interval` seconds of its run
    /// (0: it loses nothing), of which the fraction `writing` is spent writing the checkpoint.
    void set_checkpointing(std::uint32_t j, double interval, double writing) noexcept {
        ckpt_[j] = interval;
        writing_[j] = writing;
    }
    /// Failures on: stops running job j now, losing its progress since its last checkpoint (an
    /// interruption of its record); its next start pays the failure's restart overhead.
    void fail(std::uint32_t j);
    /// Failures on: takes free `gpus` out of service until `until` (they hold no job and are not
    /// free), or brings them back.
    void take_down(std::span<const gpu_id> gpus, double until) noexcept { cluster_.allocate_exclusive(gpus, cluster_state::failed, until); }
    void bring_up(std::span<const gpu_id> gpus) noexcept { cluster_.release_exclusive(gpus); }

    /// Starts an episode with `jobs` sorted by submit time (ties by position) and the ideal
    /// duration of each. Allocates only when the workload is larger than any seen before.
    /// `memory` (GB per GPU of each job) matters only with co-location; empty means 0.
    void reset(std::span<const J> jobs, std::span<const double> ideal, std::span<const double> memory = {}) {
        reset(jobs, [&](const J& j) { return ideal[index_of(j)]; },
              [&](const J& j) { return index_of(j) < memory.size() ? memory[index_of(j)] : 0.0; });
    }

    /// Starts an episode with a J made from each of `jobs` (sorted by submit time, ties by
    /// position), of ideal duration ideal(job) and memory(job) GB per GPU (asked only with
    /// co-location), called with each job of jobs(). The simulator owns the episode's job list.
    template <class Source, class Ideal, class Memory>
    void reset(std::span<const Source> jobs, Ideal&& ideal, Memory&& memory);

    /// Replaces the jobs that have not arrived yet by `future` (each made a J; submit times after
    /// now, sorted), of ideal duration ideal(job) and memory(job) as in reset(): a forked future.
    /// The jobs that arrived, run or finished stay as they are.
    template <class Source, class Ideal, class Memory>
    void replace_future(std::span<const Source> future, Ideal&& ideal, Memory&& memory);

    /// Sets job j's total ideal duration to `ideal` (a forked future's redraw of a duration the
    /// scheduler does not know): the work it has done stays done, and a running job ends when the
    /// rest is done at its slowdown (after what is left of a restart overhead). Exclusive GPUs only.
    void set_ideal_duration(std::uint32_t j, double ideal);

    /// Reserves room for `n` GPUs of job placements in an episode, so that reset() allocates
    /// nothing for workloads that request up to n GPUs in all.
    void reserve_placements(std::size_t n) { placements_.reserve(n); }

    [[nodiscard]] double now() const noexcept { return now_; }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return cluster_; }
    [[nodiscard]] std::span<const J> jobs() const noexcept { return jobs_; }
    [[nodiscard]] const J& job(std::uint32_t j) const noexcept { return jobs_[j]; }
    [[nodiscard]] double ideal_duration(std::uint32_t j) const noexcept { return ideal_[j]; }
    /// Jobs that have arrived and not finished.
    [[nodiscard]] std::size_t in_system() const noexcept { return in_system_; }
    [[nodiscard]] std::size_t running() const noexcept { return running_; }
    [[nodiscard]] std::size_t arrived() const noexcept { return next_arrival_; }
    [[nodiscard]] std::span<const job_record> finished() const noexcept { return finished_; }
    /// GPUs of every started job, concatenated (a job_record's gpu_offset indexes it).
    [[nodiscard]] std::span<const gpu_id> placements() const noexcept { return placements_; }
    [[nodiscard]] std::span<const gpu_id> gpus_of(const job_record& r) const noexcept {
        return std::span<const gpu_id>(placements_).subspan(r.gpu_offset, r.num_gpus);
    }
    [[nodiscard]] bool all_done() const noexcept { return finished_.size() == jobs_.size(); }
    [[nodiscard]] bool has_events() const noexcept { return running_ > 0 || next_arrival_ < jobs_.size(); }
    /// Time of the next arrival or completion (infinity when none).
    [[nodiscard]] double next_event_time() const noexcept {
        double t = never;
        if (!heap_.empty()) t = heap_.front().time;
        t = std::min(t, next_submit_);
        return t;
    }
    /// Whether job j holds GPUs now.
    [[nodiscard]] bool is_running(std::uint32_t j) const noexcept {
        return preempt_ ? running_flag_[j] != 0 : rec_[j].num_gpus != 0 && rec_[j].start <= now_ && rec_[j].end > now_;
    }
    /// GPU-seconds job j has held GPUs so far (its attained service).
    [[nodiscard]] double attained(std::uint32_t j) const noexcept {
        if (preempt_) return attained_[j] + (running_flag_[j] ? double(rec_[j].num_gpus) * (now_ - run_start_[j]) : 0.0);
        const auto& r = rec_[j];
        if (r.num_gpus == 0 || r.start > now_) return 0.0;
        return double(r.num_gpus) * (std::min(now_, r.end) - r.start);
    }
    /// Job j's record so far (its current or last run's GPUs: gpus_of(record(j))).
    [[nodiscard]] const job_record& record(std::uint32_t j) const noexcept { return rec_[j]; }
    /// Whether job j has started (it has a placement, now or before).
    [[nodiscard]] bool has_started(std::uint32_t j) const noexcept { return rec_[j].num_gpus != 0; }
    /// How often job j was suspended.
    [[nodiscard]] std::uint32_t preemptions(std::uint32_t j) const noexcept { return rec_[j].preemptions; }
    /// Ideal seconds of work job j has left (its whole ideal duration before it starts).
    [[nodiscard]] double work_left(std::uint32_t j) const noexcept {
        if (!preempt_) return rec_[j].num_gpus && rec_[j].start <= now_ ? std::max(0.0, (rec_[j].end - now_) / rec_[j].slowdown) : ideal_[j];
        if (!running_flag_[j]) return work_[j];
        const double useful = std::max(0.0, now_ - run_start_[j] - overhead_of(j));
        return std::max(0.0, work_[j] - useful / rec_[j].slowdown);
    }
    /// The slowdown of job j's current (or last) placement.
    [[nodiscard]] double slowdown(std::uint32_t j) const noexcept { return rec_[j].slowdown; }
    /// When job j's current run started (with preemption on; its start otherwise).
    [[nodiscard]] double run_start(std::uint32_t j) const noexcept { return preempt_ ? run_start_[j] : rec_[j].start; }
    /// Busy GPU-seconds so far.
    [[nodiscard]] double busy_gpu_time() const noexcept { return busy_gpu_time_; }
    /// GPU memory (GB) x seconds used so far.
    [[nodiscard]] double memory_time() const noexcept { return memory_time_; }
    /// When running job j is due to end at its current rate.
    [[nodiscard]] double projected_end(std::uint32_t j) const noexcept {
        return table_ ? last_[j] + remaining_[j] / rate_[j] : rec_[j].end;
    }
    /// Current progress rate of running job j (1 without co-location).
    [[nodiscard]] double rate(std::uint32_t j) const noexcept { return table_ ? rate_[j] : 1.0; }
    /// GPU share a job asks for (TrainingJob::gpu_fraction; 1 for job types without it).
    [[nodiscard]] static double share_of(const J& job) noexcept {
        if constexpr (requires { job.gpu_fraction; }) return double(job.gpu_fraction);
        else return 1.0;
    }
    /// Memory per GPU of job j (0 unless set at reset with co-location on).
    [[nodiscard]] double memory_of(std::uint32_t j) const noexcept { return table_ ? memory_[j] : 0.0; }

    /// Moves time to the next event, or to `until` when that is earlier (then nothing happens but
    /// time), and processes every completion, then every arrival, due then; says what happened.
    /// Precondition: has_events() or a finite `until`.
    advance_result advance(double until = never) {
        advance_result ev;
        const double t = std::min(next_event_time(), until);
        const double dt = t - now_;
        ev.elapsed = dt;
        ev.area = double(in_system_) * dt;
        area_ += ev.area;
        ev.in_makespan = next_arrival_ > 0;
        busy_gpu_time_ += double(cluster_.busy_gpus()) * dt;
        memory_time_ += cluster_.memory_used_total() * dt;
        now_ = t;
        const std::size_t finished_before = finished_.size();
        while (!heap_.empty() && heap_.front().time <= t) {
            std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
            const auto e = heap_.back();
            heap_.pop_back();
            if (table_ && e.version != version_[e.job]) continue;  // superseded by a rate change (suspended jobs leave the heap)
            // the GPUs from the event itself: their loads need not wait for the job's record
            const auto gpus = std::span<const gpu_id>(placements_).subspan(e.gpu_offset, e.num_gpus);
            if (table_) {
                ++stamp_;
                affected_.clear();
                const double share = share_of(jobs_[e.job]);
                for (auto g : gpus) {
                    cluster_.release(g, e.job, memory_[e.job], share);
                    for (auto o : cluster_.jobs_on(g)) touch(o);
                }
            } else if (cluster_.exclusive()) {
                cluster_.release_exclusive(gpus);
            } else {
                for (auto g : gpus) cluster_.release(g);
            }
            auto& r = rec_[e.job];
            r.end = e.time;
            if (preempt_) {
                running_flag_[e.job] = 0;
                const double ran = e.time - run_start_[e.job], k = double(r.num_gpus);  // the GPUs of its current run
                r.run_time += ran;
                attained_[e.job] += k * ran;
                r.lost_gpu_time += k * overhead_of(e.job);  // the last restart's overhead, spent in full
                if (failing_) r.checkpoint_gpu_time += k * std::max(0.0, ran - overhead_of(e.job)) * writing_[e.job];
            } else {
                r.run_time = e.time - r.start;
            }
            const double life = e.time - double(jobs_[e.job].submit_time);
            r.contention = life > 0 ? (area_ - arrival_area_[e.job]) / life : 1.0;
            finished_.push_back(r);
            --in_system_;
            --running_;
            if (table_) update_rates();
        }
        drop_stale();
        ev.finished = std::span<const job_record>(finished_).subspan(finished_before);
        ev.first_arrival = static_cast<std::uint32_t>(next_arrival_);
        while (next_submit_ <= t && next_arrival_ < jobs_.size()) {
            ++in_system_;
            arrival_area_[next_arrival_] = area_;
            next_submit_ = submit_of(++next_arrival_);
        }
        ev.arrivals = static_cast<std::uint32_t>(next_arrival_ - ev.first_arrival);
        return ev;
    }

    /// Starts job j now on `gpus` (free GPUs, any order) with the given slowdown and comm cost;
    /// it ends at now + ideal duration x slowdown (a resumed job: now + restart overhead + the work
    /// it has left x slowdown).
    void start(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost) {
        if (preempt_) return resume(j, gpus, slowdown, comm_cost);
        const double end = now_ + ideal_[j] * slowdown;
        auto& r = rec_[j];
        r.id = jobs_[j].id;
        r.model = jobs_[j].model;
        r.num_gpus = static_cast<std::uint32_t>(gpus.size());
        r.submit = jobs_[j].submit_time;
        r.start = now_;
        r.end = end;
        r.ideal_duration = ideal_[j];
        r.share = share_of(jobs_[j]);
        r.comm_cost = comm_cost;
        r.slowdown = slowdown;
        r.gpu_offset = static_cast<std::uint32_t>(placements_.size());
        ++running_;
        if (!table_) {
            placements_.insert(placements_.end(), gpus.begin(), gpus.end());
            if (cluster_.exclusive()) cluster_.allocate_exclusive(gpus, j, end);
            else
                for (auto g : gpus) cluster_.allocate(g, j, end);
            push_event(end, j, 0);
            return;
        }
        start_shared(j, gpus, slowdown, end);
    }

    /// start() with co-location: the rates of the jobs sharing GPUs with j change. (Out of line:
    /// start() is on every decision's path, this only with co-location.)
    GPUPLACE_NOINLINE void start_shared(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double end);

    /// Suspends running job j now (preemption on): its GPUs are freed, it keeps the work it made
    /// up to its last checkpoint, and its next start pays the restart overhead.
    void suspend(std::uint32_t j);

    // ---- reallocation (preemption on): what a round-based scheduler does to its jobs ----------

    /// Starts or resumes job j (not running) on `gpus` as start() does, paying `overhead` seconds on
    /// them (a checkpoint-restore) before it makes progress again, instead of the restart overhead.
    void restart(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost, double overhead);
    /// Moves running job j to `gpus` (another placement, possibly of another GPU type): the work it
    /// made so far is kept (it checkpoints now, losing nothing), its GPUs are freed and it pays
    /// `overhead` seconds on the new ones before it makes progress again. Not a preemption: its
    /// record's preemption count is unchanged. `gpus` may share GPUs with its current placement.
    void move(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost, double overhead);
    /// Stops running job j now, keeping all the work it made (it checkpoints now); a preemption of
    /// its record when `preempted` (a job that leaves the GPUs), not when it is about to restart
    /// elsewhere (a move in two steps: stop, then restart()).
    void stop(std::uint32_t j, bool preempted) {
        stop_run(j, true);
        if (preempted) ++rec_[j].preemptions;
    }
    /// Preemption on, before any job starts: gives job j a placement slot of `max_gpus[j]` GPUs
    /// (at least its request), so that restart() may place it on any count up to that (an elastic
    /// job, env/round_front.hpp). A job's record, attained service and lost GPU time then count the
    /// GPUs of each run.
    void reserve_slots(std::span<const std::uint32_t> max_gpus) {
        std::size_t off = 0;
        for (std::size_t i = 0; i < jobs_.size(); ++i) {
            slot_[i] = static_cast<std::uint32_t>(off);
            off += std::max<std::size_t>(jobs_[i].num_gpus, i < max_gpus.size() ? max_gpus[i] : 0);
        }
        placements_.resize(off);
    }
    /// Counts a preemption of job j (a job stopped for a move that did not restart after all).
    void count_preemption(std::uint32_t j) noexcept { ++rec_[j].preemptions; }
    /// The checkpoint-restore seconds job j's current (or last) run pays before progressing.
    [[nodiscard]] double restart_overhead(std::uint32_t j) const noexcept { return overhead_of(j); }
    /// The seconds of progress between job j's checkpoints in its current (or last) run: its own
    /// with failures on (set_checkpointing()), the preemption costs' otherwise (0: it checkpoints
    /// when stopped, losing nothing).
    [[nodiscard]] double checkpoint_interval(std::uint32_t j) const noexcept { return failing_ ? ckpt_[j] : costs_.checkpoint_interval; }
    /// Whether failures are on (enable_failures()).
    [[nodiscard]] bool failures_on() const noexcept { return failing_; }
    /// Seconds of progress running job j made since its current run started (after its overhead);
    /// 0 when it is not running.
    [[nodiscard]] double useful_run_time(std::uint32_t j) const noexcept {
        return is_running(j) ? std::max(0.0, now_ - run_start_[j] - overhead_of(j)) : 0.0;
    }

    /// Metrics of the jobs finished so far (scratch is reused).
    [[nodiscard]] metrics compute(std::vector<double>& scratch) const {
        const double first = jobs_.empty() ? 0.0 : double(jobs_.front().submit_time);
        return compute_metrics(finished_, jobs_.size(), cluster_.num_gpus(), first, scratch);
    }

private:
    /// The overhead of job j's current run: the restart overhead when it was resumed (none on its
    /// first start), or what restart() / move() gave.
    [[nodiscard]] double overhead_of(std::uint32_t j) const noexcept { return overhead_[j]; }

    /// Stops running job j now: its run is accounted for (run time, attained service, the work it
    /// keeps: up to its last checkpoint, or all of it with `checkpoint_now`), its completion event
    /// leaves the heap and its GPUs are freed. suspend() and move() share it.
    void stop_run(std::uint32_t j, bool checkpoint_now);

    /// start() with preemption on: a first start or a resume, on the job's own placement slot.
    /// (Out of line, as start_shared().)
    GPUPLACE_NOINLINE void resume(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost);

    /// The index of a job of jobs_.
    [[nodiscard]] std::size_t index_of(const J& j) const noexcept { return std::size_t(&j - jobs_.data()); }

    /// Submit time of job i, or never past the last job.
    [[nodiscard]] double submit_of(std::size_t i) const noexcept {
        return i < jobs_.size() ? double(jobs_[i].submit_time) : never;
    }

    struct event {
        double time;
        std::uint32_t job;
        std::uint32_t version;
        std::uint32_t gpu_offset, num_gpus;  ///< the job's GPUs in placements_ (as in its record)
        friend bool operator>(const event& a, const event& b) noexcept {
            return a.time > b.time || (a.time == b.time && (a.job > b.job || (a.job == b.job && a.version > b.version)));
        }
    };

    /// Schedules job j's end (its record must hold its GPUs).
    void push_event(double time, std::uint32_t j, std::uint32_t version) {
        heap_.push_back({time, j, version, rec_[j].gpu_offset, rec_[j].num_gpus});
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    }

    /// Adds job o to the set whose rates must be recomputed (once per stamp).
    void touch(std::uint32_t o) {
        if (mark_[o] == stamp_) return;
        mark_[o] = stamp_;
        affected_.push_back(o);
    }

    /// Co-location: brings every affected job's remaining work up to now, recomputes its rate from
    /// the jobs it shares GPUs with (its slowest GPU), and reschedules its completion.
    void update_rates() {
        for (auto a : affected_) {
            remaining_[a] -= rate_[a] * (now_ - last_[a]);
            if (remaining_[a] < 0) remaining_[a] = 0;
            last_[a] = now_;
            const auto& ja = jobs_[a];
            const double sa = share_of(ja);
            double r = 1.0;
            for (auto g : gpus_of(rec_[a])) {
                double f = 1.0;
                for (auto o : cluster_.jobs_on(g))
                    if (o != a) f *= table_->factor(ja.model, sa, jobs_[o].model, share_of(jobs_[o]));
                r = std::min(r, f);
            }
            rate_[a] = r > 1e-9 ? r : 1e-9;
            const double end = now_ + remaining_[a] / rate_[a];
            rec_[a].end = end;
            push_event(end, a, ++version_[a]);
        }
        drop_stale();
    }

    /// Keeps a valid event at the top of the heap (superseded ones are dropped lazily).
    void drop_stale() {
        if (!table_) return;
        while (!heap_.empty() && heap_.front().version != version_[heap_.front().job]) {
            std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
            heap_.pop_back();
        }
    }
    // what every step reads first, together (see basic_env's members)
    std::shared_ptr<const interference_table> table_;  ///< co-location's, or null
    double now_ = 0, busy_gpu_time_ = 0, memory_time_ = 0;
    std::size_t next_arrival_ = 0, in_system_ = 0, running_ = 0;
    double next_submit_ = never;  ///< submit time of jobs_[next_arrival_] (never when all arrived)
    std::vector<J> jobs_;
    std::vector<job_record> finished_;
    std::vector<event> heap_;
    std::vector<gpu_id> placements_;
    std::vector<job_record> rec_;
    std::vector<double> ideal_;
    cluster_state cluster_;
    double area_ = 0;                  ///< jobs in system x time since the episode began
    std::vector<double> arrival_area_;  ///< per job: area_ at its arrival
    // preemption
    bool preempt_ = false;
    preemption_costs costs_;
    std::vector<double> work_, run_start_, attained_;  ///< per job: ideal work left at its last suspension, run start, GPU-seconds before it
    std::vector<double> overhead_;                     ///< per job: the overhead its current (or last) run pays
    std::vector<std::uint8_t> running_flag_;
    std::vector<std::uint32_t> slot_;  ///< per job: where its placement is kept in placements_
    // failures
    bool failing_ = false;
    double fail_overhead_ = 0;
    std::vector<double> ckpt_, writing_;     ///< per job: its run's checkpoint interval and the share spent writing
    std::vector<std::uint8_t> interrupted_;  ///< per job: its last run ended in a failure
    // co-location
    std::vector<double> memory_, remaining_, rate_, last_;
    std::vector<std::uint32_t> version_;
    std::vector<std::uint64_t> mark_;
    std::vector<std::uint32_t> affected_;
    std::uint64_t stamp_ = 0;
};

using simulator = basic_simulator<>;

}  // namespace gpuplace

#include "impl/simulator_inl.hpp"  // the members no decision runs (templates: always included)
