// An observation feature of one's own, registered once by name (feature_registry.hpp): a function of
// a job, computed for every job when its episode is drawn. A scenario declares it as a job field,
// and the observation then shows it for the job being placed and for each queue slot (segment
// "job_fields"), scaled from its range into [0, 1].
#include <cmath>
#include <cstdio>

#include <gpuplace/feature_registry.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

// The job's size in GPU-steps, on a log scale: log10(1 + GPUs x steps), observed in [0, 8].
GPUPLACE_REGISTER_OBSERVATION_FEATURE("log_gpu_steps", "log10(1 + GPUs x training steps) (examples/registered_feature.cpp)",
                                      [](const gpuplace::job_feature_view& j) { return std::log10(1.0 + double(j.job.num_gpus) * double(j.job.work)); },
                                      0.0, 8.0);

int main() {
    using namespace gpuplace;
    const auto s = parse_scenario(R"({"job_fields": ["log_gpu_steps"],
                                      "workload": {"kind": "synthetic", "num_jobs": 40, "load": 1.2}})");
    env e(s);
    const obs_segment* seg = nullptr;
    for (const auto& sg : e.observation_layout())
        if (sg.name == "job_fields") seg = &sg;
    std::printf("segment %s: %zu values at offset %zu (%s, %s, ...)\n", seg->name.c_str(), seg->size, seg->offset, seg->fields[0].c_str(),
                seg->fields[1].c_str());
    e.reset(1);
    pack_policy pack;
    for (int d = 0; d < 5 && !e.done(); ++d) {  // the first decisions: the current job's value, as the table holds it and as observed
        const auto j = e.current_index();
        std::printf("job %u: %u GPUs x %llu steps -> log_gpu_steps %.3f, observed %.3f\n", j, e.simulator().job(j).num_gpus,
                    static_cast<unsigned long long>(e.simulator().job(j).work), e.field_value(j, 0), e.observation()[seg->offset]);
        while (!e.done() && e.current_index() == j) e.step(e.heuristic_action(pack));
    }
    return 0;
}
