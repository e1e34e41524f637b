#pragma once
/// \file round_policy.hpp
/// A round policy (docs/rounds.md): at every round boundary it reads a round_view (the active
/// jobs, the GPU types) and fills a round_allocation (which jobs run next, on which type, on how
/// many GPUs). RoundPolicy is the concept; any_round_policy a policy by name, made afresh for each
/// episode (a policy may keep state across the rounds of an episode, e.g. Gavel's priorities).

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "round_allocation.hpp"

namespace gpuplace {

/// A round policy: reset(seed) at the start of an episode, then allocate(view, out) at every
/// round boundary (out arrives empty).
template <class P>
concept RoundPolicy = requires(P& p, const round_view& v, round_allocation& out, std::uint64_t seed) {
    p.reset(seed);
    p.allocate(v, out);
};

/// A round policy behind a name: make(seed) gives a fresh policy for one episode.
struct any_round_policy {
    using allocate_fn = std::function<void(const round_view&, round_allocation&)>;
    std::string name;
    std::function<allocate_fn(std::uint64_t seed)> make;
};

/// Wraps a RoundPolicy type (default-constructible, or made by `factory`) as an any_round_policy.
template <RoundPolicy P, class Factory>
[[nodiscard]] any_round_policy wrap_round_policy(std::string name, Factory factory) {
    return {std::move(name), [factory](std::uint64_t seed) {
                auto p = std::make_shared<P>(factory());
                p->reset(seed);
                return any_round_policy::allocate_fn([p](const round_view& v, round_allocation& out) { p->allocate(v, out); });
            }};
}
template <RoundPolicy P>
[[nodiscard]] any_round_policy wrap_round_policy(std::string name) {
    return wrap_round_policy<P>(std::move(name), [] { return P{}; });
}

}  // namespace gpuplace
