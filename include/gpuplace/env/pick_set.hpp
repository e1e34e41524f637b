#pragma once
/// \file env/pick_set.hpp
/// The GPUs picked so far for the job being placed, with how many of them each domain of each
/// level of the hierarchy holds (the observation's proximity feature reads those counts).

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "../detail/bounded_vector.hpp"
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
        maps_.assign(levels_, {});
        off_.assign(levels_ + 1, 0);
        for (std::size_t l = 0; l < levels_; ++l) {
            maps_[l] = h.map(l + 1);
            off_[l + 1] = off_[l] + h.num_domains(l + 1);
        }
        count_.assign(off_[levels_], 0);
    }
    /// Adds GPU g. Precondition: g is not picked.
    void add(gpu_id g) noexcept {
        gpus_.push_back(g);
        picked_[g] = 1;
        for (std::size_t l = 0; l < levels_; ++l) ++count_[off_[l] + maps_[l](g)];
    }
    /// Unpicks every GPU, in O(picks x levels).
    void clear() noexcept {
        for (auto g : gpus_) {
            picked_[g] = 0;
            for (std::size_t l = 0; l < levels_; ++l) count_[off_[l] + maps_[l](g)] = 0;
        }
        gpus_.clear();
    }
    /// The picks in pick order; whether GPU g is picked; how many picks domain d of level l holds
    /// (l = 1 .. L-1).
    [[nodiscard]] std::span<const gpu_id> gpus() const noexcept { return gpus_; }
    [[nodiscard]] bool picked(gpu_id g) const noexcept { return picked_[g] != 0; }
    [[nodiscard]] const std::uint8_t* picked_flags() const noexcept { return picked_.data(); }
    [[nodiscard]] std::uint32_t in(std::size_t l, std::size_t d) const noexcept { return count_[off_[l - 1] + d]; }
    /// Every domain's picks on level l, indexed by domain.
    [[nodiscard]] const std::uint32_t* counts(std::size_t l) const noexcept { return count_.data() + off_[l - 1]; }
    [[nodiscard]] std::size_t size() const noexcept { return gpus_.size(); }
    [[nodiscard]] bool empty() const noexcept { return gpus_.empty(); }
    /// Sorts the picks ascending (before the job starts on them).
    void sort() noexcept { std::sort(gpus_.begin(), gpus_.end()); }

private:
    detail::bounded_vector<gpu_id> gpus_;  ///< in pick order (capacity: the number of GPUs)
    std::vector<std::uint8_t> picked_;     ///< per GPU: 1 when picked
    std::vector<std::uint32_t> count_;     ///< picks per domain, level 1's domains first
    std::vector<std::size_t> off_;         ///< per domain level: where its counts start
    std::vector<domain_map> maps_;         ///< per domain level: GPU -> domain
    std::size_t levels_ = 0;
    level_hierarchy h_;                    ///< keeps the maps' tables alive
};

}  // namespace gpuplace::env_detail
