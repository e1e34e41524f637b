#pragma once
/// \file simulator.hpp
/// Event-driven, continuous-time simulation of a cluster: arrivals and completions in a priority
/// queue, the GPUs each running job holds, and a record of every finished job. It makes no
/// scheduling decisions: the environment (or any scheduler) calls start() for the jobs it places.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "cluster.hpp"
#include "job.hpp"
#include "metrics.hpp"
#include "topology.hpp"

namespace gpuplace {

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

    /// Starts an episode with `jobs` sorted by submit time (ties by position) and the ideal
    /// duration of each. Allocates only when the workload is larger than any seen before.
    void reset(std::span<const J> jobs, std::span<const double> ideal) {
        jobs_.assign(jobs.begin(), jobs.end());
        ideal_.assign(ideal.begin(), ideal.end());
        rec_.resize(jobs_.size());
        finished_.clear();
        finished_.reserve(jobs_.size());
        heap_.clear();
        heap_.reserve(jobs_.size());
        std::size_t total = 0;
        for (const auto& j : jobs_) total += j.num_gpus;
        placements_.clear();
        placements_.reserve(total);
        cluster_.clear();
        next_arrival_ = 0;
        in_system_ = 0;
        now_ = jobs_.empty() ? 0.0 : std::min(0.0, double(jobs_.front().submit_time));
        busy_gpu_time_ = 0;
    }

    [[nodiscard]] double now() const noexcept { return now_; }
    [[nodiscard]] const cluster_state& cluster() const noexcept { return cluster_; }
    [[nodiscard]] std::span<const J> jobs() const noexcept { return jobs_; }
    [[nodiscard]] const J& job(std::uint32_t j) const noexcept { return jobs_[j]; }
    [[nodiscard]] double ideal_duration(std::uint32_t j) const noexcept { return ideal_[j]; }
    /// Jobs that have arrived and not finished.
    [[nodiscard]] std::size_t in_system() const noexcept { return in_system_; }
    [[nodiscard]] std::size_t running() const noexcept { return heap_.size(); }
    [[nodiscard]] std::size_t arrived() const noexcept { return next_arrival_; }
    [[nodiscard]] std::span<const job_record> finished() const noexcept { return finished_; }
    /// GPUs of every started job, concatenated (a job_record's gpu_offset indexes it).
    [[nodiscard]] std::span<const gpu_id> placements() const noexcept { return placements_; }
    [[nodiscard]] std::span<const gpu_id> gpus_of(const job_record& r) const noexcept {
        return std::span<const gpu_id>(placements_).subspan(r.gpu_offset, r.num_gpus);
    }
    [[nodiscard]] bool all_done() const noexcept { return finished_.size() == jobs_.size(); }
    [[nodiscard]] bool has_events() const noexcept { return !heap_.empty() || next_arrival_ < jobs_.size(); }
    /// Time of the next arrival or completion (infinity when none).
    [[nodiscard]] double next_event_time() const noexcept {
        double t = never;
        if (!heap_.empty()) t = heap_.front().time;
        if (next_arrival_ < jobs_.size()) t = std::min(t, double(jobs_[next_arrival_].submit_time));
        return t;
    }
    /// Busy GPU-seconds so far.
    [[nodiscard]] double busy_gpu_time() const noexcept { return busy_gpu_time_; }

    /// Moves time to the next event and processes every completion, then every arrival, due then;
    /// `on_arrival(job index)` is called for each arrival. Returns the integral of jobs in system
    /// over the elapsed interval. Precondition: has_events().
    template <class OnArrival>
    double advance(OnArrival&& on_arrival) {
        const double t = next_event_time();
        const double dt = t - now_;
        const double area = double(in_system_) * dt;
        busy_gpu_time_ += double(cluster_.busy_gpus()) * dt;
        now_ = t;
        while (!heap_.empty() && heap_.front().time <= t) {
            std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
            const auto e = heap_.back();
            heap_.pop_back();
            auto& r = rec_[e.job];
            for (auto g : gpus_of(r)) cluster_.release(g);
            r.end = e.time;
            finished_.push_back(r);
            --in_system_;
        }
        while (next_arrival_ < jobs_.size() && double(jobs_[next_arrival_].submit_time) <= t) {
            ++in_system_;
            on_arrival(static_cast<std::uint32_t>(next_arrival_++));
        }
        return area;
    }

    /// Starts job j now on `gpus` (free GPUs, any order) with the given slowdown and comm cost;
    /// it ends at now + ideal duration x slowdown.
    void start(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost) {
        const double end = now_ + ideal_[j] * slowdown;
        auto& r = rec_[j];
        r.id = jobs_[j].id;
        r.model = jobs_[j].model;
        r.num_gpus = static_cast<std::uint32_t>(gpus.size());
        r.submit = jobs_[j].submit_time;
        r.start = now_;
        r.end = end;
        r.ideal_duration = ideal_[j];
        r.comm_cost = comm_cost;
        r.slowdown = slowdown;
        r.gpu_offset = static_cast<std::uint32_t>(placements_.size());
        for (auto g : gpus) {
            placements_.push_back(g);
            cluster_.allocate(g, j, end);
        }
        heap_.push_back({end, j});
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
    }

    /// Metrics of the jobs finished so far (scratch is reused).
    [[nodiscard]] metrics compute(std::vector<double>& scratch) const {
        const double first = jobs_.empty() ? 0.0 : double(jobs_.front().submit_time);
        return compute_metrics(finished_, jobs_.size(), cluster_.num_gpus(), first, scratch);
    }

private:
    struct event {
        double time;
        std::uint32_t job;
        friend bool operator>(const event& a, const event& b) noexcept {
            return a.time > b.time || (a.time == b.time && a.job > b.job);
        }
    };
    std::vector<J> jobs_;
    std::vector<double> ideal_;
    std::vector<job_record> rec_;
    std::vector<job_record> finished_;
    std::vector<event> heap_;
    std::vector<gpu_id> placements_;
    cluster_state cluster_;
    std::size_t next_arrival_ = 0, in_system_ = 0;
    double now_ = 0, busy_gpu_time_ = 0;
};

using simulator = basic_simulator<>;

}  // namespace gpuplace
