#pragma once
/// \file env/discipline.hpp
/// The preemptive queue disciplines of the scheduling core (preemption on): at every decision
/// point every active job (waiting or running) gets a priority, and the jobs run in that order
/// while their GPUs fit; the running jobs left out are suspended.
///  - las: least attained GPU-service first (continuous).
///  - 2d_las: Tiresias' discretised 2D-LAS: queues by attained GPU-service since the last promotion
///    (thresholds), first queue first; inside a queue the running jobs first, then in the order
///    jobs entered it; a job that waits longer than `starvation` x its service since its last
///    promotion returns to the first queue.
///  - gittins: the highest Gittins index of attained GPU-service first (information.hpp).
///  - srtf: the least remaining time first (the true one: an oracle, not causal).
///  - capacity, drf, themis, edf, edf_ac: by tenant, fair share and deadline (env/tenancy.hpp).
///  - registered: a discipline registered by name (discipline_registry.hpp), its key looked up once
///    at init().
/// With a spot class (tenancy.hpp), every guaranteed job comes before every spot job.
/// Ties: the earlier job.
/// Cost: a decision orders the active jobs. The continuous keys (las, gittins, srtf, themis, edf)
/// are sorted, O(A log A) for A active jobs; the keys of capacity and drf are a few classes with
/// ties broken by job id, so those orders are bucketed from the active jobs kept in id order,
/// O(A + tenants), without a sort (the order a sort by the same keys gives; capacity's in one
/// pass that also decides which jobs are within their quota). The run set and the jobs left out
/// are then one more pass.
/// Progress: at a decision of the clock (a round, a 2D-LAS demotion or promotion) a running job
/// whose current run has not yet kept useful work worth its restart (as many seconds as the
/// restart overhead it paid, past its last checkpoint, and more than none) keeps its GPUs. Such
/// decisions recur without end, and a round shorter than the restart overhead would otherwise
/// suspend every resumed job before it makes progress; arrivals and completions, which are
/// finite, decide as before.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <span>
#include <vector>

#include "../config.hpp"
#include "../discipline_registry.hpp"
#include "../information.hpp"
#include "../detail/inline.hpp"
#include "tenancy.hpp"

namespace gpuplace::env_detail {

/// What a registered discipline reads besides the simulator: the core's shown durations and the
/// jobs' declared fields (job_fields.hpp's episode_extras).
struct discipline_inputs {
    std::span<const double> shown;
    std::span<const double> fields;
    std::size_t width = 0;
    std::span<const job_field> decls;
};

class discipline {
public:
    static constexpr double never = std::numeric_limits<double>::infinity();

    /// `name`: with order registered, the registered discipline's (ConfigError when none is).
    void init(queue_order order, const preemption_config& p, gittins_table g, std::string_view name = {}) {
        user_ = order == queue_order::registered ? require_discipline(name) : nullptr;
        order_ = order;
        p_ = p;
        gittins_ = std::move(g);
    }
    /// Sizes the per-job state for an episode of n jobs starting at `start` among `tenants`
    /// tenants (allocates only for more jobs or tenants than before).
    void reset(std::size_t n, double start, std::size_t tenants = 0) {
        start_of_.reserve(2 * (tenants + 2) + 1);
        running_.clear();
        running_.reserve(n);
        active_.clear();
        active_.reserve(n);
        order_out_.reserve(n);
        suspend_.reserve(n);
        dirty_ = true;
        clock_ = false;
        start_ = start;
        queue_.assign(n, 0);
        base_.assign(n, 0.0);
        since_.assign(n, 0.0);
        entered_.assign(n, 0.0);
        run_.assign(n, 0);
        key_.resize(n);
        order_scratch_.reserve(n);
        bucketed_.reserve(n);
        for (auto& b : rest_) b.resize(n);
    }
    /// Makes room for n jobs in all, keeping the state of the present ones (a forked future).
    void grow(std::size_t n) {
        queue_.resize(n, 0);
        base_.resize(n, 0.0);
        since_.resize(n, 0.0);
        entered_.resize(n, 0.0);
        run_.resize(n, 0);
        key_.resize(n);
        order_scratch_.reserve(n);
        bucketed_.reserve(n);
        for (auto& b : rest_) b.resize(n);
        order_out_.reserve(n);
        active_.reserve(n);
    }
    /// Job j arrived at `now` (into the first queue). Jobs arrive in id order, so the active list
    /// (kept by the bucketed disciplines alone) is appended to.
    void arrived(std::uint32_t j, double now) {
        since_[j] = entered_[j] = now;
        if (bucketed()) active_.insert(std::upper_bound(active_.begin(), active_.end(), j), j);
    }
    /// Job j started; job j stopped running without finishing (a failure: it waits again); job j
    /// finished.
    void started(std::uint32_t j) { running_.push_back(j); }
    void stopped(std::uint32_t j) noexcept { std::erase(running_, j); }
    void finished(std::uint32_t j) noexcept {
        std::erase(running_, j);
        if (!bucketed()) return;
        const auto it = std::lower_bound(active_.begin(), active_.end(), j);
        if (it != active_.end() && *it == j) active_.erase(it);
    }
    /// An arrival or a completion (`clock` false), or a decision time of the clock alone (a round, a
    /// 2D-LAS queue change): the run set is decided again.
    void touch(bool clock = false) noexcept {
        clock_ = dirty_ ? clock_ && clock : clock;
        dirty_ = true;
    }
    [[nodiscard]] bool stale() const noexcept { return dirty_; }
    /// The running jobs (in the order they started, since the last decision).
    [[nodiscard]] const std::vector<std::uint32_t>& running() const noexcept { return running_; }
    [[nodiscard]] bool in_run_set(std::uint32_t j) const noexcept { return run_[j] != 0; }
    /// 2D-LAS: the queue job j is in.
    [[nodiscard]] std::uint32_t queue_of(std::uint32_t j) const noexcept { return queue_[j]; }

    /// Decides the run set at `now` among the waiting and the running jobs on `num_gpus` GPUs:
    /// marks its members (in_run_set()); returns the running jobs outside it, to suspend (they
    /// leave the running list and wait again). order() then holds the jobs that will wait (the
    /// waiting ones and those to suspend) in priority order. `ten`: the jobs' tenants, classes and
    /// deadlines (env/tenancy.hpp), needed by capacity, drf, themis, edf and edf_ac; null when
    /// none is on. `in`: what a registered discipline reads (needed by it alone).
    template <class Sim>
    std::span<const std::uint32_t> decide(const Sim& sim, std::span<const std::uint32_t> waiting, std::size_t num_gpus, double now,
                                          tenancy* ten = nullptr, const discipline_inputs& in = {}) {
        ten_ = ten;
        const std::span<const std::uint32_t> running = running_;
        auto& order = order_out_;
        auto& suspend = suspend_;
        suspend.clear();
        update_queues(sim, waiting, running, now);
        auto& all = order_scratch_;
        if (order_ == queue_order::capacity) {
            bucket_capacity(sim, all);
        } else if (bucketed()) {
            all.assign(active_.begin(), active_.end());  // the waiting and the running jobs, in id order
            bucket(all);
        } else {
            all.assign(waiting.begin(), waiting.end());
            all.insert(all.end(), running.begin(), running.end());
            if (order_ == queue_order::registered) user_keys(sim, all, num_gpus, now, in);
            else
                for (auto j : all) key_[j] = key_of(sim, j, now, all.size());
            std::sort(all.begin(), all.end(), [&](std::uint32_t a, std::uint32_t b) { return key_[a] < key_[b]; });
        }
        std::size_t free = num_gpus;
        const bool settle = clock_ && (p_.restart_overhead > 0 || p_.checkpoint_interval > 0 || sim.failures_on());
        if (settle)  // the runs that have not yet paid for their restart keep their GPUs first
            for (auto j : running)
                if (settling(sim, j, now)) free -= sim.job(j).num_gpus;
        if (order_ == queue_order::drf)
            ten_->fill(sim, all, free, [&](std::uint32_t j) { return settle && sim.is_running(j) && settling(sim, j, now); });
        order.resize(all.size());  // the waiting jobs and the running ones to suspend (no allocation: reserved)
        std::size_t left_out = 0;
        for (auto j : all) {  // one pass: the run set in priority order, and the jobs left out
            const bool runs = sim.is_running(j);
            if (settle && runs && settling(sim, j, now)) {
                run_[j] = 1;
                continue;
            }
            const std::size_t k = sim.job(j).num_gpus;
            run_[j] = k <= free;
            if (run_[j]) free -= k;
            if (!(runs && run_[j])) order[left_out++] = j;
        }
        order.resize(left_out);
        for (auto j : running)
            if (!run_[j]) suspend.push_back(j);
        for (auto j : suspend) {
            std::erase(running_, j);
            since_[j] = now;  // it keeps its queue and its place there
        }
        dirty_ = false;
        clock_ = false;
        return suspend;
    }
    /// The jobs that wait after the last decide(), in priority order.
    [[nodiscard]] std::span<const std::uint32_t> order() const noexcept { return order_out_; }

    /// The next time a priority jumps without an event: a 2D-LAS demotion or promotion, or the
    /// next round (counted from the episode's start); never when none.
    template <class Sim>
    [[nodiscard]] double next_decision(const Sim& sim, std::span<const std::uint32_t> waiting, double now) const noexcept {
        const std::span<const std::uint32_t> running = running_;
        double t = never;
        if (p_.round > 0) t = start_ + (std::floor((now - start_) / p_.round) + 1) * p_.round;
        if (order_ != queue_order::two_d_las) return t;
        const std::size_t last = p_.thresholds.size();
        for (auto j : running)
            if (queue_[j] < last) {
                const double left = p_.thresholds[queue_[j]] - (sim.attained(j) - base_[j]);
                t = std::min(t, now + std::max(0.0, left) / double(sim.job(j).num_gpus));
            }
        if (p_.starvation > 0)
            for (auto j : waiting)
                if (queue_[j] > 0) t = std::min(t, since_[j] + p_.starvation * (sim.attained(j) - base_[j]));
        return t > now ? t : never;
    }

private:
    struct key {
        double a = 0, b = 0, c = 0;
        std::uint32_t j = 0;
        std::uint32_t cls = 0;  ///< 1: a spot job (after every guaranteed one)
        friend bool operator<(const key& x, const key& y) noexcept {
            if (x.cls != y.cls) return x.cls < y.cls;
            if (x.a != y.a) return x.a < y.a;
            if (x.b != y.b) return x.b < y.b;
            if (x.c != y.c) return x.c < y.c;
            return x.j < y.j;
        }
    };

    /// Whether decisions bucket the active jobs (capacity, drf) instead of sorting them.
    [[nodiscard]] bool bucketed() const noexcept { return order_ == queue_order::capacity || order_ == queue_order::drf; }

    /// capacity: the active jobs by class (guaranteed, then spot), within quota first, then id, in
    /// one pass over them (a job is within quota when its tenant's earlier active jobs and it fit
    /// in the quota: tenancy::within_quota); the guaranteed jobs within quota, the usual first
    /// bucket, go straight to `all`, the other three are appended after.
    template <class Sim>
    void bucket_capacity(const Sim& sim, std::vector<std::uint32_t>& all) {
        // Written through indices into buffers sized at reset(): an outlined push_back per job
        // was a tenth of the step at 512 GPUs (perf).
        const std::size_t A = active_.size();
        all.resize(A);
        std::size_t n0 = 0;
        std::array<std::size_t, 3> n{};
        ten_->clear_quota_use();
        for (auto j : active_) {
            const std::size_t b = (ten_->spot(j) ? 2 : 0) + (ten_->within_quota(j, sim.job(j).num_gpus) ? 0 : 1);
            if (b == 0) all[n0++] = j;
            else rest_[b - 1][n[b - 1]++] = j;
        }
        for (std::size_t b = 0; b < 3; ++b) {
            std::copy_n(rest_[b].begin(), n[b], all.begin() + std::ptrdiff_t(n0));
            n0 += n[b];
        }
    }

    /// drf: orders `all` (in id order) by class, then tenant, then id: a stable counting sort over
    /// those few buckets, O(A + tenants).
    void bucket(std::vector<std::uint32_t>& all) {
        const std::size_t per = ten_->num_tenants() + 1;
        const auto of = [&](std::uint32_t j) { return (ten_->spot(j) ? per : 0) + ten_->tenant(j); };
        start_of_.assign(2 * per + 1, 0);
        for (auto j : all) ++start_of_[of(j) + 1];
        for (std::size_t b = 1; b < start_of_.size(); ++b) start_of_[b] += start_of_[b - 1];
        bucketed_.resize(all.size());
        for (auto j : all) bucketed_[start_of_[of(j)]++] = j;
        all.swap(bucketed_);
    }

    /// Whether running job j's current run has not yet kept useful work worth its restart: as
    /// many seconds as the restart overhead its run paid (none on a first run; after a failure the
    /// failures' restart overhead), and more than none, counted to its last checkpoint at its
    /// run's checkpoint interval (as basic_simulator::suspend() keeps it).
    template <class Sim>
    [[nodiscard]] bool settling(const Sim& sim, std::uint32_t j, double now) const noexcept {
        const double overhead = sim.restart_overhead(j), ci = sim.checkpoint_interval(j);
        const double useful = std::max(0.0, now - sim.run_start(j) - overhead);
        const double kept = ci > 0 ? std::floor(useful / ci) * ci : useful;
        return !(kept > 0 && kept >= overhead);
    }

    template <class Sim>
    [[nodiscard]] key key_of(const Sim& sim, std::uint32_t j, double now, std::size_t active) const noexcept {
        key k = base_key(sim, j, now, active);
        if (ten_ && ten_->spot(j)) k.cls = 1;
        return k;
    }
    template <class Sim>
    [[nodiscard]] key base_key(const Sim& sim, std::uint32_t j, double now, std::size_t active) const noexcept {
        switch (order_) {
            case queue_order::las: return {sim.attained(j), 0, 0, j};
            case queue_order::two_d_las: return {double(queue_[j]), sim.is_running(j) ? 0.0 : 1.0, entered_[j], j};
            case queue_order::gittins: return {-gittins_.index(sim.attained(j)), 0, 0, j};
            case queue_order::srtf: return {sim.work_left(j), 0, 0, j};
            case queue_order::drf: return {double(ten_->tenant(j)), 0, 0, j};  // then progressive filling (tenancy::fill)
            case queue_order::themis: return {-ten_->rho(sim, j, now, active), 0, 0, j};
            case queue_order::edf: return {ten_->deadline(j), 0, 0, j};
            case queue_order::edf_ac: return {ten_->admitted(j) ? 0.0 : 1.0, ten_->deadline(j), 0, j};
            default: return {0, 0, 0, j};  // fifo, sjf and fewest_gpus are not preemptive disciplines
        }
    }

    /// A registered discipline: each active job's key from the registered function (out of line:
    /// only this discipline calls it).
    template <class Sim>
    GPUPLACE_NOINLINE void user_keys(const Sim& sim, std::span<const std::uint32_t> all, std::size_t num_gpus, double now,
                                     const discipline_inputs& in) {
        const discipline_view v{now, num_gpus, all.size(), in.decls};
        for (auto j : all) {
            discipline_job d;
            d.index = j;
            d.submit_time = double(sim.job(j).submit_time);
            d.gpus = sim.job(j).num_gpus;
            d.attained = sim.attained(j);
            d.shown_duration = j < in.shown.size() ? in.shown[j] : 0.0;
            d.running = sim.is_running(j);
            d.preemptions = sim.preemptions(j);
            if (in.width) d.fields = in.fields.subspan(std::size_t(j) * in.width, in.width);
            const auto p = user_->key(v, d);
            key_[j] = {p.first, p.second, p.third, j, ten_ && ten_->spot(j) ? 1u : 0u};
        }
    }

    /// 2D-LAS: demotes the running jobs whose service since their last promotion crossed their
    /// queue's threshold; promotes the waiting jobs that starved.
    template <class Sim>
    void update_queues(const Sim& sim, std::span<const std::uint32_t> waiting, std::span<const std::uint32_t> running, double now) {
        if (order_ != queue_order::two_d_las) return;
        const std::size_t last = p_.thresholds.size();
        for (auto j : running)
            while (queue_[j] < last && sim.attained(j) - base_[j] >= p_.thresholds[queue_[j]]) {
                ++queue_[j];
                entered_[j] = now;
            }
        if (p_.starvation > 0)
            for (auto j : waiting) {
                const double served = sim.attained(j) - base_[j];
                if (queue_[j] > 0 && now - since_[j] >= p_.starvation * served) {
                    queue_[j] = 0;
                    base_[j] = sim.attained(j);
                    entered_[j] = now;
                }
            }
    }

    queue_order order_ = queue_order::fifo;
    std::shared_ptr<const registered_discipline> user_;  ///< order registered: the discipline (kept if it is unregistered)
    preemption_config p_;
    gittins_table gittins_;
    tenancy* ten_ = nullptr;             ///< during decide(): its `ten`
    std::vector<std::uint32_t> queue_;   ///< 2D-LAS: per job its queue
    std::vector<double> base_;           ///< 2D-LAS: per job its attained service at its last promotion
    std::vector<double> since_;          ///< per job: when it last started waiting
    std::vector<double> entered_;        ///< 2D-LAS: per job when it entered its queue
    std::vector<std::uint8_t> run_;      ///< per job: in the run set of the last decision
    std::vector<key> key_;               ///< per job: its priority at the last decision
    std::vector<std::uint32_t> order_scratch_, bucketed_;
    std::array<std::vector<std::uint32_t>, 3> rest_;  ///< bucket_capacity(): the buckets after the first
    std::vector<std::uint32_t> active_;  ///< the arrived jobs not finished (waiting or running), in id order
    std::vector<std::size_t> start_of_;  ///< bucket(): where each bucket starts
    std::vector<std::uint32_t> running_, order_out_, suspend_;  ///< running jobs; the last decision's
    double start_ = 0;                                         ///< the episode's start (rounds)
    bool dirty_ = true;                                        ///< the run set needs deciding
    bool clock_ = false;                                       ///< ... at a decision time of the clock alone
};

}  // namespace gpuplace::env_detail
