#pragma once
/// \file rl/actor_critic.hpp
/// The actor-critic network of the PPO reference: logits over the G + 1 actions (a GPU or DEFER)
/// and a state value, from the env's flat observation. Two architectures:
///  - per_gpu (default): one small MLP scores every GPU from its own features plus the job / queue /
///    global context (shared weights, so it does not depend on the number of GPUs); a context MLP
///    gives the DEFER logit; the value MLP reads the context and the per-GPU feature means.
///  - flat: MLPs over the whole observation (policy and value with separate or shared trunk).

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../detail/enum_names.hpp"
#include "../json/util.hpp"
#include "../env.hpp"
#include "../error.hpp"
#include "categorical.hpp"
#include "mlp.hpp"
#include "normalizer.hpp"
#include "obs_spec.hpp"

namespace gpuplace::rl {

/// Network architecture.
enum class architecture : unsigned char { per_gpu, flat };

}  // namespace gpuplace::rl
template <>
struct gpuplace::detail::enum_names<gpuplace::rl::architecture> {
    static constexpr std::array<std::pair<rl::architecture, std::string_view>, 2> values{
        {{rl::architecture::per_gpu, "per_gpu"}, {rl::architecture::flat, "flat"}}};
};
namespace gpuplace::rl {

[[nodiscard]] inline std::string_view to_string(architecture a) noexcept { return gpuplace::detail::enum_name(a); }

/// Shape and options of the network.
struct network_config {
    architecture arch = architecture::per_gpu;
    std::vector<std::size_t> hidden = {64, 64};        ///< policy layers (per_gpu: the GPU scorer)
    std::vector<std::size_t> value_hidden = {64, 64};  ///< value layers (ignored with a shared trunk)
    activation act = activation::tanh;
    bool shared_trunk = false;  ///< flat only: policy and value share the hidden layers
    bool normalize_obs = false; ///< running observation normalisation
    /// per_gpu only: each GPU is also scored from the mean and the max of every per-GPU feature
    /// over its node (e.g. when the node's running jobs end), not only from its own features.
    /// Does nothing in the placement and job action modes, whose items are not GPUs.
    bool node_features = false;

    [[nodiscard]] gpuplace::detail::json to_json() const {
        return {{"architecture", to_string(arch)}, {"hidden", hidden}, {"value_hidden", value_hidden},
                {"activation", to_string(act)},    {"shared_trunk", shared_trunk}, {"normalize_obs", normalize_obs},
                {"node_features", node_features}};
    }
    /// Reads the options present in j; errors name the JSON path.
    static network_config from_json(const gpuplace::detail::json& j, std::string_view path) {
        using namespace gpuplace::detail;
        check_keys(j, path, {"architecture", "hidden", "value_hidden", "activation", "shared_trunk", "normalize_obs",
                             "node_features"});
        network_config c;
        std::string a = std::string(to_string(c.arch));
        read_string(j, path, "architecture", a);
        if (const auto v = enum_from_name<architecture>(a)) c.arch = *v;
        else config_fail(join_path(path, "architecture"), "unknown architecture \"" + a + "\" (allowed: " + enum_name_list<architecture>() + ")");
        auto sizes = [&](const char* key, std::vector<std::size_t>& out) {
            auto it = j.find(key);
            if (it == j.end()) return;
            const auto p = join_path(path, key);
            if (!it->is_array() || it->empty()) config_fail(p, "expected a non-empty array of layer sizes, got " + short_dump(*it));
            out.clear();
            for (const auto& v : *it) {
                if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 65536)
                    config_fail(p, "layer size " + short_dump(v) + " is not an integer in [1, 65536]");
                out.push_back(v.get<std::size_t>());
            }
        };
        sizes("hidden", c.hidden);
        sizes("value_hidden", c.value_hidden);
        std::string act = std::string(to_string(c.act));
        read_string(j, path, "activation", act);
        c.act = parse_activation(act, "config " + join_path(path, "activation"));
        read_bool(j, path, "shared_trunk", c.shared_trunk);
        read_bool(j, path, "normalize_obs", c.normalize_obs);
        read_bool(j, path, "node_features", c.node_features);
        return c;
    }
};

/// The network, templated on the scalar type.
template <std::floating_point S>
class basic_actor_critic {
public:
    using scalar = S;
    using net = basic_mlp<S>;
    using matrix = matrix_t<S>;
    using vector = vector_t<S>;

    /// Intermediate values of a forward pass (one per thread when acting concurrently).
    struct workspace {
        typename net::cache c_gpu, c_ctx, c_tail, c_defer, c_value, c_pi, c_trunk, c_vhead;
        matrix x, xg, ctx, vin, a1, logits, pool;
        vector values;
        std::vector<Eigen::Index> col_b, col_g;  ///< per_gpu: sample and GPU of each scored column
        std::size_t batch = 0;
    };

    basic_actor_critic() = default;

    /// An untrained network for observations of shape `spec`, initialised from `seed`.
    basic_actor_critic(obs_spec spec, network_config cfg, std::uint64_t seed) : spec_(spec), cfg_(std::move(cfg)) {
        build();
        gpuplace::detail::rng r(seed);
        const double h = std::sqrt(2.0);
        for (auto& [name, n] : named()) {
            // hidden-like parts keep gain sqrt(2); small policy outputs start near uniform
            const double out = name == "value" ? 1.0 : (name == "tail" || name == "defer" || name == "policy") ? 0.01 : h;
            n->init(r, h, out);
        }
    }

    /// One sub-network of the layout: checkpoint name, layer sizes, whether the output layer is activated.
    struct part_layout {
        std::string name;
        std::vector<std::size_t> sizes;
        bool output_activation = false;
    };

    /// The sub-networks a network of shape `spec` and config `cfg` has, in named() order, computed
    /// without allocating them (a checkpoint is checked against it before any parameter is allocated).
    [[nodiscard]] static std::vector<part_layout> layout(const obs_spec& spec, const network_config& cfg) {
        const auto& h = cfg.hidden;
        const auto& vh = cfg.value_hidden;
        if (h.empty()) throw ConfigError("network: hidden must have at least one layer");
        auto sizes = [](std::size_t in, const std::vector<std::size_t>& mid, std::size_t out) {
            std::vector<std::size_t> s{in};
            s.insert(s.end(), mid.begin(), mid.end());
            if (out) s.push_back(out);
            return s;
        };
        if (cfg.arch == architecture::per_gpu) {
            if (spec.gpu_features == 0) throw ConfigError("network: per_gpu architecture needs per-GPU observation segments");
            if (node_pooling(spec, cfg) && (spec.gpus_per_node == 0 || spec.num_gpus % spec.gpus_per_node != 0))
                throw ConfigError("network: node_features needs GPUs numbered node by node (gpus_per_node " +
                                  std::to_string(spec.gpus_per_node) + ", " + std::to_string(spec.num_gpus) + " GPUs)");
            return {{"gpu_in", {gpu_inputs(spec, cfg), h[0]}, false},
                    {"ctx_in", {spec.context, h[0]}, false},
                    {"tail", sizes(h[0], {h.begin() + 1, h.end()}, 1), false},
                    {"defer", sizes(spec.context, {h.back()}, 1), false},
                    {"value", sizes(spec.context + spec.gpu_features, vh, 1), false}};
        }
        if (cfg.shared_trunk)
            return {{"trunk", sizes(spec.obs_size(), h, 0), true},
                    {"policy", {h.back(), spec.num_actions()}, false},
                    {"value", {h.back(), 1}, false}};
        return {{"policy", sizes(spec.obs_size(), h, spec.num_actions()), false},
                {"value", sizes(spec.obs_size(), vh, 1), false}};
    }

    /// Whether the per-item scorer pools features over nodes: node_features, when the items are GPUs
    /// (candidates and queue slots have no nodes: the option does nothing in those action modes).
    [[nodiscard]] static bool node_pooling(const obs_spec& spec, const network_config& cfg) noexcept {
        return cfg.node_features && spec.items == "gpu";
    }
    /// Inputs of the per-GPU scorer: the GPU's features, and with node_features their node mean and max.
    [[nodiscard]] static std::size_t gpu_inputs(const obs_spec& spec, const network_config& cfg) noexcept {
        return spec.gpu_features * (node_pooling(spec, cfg) ? 3 : 1);
    }

    [[nodiscard]] const obs_spec& spec() const noexcept { return spec_; }
    [[nodiscard]] const network_config& config() const noexcept { return cfg_; }

    /// Why this network cannot act on observations of shape `env`, or "" when it can. A per_gpu
    /// network's weights do not depend on the number of GPUs: it acts on any cluster whose GPUs have
    /// the same features and whose context (job, queue window, global) has the same size, nodes of
    /// any size included (with node_features, GPUs must be numbered node by node). A flat network
    /// needs the very observation it was trained on.
    [[nodiscard]] std::string incompatibility(const obs_spec& env) const {
        auto shape = [](const obs_spec& o) {
            return std::to_string(o.num_gpus) + " " + o.items + "s x " + std::to_string(o.gpu_features) + " features + " +
                   std::to_string(o.context) + " context values";
        };
        if (env.same_shape(spec_)) return spec_.name_difference(env).empty() ? std::string() : "its observation differs: " + spec_.name_difference(env);
        if (env.items != spec_.items)
            return "the network scores " + spec_.items + "s (trained in that action mode); this env's actions choose " + env.items + "s";
        if (cfg_.arch == architecture::flat)
            return "a flat network acts only on the observation it was trained on (" + shape(spec_) + "); this env has " + shape(env);
        // what differs by name when both record names, else the likely cause
        const auto named = [&](const std::string& hint) {
            const auto why = spec_.name_difference(env);
            return why.empty() ? hint : why;
        };
        if (env.gpu_features != spec_.gpu_features)
            return "the network reads " + std::to_string(spec_.gpu_features) + " features per GPU, this env has " +
                   std::to_string(env.gpu_features) + " (" + named("co-location adds 3") + ")";
        if (env.context != spec_.context)
            return "the network reads " + std::to_string(spec_.context) + " context values (job, queue window, global), this env has " +
                   std::to_string(env.context) + " (" + named("the queue window differs: each waiting job is 4 values") + ")";
        if (node_pooling(env, cfg_) && (env.gpus_per_node == 0 || env.num_gpus % env.gpus_per_node != 0))
            return "the network pools features over nodes, and this env's GPUs are not numbered node by node";
        // another cluster size: the same per-item features and context, by name when both record them
        if (const auto why = spec_.name_difference(env); !why.empty()) return "its observation differs: " + why;
        return {};
    }

    /// The same network (the same weights and normalisers) for observations of shape `env`: a
    /// per_gpu network on another cluster (see incompatibility(); Error naming what differs).
    [[nodiscard]] basic_actor_critic for_spec(const obs_spec& env) const {
        if (const auto why = incompatibility(env); !why.empty()) throw Error("actor_critic: " + why);
        basic_actor_critic n = *this;
        n.spec_ = env;
        return n;
    }

    /// Every sub-network (for the optimiser, gradient clipping and checkpoints), in a fixed order.
    [[nodiscard]] std::vector<net*> parts() {
        std::vector<net*> v;
        for (auto& [name, n] : named()) v.push_back(n);
        return v;
    }
    /// Sub-networks with their checkpoint names.
    [[nodiscard]] std::vector<std::pair<std::string, net*>> named() {
        if (cfg_.arch == architecture::per_gpu)
            return {{"gpu_in", &gpu_in_}, {"ctx_in", &ctx_in_}, {"tail", &tail_}, {"defer", &defer_}, {"value", &value_}};
        if (cfg_.shared_trunk) return {{"trunk", &trunk_}, {"policy", &pi_}, {"value", &vhead_}};
        return {{"policy", &pi_}, {"value", &value_}};
    }
    [[nodiscard]] std::vector<std::pair<std::string, const net*>> named() const {
        std::vector<std::pair<std::string, const net*>> v;
        for (auto& [name, n] : const_cast<basic_actor_critic*>(this)->named()) v.emplace_back(name, n);
        return v;
    }
    [[nodiscard]] std::size_t num_params() {
        std::size_t n = 0;
        for (auto* p : parts()) n += p->num_params();
        return n;
    }
    void zero_grad() {
        for (auto* p : parts()) p->zero_grad();
    }

    /// Observation normalisers: per_gpu has {per-GPU features, context}; flat has {observation}.
    [[nodiscard]] std::vector<running_norm>& normalizers() noexcept { return norms_; }
    [[nodiscard]] const std::vector<running_norm>& normalizers() const noexcept { return norms_; }

    /// Adds a batch of raw observations (obs_size x B, float) to the normalisers' statistics.
    void update_normalizers(const Eigen::Ref<const Eigen::MatrixXf>& obs) {
        if (!cfg_.normalize_obs) return;
        if (cfg_.arch == architecture::flat) {
            norms_[0].update(obs);
            return;
        }
        norms_[0].update(gather_gpu(obs.template cast<S>()));
        norms_[1].update(obs.bottomRows(Eigen::Index(spec_.context)));
    }

    /// Forward pass on raw observations (obs_size x B): fills w.logits ((G+1) x B) and w.values
    /// (B). With `masks` ((G+1) x B, column-major), per_gpu scores only the valid GPUs (masked
    /// logits are left at 0: a masked categorical ignores them), which saves most of the work on
    /// a busy cluster. A flat network without normalisation reads an obs of type `matrix` in
    /// place: it must then stay alive and unchanged until backward().
    template <class M>
    void forward(const M& obs, workspace& w, const std::uint8_t* masks = nullptr) const {
        const auto B = obs.cols();
        w.batch = std::size_t(B);
        const auto G = Eigen::Index(spec_.num_gpus), F = Eigen::Index(spec_.gpu_features), C = Eigen::Index(spec_.context);
        const auto A = G + 1;
        if (cfg_.arch == architecture::flat) {
            // the networks read a minibatch matrix where it is (it outlives the backward pass);
            // other inputs (a map of the rollout's observations) or normalised ones are copied
            const matrix* x = &w.x;
            if constexpr (std::is_same_v<M, matrix>) {
                if (!cfg_.normalize_obs) x = &obs;
            }
            if (x == &w.x) {
                w.x = obs.template cast<S>();
                if (cfg_.normalize_obs) norms_[0].apply(w.x);
            }
            if (cfg_.shared_trunk) {
                const auto& h = trunk_.forward_view(*x, w.c_trunk);
                w.logits = pi_.forward_view(h, w.c_pi);
                w.values = vhead_.forward_view(h, w.c_vhead).row(0).transpose();
            } else {
                w.logits = pi_.forward_view(*x, w.c_pi);
                w.values = value_.forward_view(*x, w.c_value).row(0).transpose();
            }
            return;
        }
        // the GPU columns to score
        // written for every GPU, kept for the valid ones: no branch on the (unpredictable) mask
        w.col_b.resize(std::size_t(B * G));
        w.col_g.resize(std::size_t(B * G));
        std::size_t valid = 0;
        for (Eigen::Index b = 0; b < B; ++b)
            for (Eigen::Index g = 0; g < G; ++g) {
                w.col_b[valid] = b;
                w.col_g[valid] = g;
                valid += !masks || masks[std::size_t(b * A + g)] ? 1 : 0;
            }
        w.col_b.resize(valid);
        w.col_g.resize(valid);
        const auto n = Eigen::Index(valid);
        w.xg.resize(Eigen::Index(gpu_inputs(spec_, cfg_)), n);
        for (Eigen::Index k = 0; k < n; ++k)
            for (Eigen::Index f = 0; f < F; ++f) w.xg(f, k) = S(obs(f * G + w.col_g[std::size_t(k)], w.col_b[std::size_t(k)]));
        if (node_pooling(spec_, cfg_)) {
            node_stats(obs, w.pool);
            const auto gpn = Eigen::Index(spec_.gpus_per_node), nodes = G / gpn;
            for (Eigen::Index k = 0; k < n; ++k)
                w.xg.col(k).tail(2 * F) = w.pool.col(w.col_b[std::size_t(k)] * nodes + w.col_g[std::size_t(k)] / gpn);
        }
        w.ctx = obs.bottomRows(C).template cast<S>();
        w.vin.resize(C + F, B);
        feature_means(obs, w.vin);
        if (cfg_.normalize_obs) {
            norms_[0].apply(w.xg);
            norms_[1].apply(w.ctx);
            // the value reads normalised feature means: normalise the means like the features
            auto tail = w.vin.bottomRows(F);
            matrix t = tail;
            norms_[0].apply(t);
            tail = t;
        }
        w.vin.topRows(C) = w.ctx;
        // the sub-networks read their inputs where they are, in the workspace (until backward())
        const auto& pc = ctx_in_.forward_view(w.ctx, w.c_ctx);  // H x B
        const auto& g1 = gpu_in_.forward_view(w.xg, w.c_gpu);   // H x n
        w.a1 = g1;
        for (Eigen::Index k = 0; k < n; ++k) w.a1.col(k) += pc.col(w.col_b[std::size_t(k)]);
        detail::activate(w.a1, cfg_.act);
        const auto& sc = tail_.forward_view(w.a1, w.c_tail);  // 1 x n
        w.logits.setZero(A, B);
        for (Eigen::Index k = 0; k < n; ++k) w.logits(w.col_g[std::size_t(k)], w.col_b[std::size_t(k)]) = sc(0, k);
        w.logits.row(G) = defer_.forward_view(w.ctx, w.c_defer).row(0);
        w.values = value_.forward_view(w.vin, w.c_value).row(0).transpose();
    }

    /// Backward pass after forward(obs, w): adds the parameter gradients for dLoss/dlogits
    /// ((G+1) x B) and dLoss/dvalues (B), or with `accumulate` false writes them (every
    /// sub-network's gradient is written once: no zero_grad() needed).
    void backward(workspace& w, const matrix& dlogits, const vector& dvalues, bool accumulate = true) {
        const auto B = Eigen::Index(w.batch);
        const auto G = Eigen::Index(spec_.num_gpus);
        if (cfg_.arch == architecture::flat) {
            if (cfg_.shared_trunk) {
                matrix dh1, dh2;
                pi_.backward(w.c_pi, dlogits, &dh1, accumulate);
                vhead_.backward(w.c_vhead, dvalues.transpose(), &dh2, accumulate);
                trunk_.backward(w.c_trunk, dh1 + dh2, nullptr, accumulate);
            } else {
                pi_.backward(w.c_pi, dlogits, nullptr, accumulate);
                value_.backward(w.c_value, dvalues.transpose(), nullptr, accumulate);
            }
            return;
        }
        const auto n = Eigen::Index(w.col_b.size());
        matrix dsc(1, n);
        for (Eigen::Index k = 0; k < n; ++k) dsc(0, k) = dlogits(w.col_g[std::size_t(k)], w.col_b[std::size_t(k)]);
        matrix da1;
        tail_.backward(w.c_tail, std::move(dsc), &da1, accumulate);
        detail::activation_backward(da1, w.a1, cfg_.act);
        matrix dpc = matrix::Zero(da1.rows(), B);
        for (Eigen::Index k = 0; k < n; ++k) dpc.col(w.col_b[std::size_t(k)]) += da1.col(k);
        gpu_in_.backward(w.c_gpu, std::move(da1), nullptr, accumulate);
        ctx_in_.backward(w.c_ctx, std::move(dpc), nullptr, accumulate);
        defer_.backward(w.c_defer, dlogits.row(G), nullptr, accumulate);
        value_.backward(w.c_value, dvalues.transpose(), nullptr, accumulate);
    }

    /// The action for one observation: argmax over valid actions (greedy) or a sample.
    [[nodiscard]] std::size_t act(std::span<const float> obs, std::span<const std::uint8_t> mask, workspace& w,
                                  gpuplace::detail::rng* sample = nullptr) const {
        if (obs.size() != spec_.obs_size())
            throw Error("actor_critic: observation of size " + std::to_string(obs.size()) + ", network expects " +
                        std::to_string(spec_.obs_size()));
        if (mask.size() != spec_.num_actions())
            throw Error("actor_critic: mask of size " + std::to_string(mask.size()) + ", network expects " +
                        std::to_string(spec_.num_actions()));
        const Eigen::Map<const Eigen::MatrixXf> o(obs.data(), Eigen::Index(obs.size()), 1);
        forward(o, w, mask.data());
        const basic_masked_categorical<S> d(w.logits.col(0), mask);
        return sample ? d.sample(*sample) : d.argmax();
    }

private:
    void build() {
        auto lay = layout(spec_, cfg_);  // in named() order
        auto subs = named();
        for (std::size_t i = 0; i < lay.size(); ++i)
            *subs[i].second = net(std::move(lay[i].sizes), cfg_.act, lay[i].output_activation);
        if (cfg_.arch == architecture::per_gpu) norms_ = {running_norm(gpu_inputs(spec_, cfg_)), running_norm(spec_.context)};
        else norms_ = {running_norm(spec_.obs_size())};
    }

    /// Per-GPU features as columns: (F x B*G), column b*G + g holds GPU g of sample b.
    template <class M>
    [[nodiscard]] matrix gather_gpu(const M& obs) const {
        const auto B = obs.cols();
        const auto G = Eigen::Index(spec_.num_gpus), F = Eigen::Index(spec_.gpu_features);
        matrix xg(Eigen::Index(gpu_inputs(spec_, cfg_)), B * G);
        for (Eigen::Index b = 0; b < B; ++b)
            for (Eigen::Index f = 0; f < F; ++f) xg.row(f).segment(b * G, G) = obs.col(b).segment(f * G, G).transpose();
        if (node_pooling(spec_, cfg_)) {
            matrix pool;
            node_stats(obs, pool);
            const auto gpn = Eigen::Index(spec_.gpus_per_node), nodes = G / gpn;
            for (Eigen::Index b = 0; b < B; ++b)
                for (Eigen::Index g = 0; g < G; ++g) xg.col(b * G + g).tail(2 * F) = pool.col(b * nodes + g / gpn);
        }
        return xg;
    }

    /// The mean over the GPUs of each per-GPU feature, into rows C.. of vin (C + F x B): summed in
    /// double, GPU by GPU, four samples at a time (four independent chains of additions instead of
    /// one). Each sum keeps its order: the same bits as Eigen's mean() of one sample's segment.
    template <class M>
    void feature_means(const M& obs, matrix& vin) const {
        const auto B = obs.cols();
        const auto G = Eigen::Index(spec_.num_gpus), F = Eigen::Index(spec_.gpu_features), C = Eigen::Index(spec_.context);
        constexpr Eigen::Index lanes = 4;
        for (Eigen::Index f = 0; f < F; ++f) {
            Eigen::Index b = 0;
            for (; b + lanes <= B; b += lanes) {
                double s[lanes] = {0, 0, 0, 0};
                for (Eigen::Index g = 0; g < G; ++g)
                    for (Eigen::Index l = 0; l < lanes; ++l) s[l] += double(obs(f * G + g, b + l));
                for (Eigen::Index l = 0; l < lanes; ++l) vin(C + f, b + l) = S(s[l] / double(G));
            }
            for (; b < B; ++b) vin(C + f, b) = S(obs.col(b).segment(f * G, G).template cast<double>().mean());
        }
    }

    /// Per node of every sample, the mean then the max of each per-GPU feature: (2F x B*nodes).
    template <class M>
    void node_stats(const M& obs, matrix& out) const {
        const auto B = obs.cols();
        const auto G = Eigen::Index(spec_.num_gpus), F = Eigen::Index(spec_.gpu_features);
        const auto gpn = Eigen::Index(spec_.gpus_per_node), nodes = G / gpn;
        out.resize(2 * F, B * nodes);
        for (Eigen::Index b = 0; b < B; ++b)
            for (Eigen::Index f = 0; f < F; ++f)
                for (Eigen::Index nd = 0; nd < nodes; ++nd) {
                    S sum = 0, mx = -std::numeric_limits<S>::infinity();
                    for (Eigen::Index g = nd * gpn; g < (nd + 1) * gpn; ++g) {
                        const S v = S(obs(f * G + g, b));
                        sum += v;
                        mx = std::max(mx, v);
                    }
                    out(f, b * nodes + nd) = sum / S(gpn);
                    out(F + f, b * nodes + nd) = mx;
                }
    }

    obs_spec spec_;
    network_config cfg_;
    net gpu_in_, ctx_in_, tail_, defer_, value_, pi_, trunk_, vhead_;
    std::vector<running_norm> norms_;
};

using actor_critic = basic_actor_critic<float>;

}  // namespace gpuplace::rl
