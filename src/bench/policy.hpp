#pragma once
/// \file bench/policy.hpp
/// The policies the benchmark scores by name: a heuristic variant ("pack+sjf", heuristic_registry.hpp),
/// a rollout planner ("rollout16:pack_wait+sjf", policy_registry.hpp) or a C++ PPO checkpoint, a shipped model ("default", rl::model_names()) or a checkpoint file
/// ("model:<name or file>" says so explicitly). Needs the reference PPO (gpuplace::rl, Eigen).

#include <charconv>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <gpuplace/data.hpp>
#include <gpuplace/detail/input_file.hpp>
#include <gpuplace/heuristic_registry.hpp>
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/rl/hold_guard.hpp>
#include "result.hpp"
#include "run.hpp"

namespace gpuplace::bench {

/// FNV-1a 64 (hex) of a file's bytes; Error naming the file when it cannot be read.
[[nodiscard]] inline std::string file_checksum(const std::string& file) {
    std::string s;
    if (!detail::read_input_file<Error>(file, s, file, "")) throw Error("cannot read " + file);
    return hex64(fnv1a64(reinterpret_cast<const unsigned char*>(s.data()), s.size()));
}

/// Where a model's spec starts its hold guard ("@hold:" or "@hold_from:"), else npos.
[[nodiscard]] inline std::size_t hold_guard_at(const std::string& spec) {
    const auto at = spec.find("@hold");
    return at != std::string::npos && (spec.compare(at, 6, "@hold:") == 0 || spec.compare(at, 11, "@hold_from:") == 0)
               ? at
               : std::string::npos;
}

/// Where a model's spec starts its placement margin ("@place:"), else npos.
[[nodiscard]] inline std::size_t place_margin_at(const std::string& spec) { return spec.find("@place:"); }

/// A model spec's "@place:<heuristic>:<margin>" (rl::place_margin), after its hold guard if any;
/// ConfigError naming the spec when the margin is not a number of logits from 0 up. (Not a comma:
/// the programs' --policy lists are comma-separated.)
[[nodiscard]] inline rl::place_margin<env> place_margin_of(const std::string& spec, std::size_t at) {
    const std::string arg = spec.substr(at + 7);
    const auto colon = arg.rfind(':');
    double margin = -1;
    if (colon != std::string::npos && colon > 0) {
        const auto digits = std::string_view(arg).substr(colon + 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), margin);
        if (ec != std::errc{} || end != digits.data() + digits.size()) margin = -1;
    }
    if (!(margin >= 0))
        throw ConfigError("policy \"" + spec + "\": @place: takes <heuristic>:<margin> (a number of logits from 0 up), got \"" + arg + "\"");
    return {heuristic_or_planner(arg.substr(0, colon)).policy, margin};
}

/// A C++ checkpoint as a policy: a shipped model's name or a checkpoint file, optionally followed
/// by a hold guard (rl/hold_guard.hpp): "@hold:<heuristic>" (it holds a job only where that
/// heuristic would; e.g. "sizes_distilled@hold:pack_wait") or "@hold_from:<gpus>" (it holds a job
/// only on clusters of at least that many GPUs; e.g. "philly_distilled@hold_from:24"), and then
/// optionally by a placement margin "@place:<heuristic>:<margin>" (it places a job elsewhere than
/// the heuristic only where its logit there is higher by more than the margin; e.g.
/// "philly_distilled@hold_from:24@place:pack:1"). It acts greedily under the queue policy it was
/// trained under; the result records its file's checksum.
[[nodiscard]] inline named_policy model_policy(const std::string& spec) {
    const auto place_at = place_margin_at(spec);
    const std::string held = spec.substr(0, place_at);  // the spec without its placement margin
    const auto at = hold_guard_at(held);
    const std::string name = held.substr(0, at);
    std::size_t min_gpus = 0;
    if (at != std::string::npos && held.compare(at, 11, "@hold_from:") == 0) {
        const auto digits = std::string_view(held).substr(at + 11);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), min_gpus);
        if (ec != std::errc{} || end != digits.data() + digits.size() || min_gpus == 0)
            throw ConfigError("policy \"" + spec + "\": @hold_from: takes a number of GPUs from 1 up, got \"" + std::string(digits) + "\"");
    }
    auto m = place_at == std::string::npos ? rl::place_margin<env>{} : place_margin_of(spec, place_at);
    auto ck = rl::load_model(name);
    auto net = std::make_shared<const rl::actor_critic>(std::move(ck.network));
    auto p = min_gpus > 0 ? rl::hold_from<env>(spec, net, min_gpus, std::move(m))
             : at != std::string::npos
                 ? rl::hold_only_with<env>(spec, net, heuristic_or_planner(held.substr(at + 6)).policy, std::move(m))
             : place_at != std::string::npos ? rl::with_place_margin<env>(spec, net, std::move(m))
                                             : rl::as_policy<env>(spec, net);
    p.queue = ck.queue;
    return {std::move(p), {spec, "model", ck.queue, file_checksum(resolve_data_path(rl::model_path(name)))}};
}

/// Whether a name means a model: "model:<x>", a shipped model's name, or a file name ending in
/// .json, each optionally followed by a hold guard ("@hold:<heuristic>" or "@hold_from:<gpus>") and a
/// placement margin ("@place:<heuristic>:<margin>").
[[nodiscard]] inline bool is_model_name(const std::string& spec) {
    const std::string held = spec.substr(0, place_margin_at(spec));
    const std::string name = held.substr(0, hold_guard_at(held));
    if (name.starts_with("model:")) return true;
    for (const auto& m : rl::model_names())
        if (name == m) return true;
    return name.ends_with(".json");
}

/// The policy a name means: a model (is_model_name()), else a heuristic variant or a rollout planner
/// (heuristic_or_planner()); ConfigError naming the known ones otherwise.
[[nodiscard]] inline named_policy policy_named(const std::string& name) {
    if (is_model_name(name)) return model_policy(name.starts_with("model:") ? name.substr(6) : name);
    return heuristic_or_planner(name);
}

/// A resolver for validate() that re-runs models it can load (and whose checkpoint checksum, when
/// recorded, still matches: otherwise nullopt, and the recorded actions are replayed).
[[nodiscard]] inline policy_resolver model_resolver() {
    return [](const policy_ref& r) -> std::optional<any_policy<env>> {
        if (r.kind != "model") return std::nullopt;
        try {
            auto np = model_policy(r.name);
            if (!r.checksum.empty() && np.ref.checksum != r.checksum) return std::nullopt;
            return np.policy;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
}

}  // namespace gpuplace::bench
