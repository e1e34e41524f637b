#pragma once
/// \file heuristics/random.hpp
/// Uniformly random valid actions.

#include <cstdint>
#include <string_view>

#include "../config.hpp"
#include "../detail/rng.hpp"
#include "../detail/valid_actions.hpp"
#include "../topology.hpp"
#include "placer.hpp"

namespace gpuplace {

/// Random: in the GPU action mode a uniformly random valid GPU (never DEFER while a GPU is
/// valid), in the placement and job modes a uniformly random valid action (DEFER / wait
/// included). As a placer (e.g. under typed_policy) it picks uniformly random allowed GPUs.
class random_policy : public gpu_picker<random_policy> {
public:
    static constexpr std::string_view name = "random";
    explicit random_policy(std::uint64_t seed = 0) : rng_(seed) {}
    void reset(std::uint64_t seed) { rng_.seed(detail::mix_seed(seed, 0x72616e646f6dULL)); }
    void reserve(const level_hierarchy& h) { reserve_plan(h); }
    template <Topology T>
    void reserve(const T& t) { reserve(t.hierarchy()); }

    /// A uniformly random valid action of env e (see the class comment): the k-th valid action
    /// for a uniform k, the valid actions counted and selected 8 at a time (an env's mask entries
    /// are 0 or 1; detail/valid_actions.hpp says why not entry by entry).
    template <class E>
    std::int64_t act(const E& e) {
        const auto mask = e.action_mask();
        const std::size_t n_choices = e.mode() == action_mode::gpu ? mask.size() - 1 : mask.size();
        const std::uint32_t n = detail::count_valid(mask.data(), n_choices);
        if (n == 0) return e.defer_action();
        const auto k = static_cast<std::uint32_t>(rng_.below(n));
        return static_cast<std::int64_t>(detail::select_valid(mask.data(), n_choices, k));
    }
    /// A uniformly random GPU the view allows, or -1 when none.
    template <class V>
    std::int64_t next(const V& v) {
        const auto mask = v.mask();
        std::size_t n = 0;
        for (auto m : mask) n += m;
        if (n == 0) return -1;
        auto k = rng_.below(n);
        for (std::size_t g = 0; g < mask.size(); ++g)
            if (mask[g] && k-- == 0) return static_cast<std::int64_t>(g);
        return -1;
    }

private:
    detail::rng rng_;
};

}  // namespace gpuplace
