#pragma once
/// \file rl/hold_guard.hpp
/// A network whose holds, and optionally its placements, are limited. A policy with DEFER may leave
/// GPUs idle while a waiting job would fit on them (idle_waiting.hpp); pack_wait does so on purpose,
/// holding a job whose placement would be spread for a compact one, and on most clusters it pays off
/// (docs/ppo.md). A network trained on one cluster size can learn holds that do not carry over to
/// another. Two guards act as the network does, except where its greedy action is DEFER and holding
/// is not allowed: there they take the network's greedy action among the other valid ones.
/// - hold_only_with(net, heuristic): holding is allowed where the heuristic holds too (it is asked
///   only at those states; the network places every job);
/// - hold_from(net, gpus): holding is allowed on clusters of at least `gpus` GPUs.
/// Either takes a placement margin (place_margin; with_place_margin(net, m): the margin alone): where the network places the job elsewhere than
/// a heuristic (e.g. pack) would, its placement stands only if its logit exceeds the heuristic's
/// action's by more than the margin; the heuristic's placement is taken otherwise. A network
/// trained on one cluster size can prefer, by a small margin, placements that cost on another
/// (docs/ppo.md); the margin keeps only its confident departures from the heuristic.

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

/// A placement margin (see the file's comment): where the network places a job elsewhere than
/// `heuristic` (e.g. named_policy<E>("pack")), its placement stands only if its logit exceeds that of
/// the heuristic's action by more than `margin` (0: ties go to the heuristic). No heuristic (the
/// default): the network places as it prefers. An infinite margin always takes the heuristic's
/// placement (the network then decides only whether to hold). The heuristic is asked only where the
/// network places a job, so it must keep no state across decisions (as pack keeps none).
template <class E>
struct place_margin {
    any_policy<E> heuristic;  ///< the placement the network departs from only by the margin; none: off
    double margin = 0;        ///< in logits, from 0 up
};

namespace detail {
/// `net` (greedy) holding only where `may_hold(seed)(e)` says so, and placing only as `m` allows; one
/// network workspace and mask buffer per episode.
template <class E, std::floating_point S, class MakeRule>
[[nodiscard]] any_policy<E> hold_guarded(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, MakeRule may_hold,
                                         place_margin<E> m = {}) {
    if (!(m.margin >= 0))  // NaN too
        throw ConfigError("place margin: a number of logits from 0 up, got " + std::to_string(m.margin));
    return {std::move(name),
            [net, may_hold = std::move(may_hold), m = std::move(m)](std::uint64_t seed) {
                auto p = std::make_shared<basic_network_policy<S>>(net);
                auto allow = std::make_shared<std::function<bool(const E&)>>(may_hold(seed));
                auto mask = std::make_shared<std::vector<std::uint8_t>>();
                std::function<std::int64_t(const E&)> h;
                if (m.heuristic.make) h = m.heuristic.make(seed);
                return std::function<std::int64_t(const E&)>([p, allow, mask, h = std::move(h), margin = m.margin](const E& e) {
                    auto a = p->act(e);
                    if (a == e.defer_action() && !(*allow)(e)) {
                        const auto valid = e.action_mask();
                        mask->assign(valid.begin(), valid.end());  // sized once: later steps reuse its capacity
                        (*mask)[std::size_t(a)] = 0;
                        bool other = false;
                        for (const auto v : *mask) other = other || v != 0;
                        if (!other) return a;  // DEFER is the only valid action
                        a = p->act(e, *mask);
                    }
                    if (!h || a == e.defer_action()) return a;
                    // the heuristic's action is valid (a policy's action always is); the logits are
                    // those of the network's last act(), under a mask that includes both actions
                    const auto b = h(e);
                    if (b == a || b == e.defer_action()) return a;
                    return double(p->logit(a)) - double(p->logit(b)) > margin ? a : b;
                });
            },
            {},
            {}};
}
}  // namespace detail

/// `net` (greedy) holding only where `with` holds too (see the file's comment), as a harness
/// policy named `name`.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> hold_only_with(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, any_policy<E> with,
                                          place_margin<E> m = {}) {
    return detail::hold_guarded<E>(
        std::move(name), std::move(net),
        [make = std::move(with.make)](std::uint64_t seed) {
            return std::function<bool(const E&)>([h = make(seed)](const E& e) { return h(e) == e.defer_action(); });
        },
        std::move(m));
}

/// `net` (greedy) holding only on clusters of at least `min_gpus` GPUs (see the file's comment),
/// as a harness policy named `name`; on smaller ones it never holds a job while another action is valid.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> hold_from(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, std::size_t min_gpus,
                                     place_margin<E> m = {}) {
    return detail::hold_guarded<E>(
        std::move(name), std::move(net),
        [min_gpus](std::uint64_t) {
            return std::function<bool(const E&)>([min_gpus](const E& e) { return e.num_gpus() >= min_gpus; });
        },
        std::move(m));
}

/// `net` (greedy) holding wherever it prefers and placing only as `m` allows (see the file's
/// comment), as a harness policy named `name`.
template <class E, std::floating_point S>
[[nodiscard]] any_policy<E> with_place_margin(std::string name, std::shared_ptr<const basic_actor_critic<S>> net, place_margin<E> m) {
    return detail::hold_guarded<E>(
        std::move(name), std::move(net),
        [](std::uint64_t) { return std::function<bool(const E&)>([](const E&) { return true; }); }, std::move(m));
}

}  // namespace gpuplace::rl
