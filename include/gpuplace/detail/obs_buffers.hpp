#pragma once
/// \file detail/obs_buffers.hpp
/// Observation and mask storage: owned (one allocation, the mask's bytes after the observation's
/// floats), or spans bound to external memory.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace gpuplace::detail {

/// A copy always owns its buffers (with the same contents); a move keeps the source's binding. 40 bytes.
struct obs_buffers {
    std::span<float> obs;
    std::span<std::uint8_t> mask;

    obs_buffers() = default;
    obs_buffers(const obs_buffers& o) { copy_from(o); }
    obs_buffers& operator=(const obs_buffers& o) {
        if (this != &o) copy_from(o);
        return *this;
    }
    obs_buffers(obs_buffers&&) noexcept = default;  // the owned block moves with its spans: they stay valid
    obs_buffers& operator=(obs_buffers&&) noexcept = default;
    ~obs_buffers() = default;

    void allocate(std::size_t n_obs, std::size_t n_mask) {
        own_ = std::make_unique<float[]>(n_obs + (n_mask + sizeof(float) - 1) / sizeof(float));  // zeroed
        obs = {own_.get(), n_obs};
        mask = {reinterpret_cast<std::uint8_t*>(own_.get() + n_obs), n_mask};
    }
    /// bind() to buffers of these sizes; else throws E naming both (the caller's error type:
    /// this header includes no public one).
    template <class E>
    void bind_checked(std::span<float> o, std::span<std::uint8_t> m) {
        if (o.size() != obs.size() || m.size() != mask.size())
            throw E("bind(): buffer sizes " + std::to_string(o.size()) + "/" + std::to_string(m.size()) + " do not match observation_size " +
                        std::to_string(obs.size()) + " / num_actions " + std::to_string(mask.size()));
        bind(o, m);
    }
    void bind(std::span<float> o, std::span<std::uint8_t> m) {
        std::copy(obs.begin(), obs.end(), o.begin());
        std::copy(mask.begin(), mask.end(), m.begin());
        obs = o;
        mask = m;
        own_.reset();
    }

private:
    void copy_from(const obs_buffers& o) {
        if (!own_ || obs.size() != o.obs.size() || mask.size() != o.mask.size()) allocate(o.obs.size(), o.mask.size());
        std::copy(o.obs.begin(), o.obs.end(), obs.begin());
        std::copy(o.mask.begin(), o.mask.end(), mask.begin());
    }
    std::unique_ptr<float[]> own_;
};

}  // namespace gpuplace::detail
