// A job type of one's own: each job carries a priority (here: from its model), which a user policy
// reads. In the job action mode the policy starts the waiting job of highest priority; the
// priority-weighted JCT, computed from the finished jobs, is compared with FIFO order.
#include <cstdio>

#include <gpuplace/gpuplace.hpp>

struct priority_job : gpuplace::TrainingJob {
    int priority = 1;  ///< 1 (batch) .. 3 (interactive)
    priority_job() = default;
    explicit priority_job(const gpuplace::TrainingJob& j) : TrainingJob(j), priority(1 + j.model % 3) {}
};

/// Starts the waiting job with the highest priority (the earliest among equals).
struct highest_priority_first {
    void reset(std::uint64_t) {}
    template <class E>
    std::int64_t act(const E& e) {
        std::int64_t best = e.defer_action();
        int best_p = 0;
        for (std::size_t s = 0; s + 1 < e.num_actions(); ++s)
            if (e.action_mask()[s] && e.simulator().job(e.slot_job(s)).priority > best_p)
                best = std::int64_t(s), best_p = e.simulator().job(e.slot_job(s)).priority;
        return best;
    }
};

/// Starts the first waiting job that fits (FIFO).
struct first_slot {
    void reset(std::uint64_t) {}
    template <class E>
    std::int64_t act(const E& e) {
        return e.action_mask()[0] ? 0 : e.defer_action();
    }
};

int main() {
    using namespace gpuplace;
    auto s = default_scenario();
    s.env.mode = action_mode::job;
    basic_env<TreeTopology, priority_job> e(s);
    const auto weighted_jct = [&](auto policy) {
        double total = 0;
        for (std::uint64_t seed = 1; seed <= 5; ++seed) {
            run_episode(e, policy, seed);
            for (const auto& r : e.finished()) total += e.simulator().job(r.id).priority * r.jct();
        }
        return total / 5 / 3600;
    };
    const double fifo = weighted_jct(first_slot{}), prio = weighted_jct(highest_priority_first{});
    std::printf("priority-weighted JCT (hours x priority, per episode): FIFO %.1f, highest priority first %.1f\n", fifo, prio);
    return prio < fifo ? 0 : 1;
}
