// A workload kind of one's own, registered once by name (json/workload_registry.hpp): a scenario's
// workload then names it as its "kind", its other keys are the kind's options, and `--list`-style
// listings show it under kind "workload". Here: bursts of same-sized jobs, one burst every period.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/json/registry.hpp>
#include <gpuplace/json/workload_registry.hpp>
#include <gpuplace/random.hpp>

namespace {
/// `bursts` bursts of `size` jobs of `gpus` GPUs each, one burst every `period` seconds; each job
/// a zoo model and 10 to 60 minutes long, drawn from the episode's seed.
class bursts final : public gpuplace::workload_generator {
public:
    bursts(std::size_t n, std::size_t size, std::uint32_t gpus, double period) : n_(n), size_(size), gpus_(gpus), period_(period) {}
    void generate(const gpuplace::ModelZoo& zoo, std::size_t, std::uint64_t seed, std::vector<gpuplace::TrainingJob>& out) const override {
        gpuplace::rng r(seed);
        for (std::size_t b = 0; b < n_; ++b)
            for (std::size_t k = 0; k < size_; ++k) {
                gpuplace::TrainingJob j;
                j.submit_time = double(b) * period_;
                j.num_gpus = gpus_;
                j.model = gpuplace::model_id(r.below(zoo.size()));
                j.work = r.uniform(600.0, 3600.0) * zoo[j.model].at(gpus_).consolidated;  // seconds -> steps
                out.push_back(j);
            }
    }

private:
    std::size_t n_, size_;
    std::uint32_t gpus_;
    double period_;
};

/// The kind's factory: its options from the workload's JSON, each checked.
std::shared_ptr<const gpuplace::workload_generator> make_bursts(const gpuplace::json& j, const std::string& path) {
    const auto count = [&](const char* key, unsigned long dflt) {
        const auto v = j.value(key, gpuplace::json(dflt));
        if (!v.is_number_unsigned() || v.get<unsigned long>() == 0)
            throw gpuplace::ConfigError(path + "/" + key + ": expected a whole number >= 1, got " + v.dump());
        return v.get<unsigned long>();
    };
    const double period = j.value("period", 1800.0);
    if (!(period > 0)) throw gpuplace::ConfigError(path + "/period: expected seconds > 0, got " + std::to_string(period));
    return std::make_shared<bursts>(count("bursts", 4), count("size", 8), std::uint32_t(count("gpus", 2)), period);
}
}  // namespace

GPUPLACE_REGISTER_WORKLOAD_KIND("bursts", "bursts of same-sized jobs (examples/registered_workload_kind.cpp)", make_bursts);

int main() {
    using namespace gpuplace;
    for (const auto& e : all_registry_entries())
        if (e.kind == "workload") std::printf("workload %-13s %s\n", e.name.c_str(), e.about.c_str());
    const auto s = scenario_from_json(parse_json(R"({
        "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
        "workload": {"kind": "bursts", "bursts": 5, "size": 6, "gpus": 4, "period": 1200}})", "the example's scenario"));
    const std::vector<any_policy<env>> policies = {heuristic<env>("pack+fifo"), heuristic<env>("pack+sjf")};
    std::printf("%s\n", evaluate(s, policies, held_out_seeds(2)).table().c_str());
    return 0;
}
