#pragma once
/// \file env/slots.hpp
/// What the placement and job action modes share: Discrete(K + 1) actions over K slots and a last
/// action (DEFER / wait), an observation of K values per slot feature followed by context segments
/// of the GPU mode's observation, their buffers and their layout.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../error.hpp"
#include "../heuristics.hpp"
#include "../observation.hpp"

namespace gpuplace::env_detail {

class slot_buffers {
public:
    /// K slots with one segment "<prefix><name>" of K values per feature name, then the context
    /// segments `parts` of the GPU mode's layout `gpu`.
    void init(std::size_t K, std::string_view prefix, std::span<const std::string_view> names, const obs_layout& gpu,
              std::span<const obs_part> parts, const obs_segment* extra = nullptr) {
        K_ = K;
        layout_.clear();
        std::size_t off = 0;
        const std::string item(prefix.substr(0, prefix.find('_')));  // "candidate_" -> "candidate"
        for (auto n : names) {
            layout_.push_back({std::string(prefix) + std::string(n), off, K_, {}, item});
            off += K_;
        }
        if (extra) {
            auto e = *extra;
            e.offset = off;
            off += e.size;
            layout_.push_back(std::move(e));
        }
        const auto segs = gpu.segments();
        for (auto p : parts) {
            if (!gpu.has(p)) continue;
            for (const auto& s : segs)
                if (s.name == obs_layout::name(p)) {
                    auto c = s;
                    c.offset = off;
                    ctx_[std::size_t(p)] = off;
                    off += c.size;
                    layout_.push_back(std::move(c));
                }
        }
        buf_.allocate(off, K_ + 1);
    }

    [[nodiscard]] std::size_t slots() const noexcept { return K_; }
    [[nodiscard]] std::span<float> obs() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<std::uint8_t> mask() const noexcept { return buf_.mask; }
    [[nodiscard]] const std::vector<obs_segment>& layout() const noexcept { return layout_; }
    /// Where context segment p starts in this observation.
    [[nodiscard]] float* context(obs_part p) const noexcept { return buf_.obs.data() + ctx_[std::size_t(p)]; }
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) { buf_.bind_checked<Error>(obs, mask); }
    void clear() noexcept {
        std::fill(buf_.obs.begin(), buf_.obs.end(), 0.0f);
        std::fill(buf_.mask.begin(), buf_.mask.end(), std::uint8_t{0});
    }
    /// Writes slot s's features.
    void put(std::size_t s, std::span<const float> values) noexcept {
        for (std::size_t f = 0; f < values.size(); ++f) buf_.obs[f * K_ + s] = values[f];
        buf_.mask[s] = 1;
    }
    /// The first valid action (the last when none is).
    [[nodiscard]] std::int64_t first_valid() const noexcept {
        for (std::size_t a = 0; a <= K_; ++a)
            if (buf_.mask[a]) return std::int64_t(a);
        return std::int64_t(K_);
    }
    /// Why `action` is invalid, or "": `items` names the slots ("candidates", "queue slots"),
    /// `last` the last action, `empty` why slot s holds nothing.
    [[nodiscard]] std::string why_invalid(std::int64_t action, const char* items, const char* last, const std::string& empty,
                                          const std::string& last_why) const {
        const auto K = std::int64_t(K_);
        if (action < 0 || action > K)
            return "out of range [0, " + std::to_string(K) + "] (" + std::to_string(K) + " " + items + ", " + last + " = " +
                   std::to_string(K) + ")";
        if (buf_.mask[std::size_t(action)]) return {};
        if (action == K) return std::string(last) + " is not allowed now " + last_why;
        return "slot " + std::to_string(action) + " holds no " + empty;
    }

private:
    std::size_t K_ = 0;
    detail::obs_buffers buf_;
    std::vector<obs_segment> layout_;
    std::size_t ctx_[obs_layout::num_parts] = {};
};

/// The part the placement and job modes share as front ends: the slot buffers they give the env
/// as its observation, mask and layout, and the four placers they plan with.
class slot_front_end {
public:
    [[nodiscard]] std::span<const float> observation(const observation_writer&) const noexcept { return slots_.obs(); }
    [[nodiscard]] std::span<const std::uint8_t> action_mask(const observation_writer&) const noexcept { return slots_.mask(); }
    [[nodiscard]] std::size_t num_actions(const observation_writer&) const noexcept { return slots_.slots() + 1; }
    [[nodiscard]] const std::vector<obs_segment>& layout() const noexcept { return slots_.layout(); }
    void bind(observation_writer&, std::span<float> o, std::span<std::uint8_t> m) { slots_.bind(o, m); }

protected:
    /// Sizes the placers' scratch for a hierarchy.
    void reserve_placers(const level_hierarchy& h) {
        pack_.reserve(h);
        lb_.reserve(h);
        tg_.reserve(h);
        ff_.reserve(h);
    }

    slot_buffers slots_;
    pack_policy pack_;
    load_balance_policy lb_;
    topology_greedy_policy tg_;
    first_fit_policy ff_;
};

}  // namespace gpuplace::env_detail
