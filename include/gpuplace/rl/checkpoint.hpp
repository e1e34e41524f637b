#pragma once
/// \file rl/checkpoint.hpp
/// Versioned JSON checkpoints of a trained network (weights, observation normalisers, network and
/// PPO config, scenario), and an adapter that makes a network act as a policy in the evaluation
/// harness (greedy: the most probable valid action).
///
/// Format (version 1):
///   {"format": "gpuplace-ppo", "version": 1, "obs_spec": {"num_gpus", "gpu_features", "context", "gpus_per_node" (optional),
///    "items" (optional), "names" (optional: each input's name, the per-item segments' then the context's "<segment>.<field>")},
///    "network": {...network_config}, "ppo": {...ppo_config}, "scenario": {...}, "queue" (optional),
///    "parts": {"<name>": {"sizes": [...], "params": [...]}},
///    "normalizers": [{"mean": [...], "var": [...], "count": n}, ...]}

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../data.hpp"
#include "../atomic_file.hpp"
#include "../detail/input_file.hpp"
#include "../json/util.hpp"
#include "../error.hpp"
#include "../evaluate.hpp"
#include "../json.hpp"
#include "actor_critic.hpp"
#include "ppo.hpp"

namespace gpuplace::rl {

/// The checkpoint format version written by save_checkpoint().
inline constexpr int checkpoint_version = 1;

/// A loaded checkpoint.
template <std::floating_point S>
struct basic_checkpoint {
    basic_actor_critic<S> network;
    ppo_config ppo;
    gpuplace::detail::json scenario;  ///< the scenario the network was trained on
    std::string queue;                ///< the queue policy it acts under ("" = the scenario's; src/training_run/)
};
using checkpoint = basic_checkpoint<float>;

/// The checkpoint JSON of a network.
template <std::floating_point S>
[[nodiscard]] gpuplace::detail::json checkpoint_json(const basic_actor_critic<S>& net, const ppo_config& cfg, const scenario& s,
                                                     const std::string& queue = {}) {
    gpuplace::detail::json j;
    j["format"] = "gpuplace-ppo";
    j["version"] = checkpoint_version;
    const auto& sp = net.spec();
    j["obs_spec"] = {{"num_gpus", sp.num_gpus}, {"gpu_features", sp.gpu_features}, {"context", sp.context},
                     {"gpus_per_node", sp.gpus_per_node}};
    if (sp.items != "gpu") j["obs_spec"]["items"] = sp.items;  // GPU-mode checkpoints are as before the action modes
    if (!sp.names.empty()) j["obs_spec"]["names"] = sp.names;  // what each input is: the layout travels with the model
    j["network"] = net.config().to_json();
    j["ppo"] = cfg.to_json();
    j["scenario"] = gpuplace::to_json(s);
    if (!queue.empty()) j["queue"] = queue;
    for (const auto& [name, n] : net.named()) {
        gpuplace::detail::json p = gpuplace::detail::json::array();
        for (Eigen::Index i = 0; i < n->params().size(); ++i) p.push_back(double(n->params()(i)));
        j["parts"][name] = {{"sizes", n->sizes()}, {"params", std::move(p)}};
    }
    j["normalizers"] = gpuplace::detail::json::array();
    for (const auto& r : net.normalizers()) {
        std::vector<double> m(r.mean().data(), r.mean().data() + r.mean().size());
        std::vector<double> v(r.var().data(), r.var().data() + r.var().size());
        j["normalizers"].push_back({{"mean", m}, {"var", v}, {"count", r.count()}});
    }
    return j;
}

namespace detail {

[[noreturn]] inline void ckpt_fail(std::string_view src, std::string_view path, std::string_view what) {
    throw CheckpointError("checkpoint " + std::string(src) + ": " + std::string(path.empty() ? "/" : path) + ": " +
                          std::string(what));
}

inline const gpuplace::detail::json& ckpt_get(const gpuplace::detail::json& j, std::string_view src, const std::string& path,
                                              const char* key) {
    if (!j.is_object()) ckpt_fail(src, path, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) ckpt_fail(src, path + "/" + key, "missing");
    return *it;
}

inline std::vector<double> ckpt_numbers(const gpuplace::detail::json& j, std::string_view src, const std::string& path,
                                        std::size_t expect) {
    if (!j.is_array()) ckpt_fail(src, path, "expected an array of numbers");
    if (j.size() != expect)
        ckpt_fail(src, path, "has " + std::to_string(j.size()) + " values, expected " + std::to_string(expect));
    std::vector<double> v;
    v.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_number()) ckpt_fail(src, path + "/" + std::to_string(i), "not a number: " + gpuplace::detail::short_dump(j[i]));
        v.push_back(j[i].get<double>());
        if (!std::isfinite(v.back())) ckpt_fail(src, path + "/" + std::to_string(i), "not finite");
    }
    return v;
}

}  // namespace detail

/// Reads a checkpoint from JSON; every problem is a CheckpointError naming `source` and the JSON path.
template <std::floating_point S = float>
[[nodiscard]] basic_checkpoint<S> checkpoint_from_json(const gpuplace::detail::json& j, std::string_view source = "<json>") {
    using detail::ckpt_fail;
    using detail::ckpt_get;
    const auto& fmt = ckpt_get(j, source, "", "format");
    if (fmt != "gpuplace-ppo") ckpt_fail(source, "/format", "expected \"gpuplace-ppo\", got " + gpuplace::detail::short_dump(fmt));
    const auto& ver = ckpt_get(j, source, "", "version");
    if (!ver.is_number_integer() || ver.template get<long long>() != checkpoint_version)
        ckpt_fail(source, "/version", "unsupported version " + gpuplace::detail::short_dump(ver) + " (this build reads version " +
                                          std::to_string(checkpoint_version) + ")");
    const auto& sj = ckpt_get(j, source, "", "obs_spec");
    obs_spec sp;
    for (auto [key, out] : {std::pair{"num_gpus", &sp.num_gpus}, {"gpu_features", &sp.gpu_features}, {"context", &sp.context}}) {
        const auto& v = ckpt_get(sj, source, "/obs_spec", key);
        if (!v.is_number_unsigned()) ckpt_fail(source, std::string("/obs_spec/") + key, "expected a non-negative integer");
        *out = v.template get<std::size_t>();
    }
    if (auto it = sj.find("gpus_per_node"); it != sj.end()) {  // optional: absent in early checkpoints
        if (!it->is_number_unsigned()) ckpt_fail(source, "/obs_spec/gpus_per_node", "expected a non-negative integer");
        sp.gpus_per_node = it->template get<std::size_t>();
    }
    if (auto it = sj.find("items"); it != sj.end()) {  // optional: "gpu" when absent
        if (!it->is_string() || (*it != "gpu" && *it != "candidate" && *it != "slot"))
            ckpt_fail(source, "/obs_spec/items", "expected \"gpu\", \"candidate\" or \"slot\"");
        sp.items = it->template get<std::string>();
    }
    if (auto it = sj.find("names"); it != sj.end()) {  // optional: absent in checkpoints written before names were recorded
        if (!it->is_array()) ckpt_fail(source, "/obs_spec/names", "expected a list of input names");
        for (std::size_t i = 0; i < it->size(); ++i) {
            if (!(*it)[i].is_string()) ckpt_fail(source, "/obs_spec/names/" + std::to_string(i), "expected a name");
            sp.names.push_back((*it)[i].template get<std::string>());
        }
    }
    // sane bounds before anything is sized from the document
    for (auto [key, v, hi] : {std::tuple{"num_gpus", sp.num_gpus, std::size_t{1} << 20},
                              {"gpu_features", sp.gpu_features, std::size_t{1} << 10},
                              {"context", sp.context, std::size_t{1} << 20},
                              {"gpus_per_node", sp.gpus_per_node, std::size_t{1} << 20}})
        if (v > hi)
            ckpt_fail(source, std::string("/obs_spec/") + key, "value " + std::to_string(v) + " out of range [0, " + std::to_string(hi) + "]");
    if (!sp.names.empty() && sp.names.size() != sp.gpu_features + sp.context)
        ckpt_fail(source, "/obs_spec/names", std::to_string(sp.names.size()) + " names for " + std::to_string(sp.gpu_features) +
                                                 " per-item features + " + std::to_string(sp.context) + " context values");
    basic_checkpoint<S> c;
    network_config cfg;
    std::vector<typename basic_actor_critic<S>::part_layout> layout;
    try {
        cfg = network_config::from_json(ckpt_get(j, source, "", "network"), "/network");
        c.ppo = ppo_config::from_json(ckpt_get(j, source, "", "ppo"), "/ppo");
        layout = basic_actor_critic<S>::layout(sp, cfg);
    } catch (const CheckpointError&) {
        throw;
    } catch (const Error& e) {
        ckpt_fail(source, "", e.what());
    }
    c.scenario = ckpt_get(j, source, "", "scenario");
    if (auto it = j.find("queue"); it != j.end()) {  // optional: the queue policy the network acts under
        bool known = false;
        for (const auto& q : all_queue_names()) known = known || (it->is_string() && it->template get<std::string>() == q);
        if (!known) ckpt_fail(source, "/queue", "unknown queue policy " + gpuplace::detail::short_dump(*it));
        c.queue = it->template get<std::string>();
    }
    // every part's sizes and parameter count are checked against the document before the network
    // is allocated: a corrupted config cannot make the loader allocate more than the file holds
    const auto& parts = ckpt_get(j, source, "", "parts");
    std::vector<std::vector<double>> values;
    for (const auto& part : layout) {
        const std::string p = "/parts/" + part.name;
        const auto& pj = ckpt_get(parts, source, "/parts", part.name.c_str());
        const auto& sz = ckpt_get(pj, source, p, "sizes");
        if (!sz.is_array() || sz.size() != part.sizes.size() ||
            !std::equal(part.sizes.begin(), part.sizes.end(), sz.begin(),
                        [](std::size_t a, const gpuplace::detail::json& b) { return b.is_number_unsigned() && b.template get<std::size_t>() == a; }))
            ckpt_fail(source, p + "/sizes", "layer sizes " + gpuplace::detail::short_dump(sz) + " do not match the network config " +
                                                gpuplace::detail::json(part.sizes).dump());
        values.push_back(detail::ckpt_numbers(ckpt_get(pj, source, p, "params"), source, p + "/params",
                                              basic_mlp<S>::count_params(part.sizes)));
    }
    try {
        c.network = basic_actor_critic<S>(sp, cfg, 0);
    } catch (const Error& e) {
        ckpt_fail(source, "", e.what());
    }
    std::size_t k = 0;
    for (auto& [name, n] : c.network.named()) {
        const auto& v = values[k++];
        for (std::size_t i = 0; i < v.size(); ++i) n->params()(Eigen::Index(i)) = S(v[i]);
    }
    const auto& nj = ckpt_get(j, source, "", "normalizers");
    auto& norms = c.network.normalizers();
    if (!nj.is_array() || nj.size() != norms.size())
        ckpt_fail(source, "/normalizers", "expected an array of " + std::to_string(norms.size()) + " normalizers");
    for (std::size_t i = 0; i < norms.size(); ++i) {
        const std::string p = "/normalizers/" + std::to_string(i);
        const auto m = detail::ckpt_numbers(ckpt_get(nj[i], source, p, "mean"), source, p + "/mean", norms[i].dims());
        const auto v = detail::ckpt_numbers(ckpt_get(nj[i], source, p, "var"), source, p + "/var", norms[i].dims());
        const auto& cnt = ckpt_get(nj[i], source, p, "count");
        if (!cnt.is_number()) ckpt_fail(source, p + "/count", "expected a number");
        norms[i].set(Eigen::Map<const Eigen::VectorXd>(m.data(), Eigen::Index(m.size())),
                     Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size())), cnt.template get<double>());
    }
    return c;
}

/// Parses checkpoint text; a truncated or malformed document is a CheckpointError with the byte offset.
template <std::floating_point S = float>
[[nodiscard]] basic_checkpoint<S> parse_checkpoint(std::string_view text, std::string_view source = "<string>") {
    gpuplace::detail::json j;
    try {
        j = gpuplace::detail::parse_json_strict(text);
    } catch (const gpuplace::detail::json_input_error& e) {
        throw CheckpointError("checkpoint " + std::string(source) + ": " + (e.path.empty() ? "" : e.path + ": ") + e.what);
    } catch (const gpuplace::detail::json::parse_error& e) {
        throw CheckpointError("checkpoint " + std::string(source) + ": invalid or truncated JSON at byte " +
                              std::to_string(e.byte) + " of " + std::to_string(text.size()) + ": " + e.what());
    } catch (const gpuplace::detail::json::out_of_range& e) {  // a number too large for a double, e.g. 1e400
        throw CheckpointError("checkpoint " + std::string(source) + ": " + gpuplace::detail::json_error_text(text, e));
    }
    return checkpoint_from_json<S>(j, source);
}

/// Writes a checkpoint file atomically: the file is always either the old checkpoint or the new
/// one (atomic_file.hpp; `halfway`: see write_file_atomic()).
template <std::floating_point S>
void save_checkpoint(const std::string& file, const basic_actor_critic<S>& net, const ppo_config& cfg, const scenario& s,
                     const std::string& queue = {}, const write_observer& halfway = {}) {
    try {
        gpuplace::write_file_atomic(file, checkpoint_json(net, cfg, s, queue).dump() + "\n", halfway);
    } catch (const CheckpointError&) {
        throw;
    } catch (const Error& e) {
        throw CheckpointError(std::string("checkpoint ") + e.what());
    }
}

/// Reads a checkpoint file ("$GPUPLACE_DATA/..." names a file of the data folder, data.hpp).
template <std::floating_point S = float>
[[nodiscard]] basic_checkpoint<S> load_checkpoint(const std::string& path) {
    const std::string file = resolve_data_path(path);
    std::string text;
    if (!gpuplace::detail::read_input_file<CheckpointError>(file, text, file, "checkpoint ")) throw CheckpointError("checkpoint " + file + ": cannot open");
    return parse_checkpoint<S>(text, file);
}

/// Why a network trained on the scenario `trained` (a checkpoint's "scenario") must not act in
/// scenario `s`: it was trained knowing other durations (durations.mode oracle, hidden or
/// predicted: its features and what they meant differ), or "" when it may.
[[nodiscard]] inline std::string information_mismatch(const gpuplace::detail::json& trained, const scenario& s) {
    std::string mode = "oracle";
    if (trained.is_object())
        if (const auto d = trained.find("durations"); d != trained.end() && d->is_object())
            if (const auto m = d->find("mode"); m != d->end() && m->is_string()) mode = m->get<std::string>();
    if (mode == to_string(s.durations.mode)) return {};
    return "the network was trained with durations " + mode + " and the scenario \"" + s.name + "\" has durations " +
           std::string(to_string(s.durations.mode)) + ": a network acts only in the information setting it was trained in " +
           "(set durations.mode to " + mode + ", or train one for " + std::string(to_string(s.durations.mode)) + ")";
}

/// Throws Error (naming `source`, the checkpoint) when information_mismatch() says why not.
inline void check_information(const gpuplace::detail::json& trained, const scenario& s, std::string_view source) {
    if (auto why = information_mismatch(trained, s); !why.empty()) throw Error("checkpoint " + std::string(source) + ": " + why);
}

/// Names of the reference policies shipped with gpuplace (data/models/<name>.json, trained by
/// experiments/train_models.sh, each with the training recipe of its name; docs/ppo.md and, for the
/// networks distilled from the fair rollout planner in the placement action mode,
/// docs/planning.md have their held-out tables; philly_hidden_round, in the round action mode, is
/// trained by experiments/round_agent.py, its table in docs/rounds.md).
[[nodiscard]] inline std::vector<std::string> model_names() {
    return {"default", "philly", "proximity_drl", "default_distilled", "philly_distilled", "sizes_distilled", "heterogeneous_distilled",
            "colocation_distilled", "philly_hidden_round"};
}

/// The checkpoint file a name means: one of model_names() (its file in the data folder), else the
/// name itself as a path.
[[nodiscard]] inline std::string model_path(const std::string& name) {
    for (const auto& m : model_names())
        if (name == m) return "$GPUPLACE_DATA/models/" + name + ".json";
    return name;
}

/// A reference policy by name (model_names()) or a checkpoint by file name.
template <std::floating_point S = float>
[[nodiscard]] basic_checkpoint<S> load_model(const std::string& name) {
    return load_checkpoint<S>(model_path(name));
}

/// A network acting greedily (argmax over valid actions); satisfies the Policy concept.
template <std::floating_point S = float>
class basic_network_policy {
public:
    explicit basic_network_policy(std::shared_ptr<const basic_actor_critic<S>> net) : net_(std::move(net)) {}
    void reset(std::uint64_t) {}
    /// The network's greedy action in e's state. A per_gpu network acts on a cluster of another size
    /// (basic_actor_critic::for_spec(); made once per env shape); Error naming what differs otherwise.
    template <class E>
    std::int64_t act(const E& e) {
        return act(e, e.action_mask());
    }
    /// The greedy action among the valid actions of `mask` (of e's action count; e.g. e's mask
    /// without DEFER, rl/hold_guard.hpp).
    template <class E>
    std::int64_t act(const E& e, std::span<const std::uint8_t> mask) {
        const auto* net = net_.get();
        // the inputs by name once (an env's layout is fixed; the names cost a string per input),
        // then the shape at every decision
        const auto want = obs_spec::of(e, !named_);
        if (!named_) {
            if (const auto why = net->incompatibility(want); !why.empty()) throw Error("network policy: " + why);
            named_ = true;
        }
        if (!want.same_shape(net->spec())) {
            if (!bound_ || !bound_->spec().same_shape(want)) {
                if (const auto why = net_->incompatibility(want); !why.empty()) throw Error("network policy: " + why);
                bound_ = std::make_shared<const basic_actor_critic<S>>(net_->for_spec(want));
            }
            net = bound_.get();
        }
        return std::int64_t(net->act(e.observation(), mask, ws_));
    }
    /// Action a's logit at the last act() (valid actions only; a masked one's is not computed).
    [[nodiscard]] S logit(std::int64_t a) const { return ws_.logits(Eigen::Index(a), 0); }

private:
    std::shared_ptr<const basic_actor_critic<S>> net_;
    std::shared_ptr<const basic_actor_critic<S>> bound_;  ///< net_ for another cluster's shape, when needed
    bool named_ = false;  ///< the env's inputs were checked by name against the network's
    typename basic_actor_critic<S>::workspace ws_;
};
using network_policy = basic_network_policy<float>;

/// The network as an evaluation-harness policy (one workspace per episode, so episodes can run in parallel).
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> as_policy(std::string name, std::shared_ptr<const basic_actor_critic<S>> net) {
    return {std::move(name), [net](std::uint64_t) {
                auto p = std::make_shared<basic_network_policy<S>>(net);
                return std::function<std::int64_t(const E&)>([p](const E& e) { return p->act(e); });
            },
            {},
            {}};
}

}  // namespace gpuplace::rl
