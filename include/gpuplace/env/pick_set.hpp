#pragma once
/// \file env/pick_set.hpp
/// The GPUs picked so far for the job being placed, with how many of them each domain of each
/// level of the hierarchy holds (the observation's proximity feature reads those counts).

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "../detail/bounded_vector.hpp"
#include "../detail/constant.hpp"
#include "../hierarchy.hpp"

namespace gpuplace::env_detail {

class pick_set {
public:
    /// Sizes the set for a hierarchy (allocates); nothing is picked.
    void resize(const level_hierarchy& h) {
        h_ = h;
        levels_ = h.num_levels() - 1;
        gpus_.reserve(h.num_gpus());
        gpus_.clear();
        picked_.assign(h.num_gpus(), 0);
        off_.assign(levels_ + 1, 0);
        for (std::size_t l = 0; l <= levels_; ++l) off_[l] = h.flat_offset(l + 1);
        count_.assign(off_[levels_], 0);
        flat_ = h.flat_domains();
        fresh_ = 0;
    }
    /// Adds GPU g. Precondition: g is not picked.
    void add(gpu_id g) noexcept {
        gpus_.push_back(g);
        picked_[g] = 1;
        // domains nest, so the levels on which g's domain held no pick before are the lowest ones
        detail::with_constant<2, 3>(levels_, [&](auto NL) {
            const std::size_t L = NL() ? NL() : levels_;
            const std::uint32_t* d = flat_ + std::size_t(g) * L;
            std::size_t fresh = 0;
            for (std::size_t l = 0; l < L; ++l) fresh += ++count_[d[l]] == 1;
            fresh_ = fresh;
        });
    }
    /// Unpicks every GPU, in O(picks x levels).
    void clear() noexcept {
        detail::with_constant<2, 3>(levels_, [&](auto NL) {
            const std::size_t L = NL() ? NL() : levels_;
            for (auto g : gpus_) {
                picked_[g] = 0;
                const std::uint32_t* d = flat_ + std::size_t(g) * L;
                for (std::size_t l = 0; l < L; ++l) count_[d[l]] = 0;
            }
        });
        gpus_.clear();
    }
    /// The picks in pick order; whether GPU g is picked; how many picks domain d of level l holds
    /// (l = 1 .. L-1).
    [[nodiscard]] std::span<const gpu_id> gpus() const noexcept { return gpus_; }
    [[nodiscard]] bool picked(gpu_id g) const noexcept { return picked_[g] != 0; }
    [[nodiscard]] const std::uint8_t* picked_flags() const noexcept { return picked_.data(); }
    [[nodiscard]] std::uint32_t in(std::size_t l, std::size_t d) const noexcept { return count_[off_[l - 1] + d]; }
    /// Every domain's picks on level l, indexed by domain (level 1's come first: a pick's
    /// proximity rows read them without loading an offset).
    [[nodiscard]] const std::uint32_t* counts(std::size_t l) const noexcept { return l == 1 ? count_.data() : count_.data() + off_[l - 1]; }
    /// The highest level m (0 .. L-1) on which the GPU added last is the only pick of its domain
    /// (and so on every level up to m): 0 when its level-1 domain held a pick already.
    [[nodiscard]] std::size_t fresh_levels() const noexcept { return fresh_; }
    [[nodiscard]] std::size_t size() const noexcept { return gpus_.size(); }
    [[nodiscard]] bool empty() const noexcept { return gpus_.empty(); }
    /// Sorts the picks ascending (before the job starts on them).
    void sort() noexcept { std::sort(gpus_.begin(), gpus_.end()); }

private:
    detail::bounded_vector<gpu_id> gpus_;  ///< in pick order (capacity: the number of GPUs)
    std::vector<std::uint8_t> picked_;     ///< per GPU: 1 when picked
    std::vector<std::uint32_t> count_;     ///< picks per domain, by flat number (level_hierarchy::flat_offset)
    std::vector<std::size_t> off_;         ///< per domain level: where its counts start
    const std::uint32_t* flat_ = nullptr;  ///< h_.flat_domains()
    std::size_t levels_ = 0;
    std::size_t fresh_ = 0;                ///< fresh_levels()
    level_hierarchy h_;                    ///< keeps flat_ alive
};

}  // namespace gpuplace::env_detail
