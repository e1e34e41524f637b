#pragma once
/// \file env/obs_selection.hpp
/// The segments of the observation a scenario chose to show (key "observation": "features" or
/// "exclude"; config.hpp's observation_config). The action front end writes its whole
/// observation as always; after each reset and step (on a lazy fork, when read: basic_env) the
/// chosen segments are copied into this buffer (owned, or bound to a vector env's slice), and the
/// mask beside them: O(observation) with no allocation. Off (every segment shown, the default), it holds nothing and the env
/// shows the front end's buffers themselves.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../detail/obs_buffers.hpp"
#include "../error.hpp"
#include "../observation_layout.hpp"

namespace gpuplace::env_detail {

class obs_selection {
public:
    /// Chooses the segments of `full` (a front end's layout) that `c` names; the mask has `mask_size`
    /// entries. ConfigError at /observation/... naming an unknown or repeated segment, or a choice
    /// that leaves nothing.
    void init(const std::vector<obs_segment>& full, const observation_config& c, std::size_t mask_size) {
        runs_.clear();
        layout_.clear();
        on_ = c.selects();
        if (!on_) return;
        const bool keep_listed = !c.features.empty();
        const auto& names = keep_listed ? c.features : c.exclude;
        const std::string path = keep_listed ? "/observation/features/" : "/observation/exclude/";
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto& n = names[i];
            if (std::none_of(full.begin(), full.end(), [&](const obs_segment& s) { return s.name == n; })) {
                std::string known;
                for (const auto& s : full) known += (known.empty() ? "" : ", ") + s.name;
                throw ConfigError("config " + path + std::to_string(i) + ": unknown observation segment \"" + n +
                                  "\" (this env's: " + known + ")");
            }
            if (std::find(names.begin(), names.begin() + std::ptrdiff_t(i), n) != names.begin() + std::ptrdiff_t(i))
                throw ConfigError("config " + path + std::to_string(i) + ": \"" + n + "\" is listed twice");
        }
        std::size_t off = 0;
        for (const auto& s : full) {
            const bool listed = std::find(names.begin(), names.end(), s.name) != names.end();
            if (listed != keep_listed) continue;
            auto kept = s;
            kept.offset = off;
            if (!runs_.empty() && runs_.back().from + runs_.back().size == s.offset && runs_.back().to + runs_.back().size == off)
                runs_.back().size += s.size;  // adjacent in both: one copy
            else
                runs_.push_back({s.offset, off, s.size});
            off += s.size;
            layout_.push_back(std::move(kept));
        }
        if (layout_.empty())
            throw ConfigError("config /observation/exclude: leaves no segment of the observation (this env has " +
                              std::to_string(full.size()) + ")");
        buf_.allocate(off, mask_size);
    }

    /// Whether a choice is made (else the env shows the front end's buffers).
    [[nodiscard]] bool on() const noexcept { return on_; }
    /// The chosen segments, at their offsets in this observation.
    [[nodiscard]] const std::vector<obs_segment>& layout() const noexcept { return layout_; }
    [[nodiscard]] std::span<const float> obs() const noexcept { return buf_.obs; }
    [[nodiscard]] std::span<const std::uint8_t> mask() const noexcept { return buf_.mask; }

    /// Copies the chosen segments of the whole observation `full`, and the mask.
    void gather(std::span<const float> full, std::span<const std::uint8_t> mask) noexcept {
        float* out = buf_.obs.data();
        for (const auto& r : runs_) std::copy_n(full.data() + r.from, r.size, out + r.to);
        std::copy(mask.begin(), mask.end(), buf_.mask.begin());
    }

    /// Shows the chosen observation and the mask in external buffers (sizes: obs().size(), mask().size()).
    void bind(std::span<float> obs, std::span<std::uint8_t> mask) { buf_.bind_checked<Error>(obs, mask); }

private:
    struct run {
        std::size_t from = 0, to = 0, size = 0;
    };
    bool on_ = false;
    std::vector<run> runs_;  ///< contiguous copies, in order
    std::vector<obs_segment> layout_;
    detail::obs_buffers buf_;
};

}  // namespace gpuplace::env_detail
