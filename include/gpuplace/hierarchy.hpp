#pragma once
/// \file hierarchy.hpp
/// A cluster's network as a level hierarchy: GPUs inside level-1 domains (e.g. nodes), those
/// inside level-2 domains (e.g. racks), and so on up to the root, the whole cluster (e.g. the
/// spine). Two GPUs talk at the level of their lowest common domain, with that level's bandwidth
/// and latency. Trees of any depth and fanout, and domains of different sizes on one level, are
/// expressible; GPUs are numbered depth first, so every domain is a contiguous range of GPU ids
/// (any tree can be renumbered so). Domains are numbered in GPU order on each level, so the
/// children of a domain are a contiguous range of the level below. Every query is O(1).
///
/// Levels: 0 is a GPU itself, 1 .. L-1 are the domain levels, L = num_levels() is the root.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "error.hpp"

namespace gpuplace {

/// Index of a GPU in the cluster, 0 .. num_gpus()-1.
using gpu_id = std::uint32_t;

/// One level of the hierarchy above the GPU: what it is called, and how fast two GPUs whose
/// lowest common domain is on it talk.
struct level_spec {
    std::string name;       ///< e.g. "node", "rack", "spine" (the root's)
    double bandwidth = 1;   ///< GB/s per GPU
    double latency = 0;     ///< seconds per hop
    friend bool operator==(const level_spec&, const level_spec&) = default;
};

/// GPU -> domain of one level, O(1): a table lookup (one load, cheaper than a division by the
/// domain size, and it serves domains of different sizes alike). Cheap to copy; valid while a
/// level_hierarchy that made it lives.
class domain_map {
public:
    domain_map() = default;
    explicit domain_map(const std::uint32_t* table) noexcept : table_(table) {}
    [[nodiscard]] std::uint32_t operator()(gpu_id g) const noexcept { return table_[g]; }

private:
    const std::uint32_t* table_ = nullptr;
};

/// Immutable and shared by its copies (copying one costs a reference count).
class level_hierarchy {
public:
    static constexpr double same_gpu_bandwidth = 1e300;  ///< level 0: a GPU and itself
    static constexpr std::size_t max_levels = 16;        ///< levels above the GPU, the root included

    level_hierarchy() = default;

    /// `levels`: the L levels above the GPU, the root last. `sizes[l - 1]`: the size in GPUs of
    /// every domain of level l (1 .. L-1) in GPU order. Each level's sizes add up to the same number
    /// of GPUs, and every domain lies inside one domain of the next level up. `symmetric`: whether
    /// the GPUs of a level-1 domain are interchangeable (false, e.g., for a DGX-1's hybrid cube-mesh,
    /// where some pairs have NVLink and others not). ConfigError on any inconsistency.
    level_hierarchy(std::vector<level_spec> levels, const std::vector<std::vector<std::uint32_t>>& sizes, bool symmetric = true) {
        auto data = std::make_shared<hierarchy_data>();
        auto& spec_ = data->spec;
        auto& first_ = data->first;
        auto& of_ = data->of;
        auto& parent_ = data->parent;
        auto& child_ = data->child;
        auto& max_ = data->max;
        auto& uniform_ = data->uniform;
        spec_ = std::move(levels);
        data->symmetric = symmetric;
        const auto num_domains = [&](std::size_t l) { return first_[l].size() - 1; };
        const auto size = [&](std::size_t l, std::size_t d) { return first_[l][d + 1] - first_[l][d]; };
        const auto bad = [](const std::string& what) { throw ConfigError("topology: " + what); };
        if (spec_.empty()) bad("a hierarchy needs at least one level (the root)");
        if (spec_.size() > max_levels) bad(std::to_string(spec_.size()) + " levels (at most " + std::to_string(max_levels) + ")");
        if (sizes.size() + 1 != spec_.size())
            bad(std::to_string(spec_.size()) + " levels need " + std::to_string(spec_.size() - 1) + " lists of domain sizes, got " +
                std::to_string(sizes.size()));
        for (const auto& s : spec_) {
            if (!(s.bandwidth > 0)) bad("level \"" + s.name + "\": bandwidth must be > 0 (got " + std::to_string(s.bandwidth) + ")");
            if (!(s.latency >= 0)) bad("level \"" + s.name + "\": latency must be >= 0 (got " + std::to_string(s.latency) + ")");
        }
        const std::size_t L = spec_.size();
        first_.assign(L + 1, {});
        std::size_t G = 0;
        for (std::size_t l = 1; l < L; ++l) {
            const auto& sz = sizes[l - 1];
            std::uint64_t total = 0;
            first_[l].push_back(0);
            for (auto s : sz) {
                if (s == 0) bad("level \"" + spec_[l - 1].name + "\": a domain of 0 GPUs");
                total += s;
                if (total > (1u << 24)) bad("too many GPUs (more than 16777216)");
                first_[l].push_back(static_cast<std::uint32_t>(total));
            }
            if (l > 1 && total != G)
                bad("level \"" + spec_[l - 1].name + "\" holds " + std::to_string(total) + " GPUs, the level below " + std::to_string(G));
            G = total;
        }
        if (L == 1) bad("a hierarchy needs at least one level of domains below the root");
        const std::size_t G_ = G;
        data->G = G;
        if (G_ == 0) bad("a cluster of 0 GPUs");
        first_[0].resize(G_ + 1);
        for (std::size_t g = 0; g <= G_; ++g) first_[0][g] = static_cast<std::uint32_t>(g);
        first_[L] = {0, static_cast<std::uint32_t>(G_)};
        // per GPU: its domain on each level; per domain: its parent and first child
        of_.assign(L + 1, {});
        parent_.assign(L + 1, {});
        child_.assign(L + 1, {});
        for (std::size_t l = 1; l < L; ++l) {
            auto& of = of_[l];
            of.resize(G_);
            for (std::size_t d = 0; d + 1 < first_[l].size(); ++d)
                std::fill(of.begin() + first_[l][d], of.begin() + first_[l][d + 1], static_cast<std::uint32_t>(d));
        }
        for (std::size_t l = 1; l <= L; ++l) {
            const std::size_t n = num_domains(l);
            parent_[l - 1].resize(num_domains(l - 1));
            child_[l].resize(n + 1);
            std::size_t c = 0;
            for (std::size_t d = 0; d < n; ++d) {
                child_[l][d] = static_cast<std::uint32_t>(c);
                while (c < num_domains(l - 1) && first_[l - 1][c] < first_[l][d + 1]) {
                    if (first_[l - 1][c] < first_[l][d] || first_[l - 1][c + 1] > first_[l][d + 1])
                        bad("a domain of level \"" + spec_[l - 2].name + "\" crosses the boundary of a domain of level \"" +
                            spec_[l - 1].name + "\"");  // l >= 2 here: a GPU crosses no boundary
                    parent_[l - 1][c] = static_cast<std::uint32_t>(d);
                    ++c;
                }
            }
            child_[l][n] = static_cast<std::uint32_t>(c);
        }
        max_.assign(L + 1, 1);
        uniform_.assign(L + 1, 1);
        for (std::size_t l = 1; l <= L; ++l) {
            std::uint32_t mx = 0, mn = ~std::uint32_t{0};
            for (std::size_t d = 0; d < num_domains(l); ++d) mx = std::max(mx, size(l, d)), mn = std::min(mn, size(l, d));
            max_[l] = mx;
            uniform_[l] = mx == mn ? mx : 0;
        }
        data->map.resize(L + 1);
        for (std::size_t l = 1; l < L; ++l) data->map[l] = domain_map(of_[l].data());
        data->flat_off.assign(L + 1, 0);
        for (std::size_t l = 1; l < L; ++l) data->flat_off[l + 1] = data->flat_off[l] + static_cast<std::uint32_t>(num_domains(l));
        data->flat.resize(G_ * (L - 1));
        for (std::size_t g = 0; g < G_; ++g)
            for (std::size_t l = 1; l < L; ++l) data->flat[g * (L - 1) + l - 1] = data->flat_off[l] + of_[l][g];
        d_ = std::move(data);
    }

    /// A uniform tree: `fanout[0]` GPUs per level-1 domain, `fanout[l]` level-l domains per
    /// level-(l+1) domain (the last entry: how many domains the root holds).
    [[nodiscard]] static level_hierarchy uniform(std::vector<level_spec> levels, const std::vector<std::size_t>& fanout,
                                                 bool symmetric = true) {
        if (fanout.size() != levels.size())
            throw ConfigError("topology: " + std::to_string(levels.size()) + " levels need as many fanouts, got " +
                              std::to_string(fanout.size()));
        for (auto f : fanout)
            if (f == 0) throw ConfigError("topology: every fanout must be >= 1 (got 0)");
        std::vector<std::vector<std::uint32_t>> sizes;
        std::uint64_t per = 1, count = 1;
        for (auto f : fanout) count *= f;
        if (count > (1u << 24)) throw ConfigError("topology: too many GPUs (" + std::to_string(count) + " > 16777216)");
        for (std::size_t l = 0; l + 1 < fanout.size(); ++l) {
            per *= fanout[l];
            sizes.emplace_back(count / per, static_cast<std::uint32_t>(per));
        }
        return level_hierarchy(std::move(levels), sizes, symmetric);
    }

    // ---- sizes ------------------------------------------------------------------------------------

    [[nodiscard]] std::size_t num_gpus() const noexcept { return d_->G; }
    /// L: the number of levels above the GPU, the root included (3 for nodes, racks and a spine).
    [[nodiscard]] std::size_t num_levels() const noexcept { return d_->spec.size(); }
    [[nodiscard]] const level_spec& level(std::size_t l) const noexcept { return d_->spec[l - 1]; }
    /// How many domains level l has (G on level 0, 1 on level L).
    [[nodiscard]] std::size_t num_domains(std::size_t l) const noexcept { return d_->first[l].size() - 1; }
    /// The largest domain of level l, in GPUs.
    [[nodiscard]] std::uint32_t max_size(std::size_t l) const noexcept { return d_->max[l]; }
    /// The size of every domain of level l when all are equal, else 0.
    [[nodiscard]] std::uint32_t uniform_size(std::size_t l) const noexcept { return d_->uniform[l]; }
    /// Whether the GPUs of a level-1 domain are interchangeable (see the constructor).
    [[nodiscard]] bool symmetric() const noexcept { return d_->symmetric; }

    // ---- domains ----------------------------------------------------------------------------------

    /// The domain of level l that holds GPU g (g itself on level 0, 0 on level L).
    [[nodiscard]] std::uint32_t domain_of(std::size_t l, gpu_id g) const noexcept {
        return l == 0 ? g : l >= num_levels() ? 0 : d_->map[l](g);
    }
    /// The O(1) map GPU -> domain of level l (1 .. L-1), to keep in a hot loop.
    [[nodiscard]] const domain_map& map(std::size_t l) const noexcept { return d_->map[l]; }
    /// Every domain of levels 1 .. L-1 numbered in one sequence, level 1's first: domain d of level
    /// l is number flat_offset(l) + d (flat_offset(L) is how many there are). Arrays of per-domain
    /// counts over every level are laid out so.
    [[nodiscard]] std::size_t flat_offset(std::size_t l) const noexcept { return d_->flat_off[l]; }
    /// Every GPU's domains on levels 1 .. L-1 by their flat numbers: GPU g's are the L - 1 entries
    /// from flat_domains()[g * (L - 1)], level 1's first. (One row per GPU: what a start or a pick
    /// updates on every level reads one cache line.)
    [[nodiscard]] const std::uint32_t* flat_domains() const noexcept { return d_->flat.data(); }
    /// Every GPU's domain of level l (1 .. L-1), for loops over all GPUs.
    [[nodiscard]] std::span<const std::uint32_t> domains(std::size_t l) const noexcept { return d_->of[l]; }
    /// Level l's domain boundaries: domain d is GPUs bounds(l)[d] .. bounds(l)[d + 1] - 1.
    [[nodiscard]] std::span<const std::uint32_t> bounds(std::size_t l) const noexcept { return d_->first[l]; }
    /// The first GPU of domain d of level l, one past its last, and its size.
    [[nodiscard]] gpu_id first(std::size_t l, std::size_t d) const noexcept { return d_->first[l][d]; }
    [[nodiscard]] gpu_id end(std::size_t l, std::size_t d) const noexcept { return d_->first[l][d + 1]; }
    [[nodiscard]] std::uint32_t size(std::size_t l, std::size_t d) const noexcept { return d_->first[l][d + 1] - d_->first[l][d]; }
    /// The domain of level l + 1 that holds domain d of level l.
    [[nodiscard]] std::uint32_t parent(std::size_t l, std::size_t d) const noexcept { return d_->parent[l][d]; }
    /// The children of domain d of level l >= 1: domains first_child .. end_child - 1 of level l - 1.
    [[nodiscard]] std::uint32_t first_child(std::size_t l, std::size_t d) const noexcept { return d_->child[l][d]; }
    [[nodiscard]] std::uint32_t end_child(std::size_t l, std::size_t d) const noexcept { return d_->child[l][d + 1]; }
    /// Every domain's first child on level l >= 1 (num_domains(l) + 1 entries, the last one past
    /// the level's last child), for loops over a level.
    [[nodiscard]] std::span<const std::uint32_t> children(std::size_t l) const noexcept { return d_->child[l]; }

    // ---- links ------------------------------------------------------------------------------------

    /// The level two GPUs talk at: that of their lowest common domain (0 for a GPU and itself).
    [[nodiscard]] std::size_t link(gpu_id a, gpu_id b) const noexcept {
        if (a == b) return 0;
        std::size_t l = 1;
        while (l < num_levels() && d_->map[l](a) != d_->map[l](b)) ++l;
        return l;
    }
    /// The lowest level whose one domain holds all of `gpus` (0 for one GPU or none).
    [[nodiscard]] std::size_t span(std::span<const gpu_id> gpus) const noexcept {
        if (gpus.size() <= 1) return 0;
        const std::size_t L = num_levels();
        const auto* map = d_->map.data();
        std::size_t l = 1;  // the lowest level whose domain of gpus[0] holds every GPU so far
        for (auto g : gpus)
            while (l < L && map[l](g) != map[l](gpus[0])) ++l;
        return l;
    }
    /// Bandwidth (GB/s) and latency (s) at level l (level 0: same_gpu_bandwidth and 0).
    [[nodiscard]] double bandwidth(std::size_t l) const noexcept { return l == 0 ? same_gpu_bandwidth : d_->spec[l - 1].bandwidth; }
    [[nodiscard]] double latency(std::size_t l) const noexcept { return l == 0 ? 0.0 : d_->spec[l - 1].latency; }
    /// The level of the most compact placement of k GPUs on an empty cluster: the lowest level
    /// with a domain that holds k GPUs (0 for k <= 1).
    [[nodiscard]] std::size_t compact_level(std::size_t k) const noexcept {
        if (k <= 1) return 0;
        std::size_t l = 1;
        while (l < num_levels() && d_->max[l] < k) ++l;
        return l;
    }
    /// The level of the most spread placement of k > 1 GPUs on an empty cluster: the highest level
    /// whose domain has more than one child (0 for k <= 1).
    [[nodiscard]] std::size_t spread_level(std::size_t k) const noexcept {
        if (k <= 1) return 0;
        std::size_t l = num_levels();
        while (l > 1 && num_domains(l - 1) == num_domains(l)) --l;
        return l;
    }

    friend bool operator==(const level_hierarchy& a, const level_hierarchy& b) noexcept {
        return a.d_ == b.d_ || (a.d_ && b.d_ && a.d_->spec == b.d_->spec && a.d_->first == b.d_->first && a.d_->symmetric == b.d_->symmetric);
    }

private:
    struct hierarchy_data {
        std::size_t G = 0;
        std::vector<level_spec> spec;
        bool symmetric = true;
        std::vector<std::vector<std::uint32_t>> first;   ///< per level: domain boundaries (num_domains + 1)
        std::vector<std::vector<std::uint32_t>> of;      ///< per level 1 .. L-1: each GPU's domain
        std::vector<std::vector<std::uint32_t>> parent;  ///< per level 0 .. L-1: each domain's parent
        std::vector<std::vector<std::uint32_t>> child;   ///< per level 1 .. L: first children (num_domains + 1)
        std::vector<std::uint32_t> max, uniform;         ///< per level: largest domain; common size or 0
        std::vector<domain_map> map;                     ///< per level 1 .. L-1
        std::vector<std::uint32_t> flat_off;             ///< per level 0 .. L: flat_offset()
        std::vector<std::uint32_t> flat;                 ///< flat_domains()
    };
    std::shared_ptr<const hierarchy_data> d_;
};

}  // namespace gpuplace
