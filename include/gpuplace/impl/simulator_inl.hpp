#pragma once
/// \file impl/simulator_inl.hpp
/// The definitions of basic_simulator's members that no step runs at every decision (simulator.hpp
/// declares and documents them): starting and forking an episode, preemption, co-location's
/// starts. Templates, so simulator.hpp always includes this file (a user's job type instantiates
/// them); with gpuplace::compiled the default simulator's are compiled once in the library
/// (impl/extern_templates.hpp).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>

#include "../simulator.hpp"

namespace gpuplace {

template <Job J>
template <class Source, class Ideal, class Memory>
void basic_simulator<J>::reset(std::span<const Source> jobs, Ideal&& ideal, Memory&& memory) {
    jobs_.clear();
    for (const auto& j : jobs) jobs_.emplace_back(j);
    ideal_.resize(jobs_.size());
    for (std::size_t i = 0; i < jobs_.size(); ++i) ideal_[i] = ideal(jobs_[i]);
    rec_.assign(jobs_.size(), job_record{});  // (no allocation once as large)
    if (table_) {
        memory_.resize(jobs_.size());
        for (std::size_t i = 0; i < jobs_.size(); ++i) memory_[i] = memory(jobs_[i]);
        remaining_.assign(jobs_.size(), 0.0);
        rate_.assign(jobs_.size(), 1.0);
        last_.assign(jobs_.size(), 0.0);
        version_.assign(jobs_.size(), 0);
        mark_.assign(jobs_.size(), 0);
        affected_.clear();
        affected_.reserve(jobs_.size());
        stamp_ = 0;
    }
    if (preempt_) {
        work_.assign(ideal_.begin(), ideal_.end());
        run_start_.assign(jobs_.size(), 0.0);
        attained_.assign(jobs_.size(), 0.0);
        overhead_.assign(jobs_.size(), 0.0);
        version_.assign(jobs_.size(), 0);
        running_flag_.assign(jobs_.size(), 0);
    }
    if (failing_) {
        ckpt_.assign(jobs_.size(), 0.0);
        writing_.assign(jobs_.size(), 0.0);
        interrupted_.assign(jobs_.size(), 0);
    }
    arrival_area_.resize(jobs_.size());
    area_ = 0;
    memory_time_ = 0;
    finished_.clear();
    finished_.reserve(jobs_.size());
    heap_.clear();
    heap_.reserve(table_ ? 8 * jobs_.size() + 64 : jobs_.size());
    running_ = 0;
    std::size_t total = 0;
    for (const auto& j : jobs_) total += j.num_gpus;
    placements_.clear();
    placements_.reserve(total);
    if (preempt_) {  // a job may be placed more than once: a slot of its own, rewritten at each start
        slot_.resize(jobs_.size());
        std::size_t off = 0;
        for (std::size_t i = 0; i < jobs_.size(); ++i) slot_[i] = static_cast<std::uint32_t>(off), off += jobs_[i].num_gpus;
        placements_.resize(total);
    }
    cluster_.clear();
    next_arrival_ = 0;
    next_submit_ = submit_of(0);
    in_system_ = 0;
    now_ = jobs_.empty() ? 0.0 : std::min(0.0, double(jobs_.front().submit_time));
    busy_gpu_time_ = 0;
}

template <Job J>
template <class Source, class Ideal, class Memory>
void basic_simulator<J>::replace_future(std::span<const Source> future, Ideal&& ideal, Memory&& memory) {
    const std::size_t keep = next_arrival_, n = keep + future.size();
    jobs_.erase(jobs_.begin() + std::ptrdiff_t(keep), jobs_.end());
    for (const auto& j : future) jobs_.emplace_back(j);
    ideal_.resize(n);
    rec_.resize(n);
    arrival_area_.resize(n);
    for (std::size_t i = keep; i < n; ++i) {
        ideal_[i] = ideal(jobs_[i]);
        rec_[i] = job_record{};
    }
    if (table_) {
        memory_.resize(n);
        for (std::size_t i = keep; i < n; ++i) memory_[i] = memory(jobs_[i]);
        remaining_.resize(n, 0.0);
        rate_.resize(n, 1.0);
        last_.resize(n, 0.0);
        version_.resize(n, 0);
        mark_.resize(n, 0);
        affected_.reserve(n);
    }
    if (preempt_) {
        work_.resize(n);
        for (std::size_t i = keep; i < n; ++i) work_[i] = ideal_[i];
        run_start_.resize(n, 0.0);
        attained_.resize(n, 0.0);
        overhead_.resize(n, 0.0);
        version_.resize(n, 0);
        running_flag_.resize(n, 0);
        if (failing_) {
            ckpt_.resize(n, 0.0);
            writing_.resize(n, 0.0);
            interrupted_.resize(n, 0);
        }
        slot_.resize(n);
        std::size_t off = 0;
        for (std::size_t i = 0; i < n; ++i) slot_[i] = static_cast<std::uint32_t>(off), off += jobs_[i].num_gpus;
        // the kept jobs' slots are unchanged (a prefix): the placements of the running ones stay valid
        placements_.resize(off);
    } else {
        std::size_t total = placements_.size();
        for (std::size_t i = keep; i < n; ++i) total += jobs_[i].num_gpus;
        placements_.reserve(total);
    }
    finished_.reserve(n);
    heap_.reserve(table_ ? 8 * n + 64 : n);
    next_submit_ = submit_of(next_arrival_);
}

template <Job J>
void basic_simulator<J>::set_ideal_duration(std::uint32_t j, double ideal) {
    auto& r = rec_[j];
    const double done = ideal_[j] - work_left(j);
    const bool running = is_running(j);
    ideal_[j] = ideal;
    if (r.num_gpus) r.ideal_duration = ideal;
    const double left = std::max(0.0, ideal - done);
    if (!running) {
        if (preempt_) work_[j] = left;
        return;
    }
    double end = now_ + left * r.slowdown;
    if (preempt_) {
        end += std::max(0.0, run_start_[j] + overhead_of(j) - now_);
        work_[j] = left + std::max(0.0, now_ - run_start_[j] - overhead_of(j)) / r.slowdown;  // the work at this run's start
    }
    r.end = end;
    for (auto& e : heap_)
        if (e.job == j) e.time = end;
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
    cluster_.set_end_time(gpus_of(r), end);
}

template <Job J>
void basic_simulator<J>::suspend(std::uint32_t j) {
    stop_run(j, false);
    ++rec_[j].preemptions;
}

template <Job J>
void basic_simulator<J>::stop_run(std::uint32_t j, bool checkpoint_now) {
    auto& r = rec_[j];
    const double ran = now_ - run_start_[j], overhead = overhead_of(j);
    const double useful = std::max(0.0, ran - overhead);
    const double interval = checkpoint_interval(j);
    const double kept = !checkpoint_now && interval > 0 ? std::floor(useful / interval) * interval : useful;
    work_[j] = std::max(0.0, work_[j] - kept / r.slowdown);
    const double k = double(r.num_gpus);  // the GPUs of this run
    r.lost_gpu_time += k * (std::min(ran, overhead) + (useful - kept));
    if (failing_) r.checkpoint_gpu_time += k * kept * writing_[j];
    r.run_time += ran;
    attained_[j] += k * ran;
    running_flag_[j] = 0;
    ++version_[j];
    // its completion event leaves the heap now, so that the heap never holds more than the running jobs
    for (std::size_t i = 0; i < heap_.size(); ++i)
        if (heap_[i].job == j) {
            heap_[i] = heap_.back();
            heap_.pop_back();
            std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
            break;
        }
    cluster_.release_exclusive(gpus_of(r));
    --running_;
}

template <Job J>
void basic_simulator<J>::move(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost, double overhead) {
    stop_run(j, true);
    restart(j, gpus, slowdown, comm_cost, overhead);
}

template <Job J>
void basic_simulator<J>::start_shared(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double end) {
    remaining_[j] = ideal_[j] * slowdown;
    rate_[j] = 1.0;
    last_[j] = now_;
    ++stamp_;
    affected_.clear();
    touch(j);
    const double share = share_of(jobs_[j]);
    for (auto g : gpus) {
        placements_.push_back(g);
        for (auto o : cluster_.jobs_on(g)) touch(o);
        cluster_.allocate(g, j, end, memory_[j], share);
    }
    update_rates();
}

template <Job J>
void basic_simulator<J>::resume(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost) {
    if (failing_ && interrupted_[j]) {  // after a failure: its restart overhead
        interrupted_[j] = 0;
        return restart(j, gpus, slowdown, comm_cost, fail_overhead_);
    }
    restart(j, gpus, slowdown, comm_cost, rec_[j].preemptions ? costs_.restart_overhead : 0.0);
}

template <Job J>
void basic_simulator<J>::enable_failures(double restart_overhead) {
    if (!preempt_) set_preemption({0.0, 0.0});
    failing_ = true;
    fail_overhead_ = restart_overhead;
}

template <Job J>
void basic_simulator<J>::fail(std::uint32_t j) {
    stop_run(j, false);
    ++rec_[j].interruptions;
    interrupted_[j] = 1;
}

template <Job J>
void basic_simulator<J>::restart(std::uint32_t j, std::span<const gpu_id> gpus, double slowdown, double comm_cost, double overhead) {
    auto& r = rec_[j];
    const bool first = r.num_gpus == 0;  // never started (a record is filled at the first start)
    overhead_[j] = overhead;
    const double end = now_ + overhead + work_[j] * slowdown;
    r.num_gpus = static_cast<std::uint32_t>(gpus.size());  // this run's GPUs (an elastic job's vary)
    if (first) {
        r.id = jobs_[j].id;
        r.model = jobs_[j].model;
        r.submit = jobs_[j].submit_time;
        r.start = now_;
        r.ideal_duration = ideal_[j];
        r.share = share_of(jobs_[j]);
    }
    r.end = end;
    r.comm_cost = comm_cost;
    r.slowdown = slowdown;
    r.gpu_offset = slot_[j];
    run_start_[j] = now_;
    running_flag_[j] = 1;
    ++running_;
    std::copy(gpus.begin(), gpus.end(), placements_.begin() + slot_[j]);
    cluster_.allocate_exclusive(gpus, j, end);
    push_event(end, j, version_[j]);
}

}  // namespace gpuplace
