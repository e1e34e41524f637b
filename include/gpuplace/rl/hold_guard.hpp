#pragma once
/// \file rl/hold_guard.hpp
/// A network that holds a job back only when a heuristic would hold it too. A policy with DEFER
/// may leave GPUs idle while a waiting job would fit on them (idle_waiting.hpp); pack_wait does so
/// on purpose, holding a job whose placement would be spread for a compact one, and it pays off
/// (docs/ppo.md). A network trained on one cluster size can learn holds that do not carry over to
/// another. hold_only_with(net, heuristic) acts as the network does, except where the network's
/// greedy action is DEFER and the heuristic's is not: there it takes the network's greedy action
/// among the other valid ones. The heuristic is asked only at those states; the network places
/// every job.

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../any_policy.hpp"
#include "checkpoint.hpp"

namespace gpuplace::rl {

/// `net` (greedy) holding only where `with` holds too (see the file's comment), as a harness
/// policy named `name`; one network workspace and mask buffer per episode.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> hold_only_with(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, any_policy<E> with) {
    return {std::move(name),
            [net, make = std::move(with.make)](std::uint64_t seed) {
                auto p = std::make_shared<basic_network_policy<S>>(net);
                auto h = std::make_shared<std::function<std::int64_t(const E&)>>(make(seed));
                auto mask = std::make_shared<std::vector<std::uint8_t>>();
                return std::function<std::int64_t(const E&)>([p, h, mask](const E& e) {
                    const auto a = p->act(e);
                    if (a != e.defer_action() || (*h)(e) == e.defer_action()) return a;
                    const auto m = e.action_mask();
                    mask->assign(m.begin(), m.end());  // sized once: later steps reuse its capacity
                    (*mask)[std::size_t(a)] = 0;
                    return p->act(e, *mask);
                });
            },
            {},
            {}};
}

}  // namespace gpuplace::rl
