// A trace format of one's own, registered once by name (trace_registry.hpp): a scenario's trace
// workload then reads files of that format, with the workload's options (time scale, target load,
// GPU cap) applied as for the built-in formats, and `--list`-style listings show it under kind
// "trace_format". Here: Slurm's `sacct --parsable2 -o JobID,Submit,ElapsedRaw,NGPUS` (epoch
// seconds), examples/data/sacct_sample.txt; sacct knows no model, so each job gets one zoo model.
#include <cmath>
#include <cstdio>
#include <istream>
#include <sstream>
#include <string>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/registry.hpp>
#include <gpuplace/trace_registry.hpp>

namespace {
/// The rows after the header: JobID|Submit|ElapsedRaw|NGPUS. A row of the wrong shape is a TraceError naming its line.
gpuplace::trace read_sacct(std::istream& in, const std::string& source, const gpuplace::ModelZoo& zoo, const gpuplace::trace_options& o) {
    gpuplace::trace t;
    const auto model = zoo.find(o.model.empty() ? "ResNet-50 (batch size 64)" : o.model);
    std::string line;
    std::getline(in, line);  // the header
    for (std::size_t n = 2; std::getline(in, line); ++n) {
        std::istringstream row(line);
        std::string id, submit, elapsed, gpus;
        if (!std::getline(row, id, '|') || !std::getline(row, submit, '|') || !std::getline(row, elapsed, '|') || !std::getline(row, gpus))
            throw gpuplace::TraceError(source + ":" + std::to_string(n) + ": expected JobID|Submit|ElapsedRaw|NGPUS");
        gpuplace::TrainingJob j;
        j.submit_time = std::stod(submit);
        j.num_gpus = static_cast<std::uint32_t>(std::stoul(gpus));
        j.model = model;
        j.work = std::stod(elapsed) * zoo[model].at(j.num_gpus).consolidated;  // seconds -> steps
        t.jobs.push_back(j);
        t.model_assigned.push_back(1);
        t.field_values.insert(t.field_values.end(), o.fields.size(), std::nan(""));  // no declared field in sacct's columns
    }
    return t;
}
}  // namespace

GPUPLACE_REGISTER_TRACE_FORMAT("sacct", "Slurm sacct --parsable2: JobID|Submit|ElapsedRaw|NGPUS (examples/registered_trace_format.cpp)", read_sacct);

int main() {
    using namespace gpuplace;
    for (const auto& e : registry_entries("trace_format")) std::printf("trace_format %-7s %s\n", e.name.c_str(), e.about.c_str());
    const auto s = scenario_from_json(detail::json::parse(R"({
        "topology": {"preset": "dgx_a100", "racks": 1, "nodes_per_rack": 2},
        "workload": {"kind": "trace", "format": "sacct", "path": "examples/data/sacct_sample.txt", "target_load": 1.2}})"));
    // the trace as the workload reads it (16 GPUs: the target load's cluster)
    const auto t = load_trace(find_trace_format("sacct")->reader, s.workload.path, ModelZoo::builtin(), s.workload.trace_opts, 16);
    std::printf("%zu jobs, %zu with their model assigned, arrivals scaled by %.3f\n", t.jobs.size(), t.models_assigned, t.arrival_scale);
    const std::vector<any_policy<env>> policies = {heuristic<env>("pack+fifo"), heuristic<env>("pack+backfill")};
    std::printf("%s\n", evaluate(s, policies, held_out_seeds(1)).table().c_str());
    return 0;
}
