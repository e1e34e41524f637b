// A communication model of one's own, registered once by name (comm_registry.hpp): a scenario's
// "comm": {"model": "<name>"} then builds the library's default env with it, so the evaluation
// harness and the benchmark take it with no env type of their own, and `--list`-style listings show
// it under kind "comm_model".
#include <algorithm>
#include <cstdio>
#include <span>
#include <vector>

#include <gpuplace/comm_registry.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>

#include "bench/run.hpp"

// The library's ring all-reduce, 25% slower for each level-1 domain (server) beyond the first.
struct server_hops {
    static constexpr std::string_view name = "server_hops";
    gpuplace::RingAllReduce ring;
    double ideal_step_time(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m, std::uint32_t k) const noexcept {
        return ring.ideal_step_time(t, z, m, k);
    }
    gpuplace::comm_result evaluate(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m,
                                   std::span<const gpuplace::gpu_id> gpus) const noexcept {
        const auto r = ring.evaluate(t, z, m, gpus);
        const double extra = gpus.empty() ? 0.0 : 0.25 * double(t.hierarchy().domain_of(1, gpus.back()) - t.hierarchy().domain_of(1, gpus.front()));
        return {r.cost + extra, r.slowdown * (1.0 + extra)};
    }
    gpuplace::cost_bounds bounds(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m, std::uint32_t k) const noexcept {
        const auto b = ring.bounds(t, z, m, k);
        const double servers = std::min<double>(k, double(t.hierarchy().num_domains(1)));
        return {b.best, b.worst + 0.25 * (servers - 1)};
    }
};
GPUPLACE_REGISTER_COMM_MODEL(server_hops, "ring all-reduce, 25% slower per extra server (examples/registered_comm_model.cpp)");

int main() {
    using namespace gpuplace;
    for (const auto& e : registry_entries("comm_model")) std::printf("comm_model %-15s %s\n", e.name.c_str(), e.about.c_str());

    // the same jobs under the library's model and under the one registered by name
    const std::vector<any_policy<env>> policies = {heuristic<env>("first_fit+sjf"), heuristic<env>("pack+sjf"), heuristic<env>("random+sjf")};
    for (const char* model : {"ring_allreduce", "server_hops"}) {
        const auto s = scenario_from_json(detail::json{{"workload", {{"kind", "synthetic"}, {"num_jobs", 60}, {"load", 1.2}}},
                                                       {"comm", {{"model", model}}}});
        std::printf("comm %s\n%s\n", model, evaluate(s, policies, held_out_seeds(3)).table().c_str());
        if (std::string_view(model) == "server_hops") {  // the benchmark too, on a track of one's own
            const auto b = bench::run(bench::scenario_track(s, 2, "first_fit+sjf"), "pack+sjf");
            std::printf("%s\n", bench::result_row(b).c_str());
        }
    }
    return 0;
}
