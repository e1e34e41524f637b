#pragma once
/// \file rl/hold_guard.hpp
/// A network whose holds are limited. A policy with DEFER may leave GPUs idle while a waiting job
/// would fit on them (idle_waiting.hpp); pack_wait does so on purpose, holding a job whose
/// placement would be spread for a compact one, and on most clusters it pays off (docs/ppo.md). A
/// network trained on one cluster size can learn holds that do not carry over to another. Two
/// guards act as the network does, except where its greedy action is DEFER and holding is not
/// allowed: there they take the network's greedy action among the other valid ones.
/// - hold_only_with(net, heuristic): holding is allowed where the heuristic holds too (it is asked
///   only at those states; the network places every job);
/// - hold_from(net, gpus): holding is allowed on clusters of at least `gpus` GPUs.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../any_policy.hpp"
#include "checkpoint.hpp"

namespace gpuplace::rl {

namespace detail {
/// `net` (greedy) holding only where `may_hold(seed)(e)` says so; one network workspace and mask
/// buffer per episode.
template <class E, std::floating_point S, class MakeRule>
[[nodiscard]] any_policy<E> hold_guarded(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, MakeRule may_hold) {
    return {std::move(name),
            [net, may_hold = std::move(may_hold)](std::uint64_t seed) {
                auto p = std::make_shared<basic_network_policy<S>>(net);
                auto allow = std::make_shared<std::function<bool(const E&)>>(may_hold(seed));
                auto mask = std::make_shared<std::vector<std::uint8_t>>();
                return std::function<std::int64_t(const E&)>([p, allow, mask](const E& e) {
                    const auto a = p->act(e);
                    if (a != e.defer_action() || (*allow)(e)) return a;
                    const auto m = e.action_mask();
                    mask->assign(m.begin(), m.end());  // sized once: later steps reuse its capacity
                    (*mask)[std::size_t(a)] = 0;
                    for (const auto v : *mask)
                        if (v) return p->act(e, *mask);
                    return a;  // DEFER is the only valid action
                });
            },
            {},
            {}};
}
}  // namespace detail

/// `net` (greedy) holding only where `with` holds too (see the file's comment), as a harness
/// policy named `name`.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> hold_only_with(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, any_policy<E> with) {
    return detail::hold_guarded<E>(std::move(name), std::move(net), [make = std::move(with.make)](std::uint64_t seed) {
        return std::function<bool(const E&)>([h = make(seed)](const E& e) { return h(e) == e.defer_action(); });
    });
}

/// `net` (greedy) holding only on clusters of at least `min_gpus` GPUs (see the file's comment),
/// as a harness policy named `name`; on smaller ones it never holds a job while another action is valid.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> hold_from(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, std::size_t min_gpus) {
    return detail::hold_guarded<E>(std::move(name), std::move(net), [min_gpus](std::uint64_t) {
        return std::function<bool(const E&)>([min_gpus](const E& e) { return e.num_gpus() >= min_gpus; });
    });
}

}  // namespace gpuplace::rl
