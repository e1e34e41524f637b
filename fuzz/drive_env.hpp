#pragma once
// Shared by the scenario fuzzers: builds an env from a scenario and steps it through valid actions,
// checking on every step that the mask has a valid action, its size, and that every feature is a
// finite number in [0, 1]. Only a gpuplace error may escape the build; a ConfigError or TraceError
// there (a job that can never fit, a trace with no job left) ends the input.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <gpuplace/config.hpp>
#include <gpuplace/env.hpp>

#include "fuzz_check.hpp"

namespace gpuplace::fuzz {

template <class E>
void drive(const gpuplace::scenario& s, std::uint64_t seed) {
    std::unique_ptr<E> e;
    try {
        e = std::make_unique<E>(s);
    } catch (const gpuplace::ConfigError&) {
        return;  // e.g. a job that can never fit: rejected at construction, as documented
    } catch (const gpuplace::TraceError&) {
        return;  // a bad row, or a trace with no job left to replay
    }
    try {
        e->reset(seed);
    } catch (const gpuplace::ConfigError&) {
        return;  // a drawn job the cluster or zoo cannot take (e.g. a proximity_drl request > G)
    }
    const std::size_t G = e->num_actions() - 1;  // GPUs, or the placement / job mode's slots
    for (std::size_t step = 0; step < max_steps && !e->done(); ++step) {
        const auto mask = e->action_mask();
        FUZZ_CHECK(mask.size() == G + 1, "mask size %zu for %zu actions", mask.size(), G + 1);
        std::size_t valid = 0;
        for (auto m : mask) valid += m != 0;
        FUZZ_CHECK(valid > 0, "all-zero mask at step %zu", step);
        for (float x : e->observation()) FUZZ_CHECK(std::isfinite(x) && x >= 0.0f && x <= 1.0f, "feature %g", double(x));
        // rotate through the valid actions so that DEFER is taken too
        std::size_t k = (seed + step) % valid;
        std::int64_t a = -1;
        for (std::size_t i = 0; i <= G; ++i)
            if (mask[i] && k-- == 0) {
                a = std::int64_t(i);
                break;
            }
        (void)e->step(a);
    }
}


}  // namespace gpuplace::fuzz
