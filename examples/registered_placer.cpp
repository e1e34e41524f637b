// A placer of one's own, registered once by name (registry.hpp): the evaluation harness, a rollout
// planner over it ("rollout:<name>") and the benchmark then take it by name, as they take the
// built-in heuristics, and `--list`-style listings show it under kind "placer".
#include <cstdio>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/policy_registry.hpp>
#include <gpuplace/registry.hpp>

#include "bench/run.hpp"

/// Last fit: the highest-numbered GPU the job may take, one pick at a time (first fit's mirror).
class last_fit : public gpuplace::gpu_picker<last_fit> {
public:
    void reset(std::uint64_t) {}
    template <class View>
    std::int64_t next(const View& v) {
        const auto mask = v.mask();
        for (std::size_t g = mask.size(); g-- > 0;)
            if (mask[g]) return static_cast<std::int64_t>(g);
        return -1;  // nothing allowed: hold the job back
    }
};
GPUPLACE_REGISTER_PLACER(last_fit, "last_fit", "the highest-numbered GPU with room (examples/registered_placer.cpp)");

int main() {
    using namespace gpuplace;
    for (const auto& e : registry_entries("placer")) std::printf("placer %-16s %s\n", e.name.c_str(), e.about.c_str());

    // the harness by name, under a queue policy, beside a built-in heuristic (on a tree, whose mirror
    // image is the same tree, last fit's metrics are first fit's: each placement mirrored)
    auto s = default_scenario();
    s.workload.synthetic.num_jobs = 60;
    const std::vector<any_policy<env>> policies = {named_policy<env>("last_fit+sjf"), named_policy<env>("first_fit+sjf")};
    std::printf("%s\n", evaluate(s, policies, held_out_seeds(3)).table().c_str());

    // a rollout planner over it (the planners choose among the placement mode's candidates)
    auto p = s;
    p.env.mode = action_mode::placement;
    p.workload.synthetic.num_jobs = 20;
    std::printf("%s\n", evaluate(p, {named_policy<env>("rollout2:last_fit+sjf")}, held_out_seeds(1)).table().c_str());

    // the benchmark by name, on a track of one's own (a scenario, 3 held-out seeds)
    const auto r = bench::run(bench::scenario_track(s, 3, "first_fit+sjf"), "last_fit+sjf");
    std::printf("%s\n", bench::result_row(r).c_str());
    return 0;
}
