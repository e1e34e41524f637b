#pragma once
/// \file rl/obs_spec.hpp
/// What a network reads of an env's observation (obs_spec): how many items and per-item features,
/// the context's size, and the name of every input, read from the env's observation layout and
/// saved with the network, so that a network refuses an env whose inputs differ, naming them.

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplace::rl {

/// Where the per-item features and the context sit in the flat observation. The items are what the
/// actions but the last choose among: GPUs ("gpu", the GPU action mode), candidate placements
/// ("candidate") or queue slots ("slot"); the per_gpu network scores each item with one MLP.
struct obs_spec {
    std::size_t num_gpus = 0;      ///< items (G GPUs, or K slots); there are num_gpus + 1 actions
    std::size_t gpu_features = 0;  ///< per-item segments of num_gpus values each, first in the observation
    std::size_t context = 0;       ///< the remaining values (job, queue window, global)
    std::size_t gpus_per_node = 0; ///< GPUs are numbered node by node (level-1 domain by domain), this many per node (0 = unknown, domains of different sizes, or not GPUs)
    std::string items = "gpu";     ///< what the per-item segments describe: "gpu", "candidate" or "slot"
    /// What each input is: the per-item segments' names (gpu_features of them), then each context
    /// value's "<segment>.<field>" (context of them); empty when unknown (an env without
    /// observation_layout(), a checkpoint written before names were recorded). Saved with the
    /// network, so that a model refuses an env whose observation differs, naming the difference.
    std::vector<std::string> names{};
    [[nodiscard]] std::size_t obs_size() const noexcept { return num_gpus * gpu_features + context; }
    [[nodiscard]] std::size_t num_actions() const noexcept { return num_gpus + 1; }
    /// The same shape: every count and the items (not the names, which may be unknown on either side).
    [[nodiscard]] bool same_shape(const obs_spec& o) const noexcept {
        return num_gpus == o.num_gpus && gpu_features == o.gpu_features && context == o.context && gpus_per_node == o.gpus_per_node &&
               items == o.items;
    }
    bool operator==(const obs_spec&) const = default;

    /// How this spec's inputs differ from `other`'s by name ("" when they do not, or when either
    /// records none): the names only one of them has, at most a few of each.
    [[nodiscard]] std::string name_difference(const obs_spec& other, std::string_view mine = "the network",
                                              std::string_view theirs = "this env") const {
        if (names.empty() || other.names.empty() || names == other.names) return {};
        const auto only = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
            std::string out;
            std::size_t n = 0;
            for (const auto& x : a) {
                if (std::find(b.begin(), b.end(), x) != b.end()) continue;
                if (n++ < 6) out += (out.empty() ? "" : ", ") + x;
            }
            if (n > 6) out += " and " + std::to_string(n - 6) + " more";
            return out;
        };
        const auto a = only(names, other.names), b = only(other.names, names);
        std::string why;
        if (!a.empty()) why += std::string(mine) + " reads " + a + ", which " + std::string(theirs) + " does not observe";
        if (!b.empty()) why += (why.empty() ? "" : "; ") + std::string(theirs) + " observes " + b + ", which " + std::string(mine) + " was not trained on";
        if (why.empty()) why = "the same inputs in another order";
        return why;
    }

    /// Reads the layout of an env: its per-item segments (obs_segment::item set; num_actions() - 1
    /// values each, first), then the context. An env without observation_layout()
    /// (env_concepts.hpp) has no per-item segments: all context.
    template <class Env>
    [[nodiscard]] static obs_spec of(const Env& e, bool with_names = true) {
        obs_spec s;
        s.num_gpus = e.num_actions() - 1;
        if constexpr (!requires { e.observation_layout(); }) {
            s.context = e.observation().size();
        } else {
            const auto& lay = e.observation_layout();
            if (!lay.empty() && !lay.front().item.empty()) s.items = lay.front().item;
            if constexpr (requires { e.hierarchy().uniform_size(1); })
                if (s.items == "gpu") s.gpus_per_node = e.hierarchy().uniform_size(1);
            std::size_t off = 0;
            for (const auto& seg : lay) {
                if (seg.item != s.items || seg.size != s.num_gpus || seg.offset != off) break;
                ++s.gpu_features;
                off += seg.size;
                if (with_names) s.names.push_back(seg.name);
            }
            s.context = e.observation_size() - off;
            if (!with_names) return s;
            for (const auto& seg : lay) {
                if (seg.offset < off) continue;
                for (const auto& f : seg.fields) s.names.push_back(seg.name + "." + f);
            }
            if (s.names.size() != s.gpu_features + s.context) s.names.clear();  // a layout without every field's name
        }
        return s;
    }
};

}  // namespace gpuplace::rl
