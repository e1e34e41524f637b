// A communication model of one's own (docs/extending.md, "A comm model"): ring all-reduce as the
// library calibrates it, plus a fixed cost for every extra server a job spans (say, a slow
// parameter-server hop). It is a type with ideal_step_time, evaluate and bounds (the CommModel
// concept), given to basic_env as its third argument; every heuristic then places under it.
#include <cstdio>
#include <span>

#include <gpuplace/gpuplace.hpp>

struct server_hop_cost {
    gpuplace::RingAllReduce ring;  // the library's model, for the compute and ring times
    double per_extra_server = 0.25;  // the slowdown added for each server beyond the first

    /// The step time of model m on k GPUs placed at best (one server when they fit in one).
    [[nodiscard]] double ideal_step_time(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m,
                                         std::uint32_t k) const {
        return ring.ideal_step_time(t, z, m, k);
    }

    /// The cost and slowdown of a placement (`gpus` sorted ascending): the ring's, and the hop
    /// cost for every level-1 domain (server) beyond the first that the job spans.
    [[nodiscard]] gpuplace::comm_result evaluate(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z,
                                                 gpuplace::model_id m, std::span<const gpuplace::gpu_id> gpus) const {
        auto r = ring.evaluate(t, z, m, gpus);
        std::uint32_t servers = 0, last = ~0u;
        for (const auto g : gpus) {  // sorted, so a server's GPUs are adjacent
            const auto s = t.hierarchy().domain_of(1, g);
            servers += s != last;
            last = s;
        }
        r.slowdown += per_extra_server * (servers > 0 ? servers - 1 : 0);
        r.cost += servers > 0 ? servers - 1 : 0;
        return r;
    }

    /// The cost of the best and worst placement of k GPUs on an empty cluster.
    [[nodiscard]] gpuplace::cost_bounds bounds(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z,
                                               gpuplace::model_id m, std::uint32_t k) const {
        auto b = ring.bounds(t, z, m, k);
        const std::uint32_t per_server = t.hierarchy().uniform_size(1);
        const std::uint32_t least = per_server ? (k + per_server - 1) / per_server : 1;
        const std::uint32_t most = std::min<std::uint32_t>(k, static_cast<std::uint32_t>(t.hierarchy().num_domains(1)));
        b.best += least - 1;
        b.worst += most - 1;
        return b;
    }
};
static_assert(gpuplace::CommModel<server_hop_cost, gpuplace::TreeTopology>);

int main() {
    using namespace gpuplace;
    const auto s = default_scenario();
    using hop_env = basic_env<TreeTopology, TrainingJob, server_hop_cost>;
    hop_env e(TreeTopology::from_config(s.topology, "/topology"), server_hop_cost{}, ModelZoo::builtin(), s);
    env plain(s);
    const auto jct = [](auto& environment, auto policy) {
        policy.reserve(environment.topology());
        double sum = 0;
        for (std::uint64_t seed = 1; seed <= 3; ++seed) sum += run_episode(environment, policy, seed).m.avg_jct / 3;
        return sum / 3600;
    };
    std::printf("mean JCT over 3 seeds (h)    ring_allreduce  + server hops\n");
    const double ff_plain = jct(plain, first_fit_policy{}), ff_hop = jct(e, first_fit_policy{});
    const double pack_plain = jct(plain, pack_policy{}), pack_hop = jct(e, pack_policy{});
    std::printf("first_fit                    %14.3f  %13.3f\n", ff_plain, ff_hop);
    std::printf("pack                         %14.3f  %13.3f\n", pack_plain, pack_hop);
    // the hop cost only slows jobs down, and hurts the placer that spreads jobs (first_fit) more
    return ff_hop >= ff_plain && pack_hop >= pack_plain && ff_hop - ff_plain >= pack_hop - pack_plain ? 0 : 1;
}
