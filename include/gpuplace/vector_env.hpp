#pragma once
/// \file vector_env.hpp
/// N environments stepped in one call, with contiguous (struct of arrays) observation, mask,
/// reward, terminated and truncated buffers, autoreset, and optional worker threads. Results do
/// not depend on the number of threads.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "detail/rng.hpp"
#include "detail/thread_pool.hpp"
#include "env.hpp"
#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

/// The seed of episode `episode` (0, 1, ...) of env `index` in a vector env reset with `seed`.
[[nodiscard]] constexpr std::uint64_t episode_seed(std::uint64_t seed, std::uint64_t index, std::uint64_t episode) noexcept {
    return detail::mix_seed(detail::mix_seed(seed, index + 1), episode + 1);
}

/// What a finished episode leaves behind at autoreset.
struct final_info {
    metrics m;
    double episode_return = 0;
    std::size_t length = 0;  ///< steps
    std::uint64_t seed = 0;  ///< the episode's seed
};

template <class Env>
class basic_vector_env {
public:
    using env_type = Env;

    /// `num_envs` copies of Env built from the scenario, stepped by `num_threads` threads.
    basic_vector_env(const scenario& s, std::size_t num_envs, std::size_t num_threads = 1)
        : basic_vector_env(make_envs(s, num_envs), num_threads) {}

    /// Takes ownership of envs (all with the same observation size and number of GPUs).
    explicit basic_vector_env(std::vector<Env> envs, std::size_t num_threads = 1)
        : envs_(std::move(envs)), pool_(std::make_unique<detail::block_pool>(clamp_threads(num_threads, envs_.size()))) {
        if (envs_.empty()) throw ConfigError("vector env: num_envs must be >= 1");
        obs_size_ = envs_[0].observation_size();
        A_ = envs_[0].num_actions();
        for (std::size_t i = 1; i < envs_.size(); ++i)
            if (envs_[i].observation_size() != obs_size_ || envs_[i].num_actions() != A_)
                throw ConfigError("vector env: env " + std::to_string(i) + " has a different observation or action size");
        const auto N = envs_.size();
        obs_.assign(N * obs_size_, 0.0f);
        final_obs_.assign(N * obs_size_, 0.0f);
        mask_.assign(N * A_, 0);
        reward_.assign(N, 0.0);
        terminated_.assign(N, 0);
        truncated_.assign(N, 0);
        final_.assign(N, {});
        episode_.assign(N, 0);
        for (std::size_t i = 0; i < N; ++i)
            envs_[i].bind(std::span<float>(obs_).subspan(i * obs_size_, obs_size_),
                          std::span<std::uint8_t>(mask_).subspan(i * A_, A_));
    }

    basic_vector_env(const basic_vector_env&) = delete;
    basic_vector_env& operator=(const basic_vector_env&) = delete;
    basic_vector_env(basic_vector_env&&) noexcept = default;
    basic_vector_env& operator=(basic_vector_env&&) noexcept = default;
    ~basic_vector_env() = default;

    [[nodiscard]] std::size_t num_envs() const noexcept { return envs_.size(); }
    [[nodiscard]] std::size_t num_threads() const noexcept { return pool_->size(); }
    [[nodiscard]] std::size_t observation_size() const noexcept { return obs_size_; }
    [[nodiscard]] std::size_t num_actions() const noexcept { return A_; }
    [[nodiscard]] Env& env(std::size_t i) { return envs_.at(i); }
    [[nodiscard]] const Env& env(std::size_t i) const { return envs_.at(i); }

    /// Resets every env: env i starts episode 0 with episode_seed(seed, i, 0).
    void reset(std::uint64_t seed = 0) {
        seed_ = seed;
        std::fill(episode_.begin(), episode_.end(), 0);
        std::fill(reward_.begin(), reward_.end(), 0.0);
        std::fill(terminated_.begin(), terminated_.end(), 0);
        std::fill(truncated_.begin(), truncated_.end(), 0);
        auto task = [this](std::size_t w) {
            auto [b, e] = block(w);
            for (std::size_t i = b; i < e; ++i) envs_[i].reset(episode_seed(seed_, i, 0));
        };
        pool_->run(task);
        started_ = true;
    }

    /// Steps env i with actions[i]. All actions are checked first: an invalid one throws
    /// InvalidAction naming the env and leaves every env as it was. An env whose episode ends
    /// stores its final observation and info, then resets with its next episode seed.
    void step(std::span<const std::int64_t> actions) {
        if (!started_) throw StateError("vector env: step() called before reset()");
        if (actions.size() != envs_.size())
            throw InvalidAction("vector env: got " + std::to_string(actions.size()) + " actions for " +
                                std::to_string(envs_.size()) + " envs");
        for (std::size_t i = 0; i < envs_.size(); ++i) {
            const auto a = actions[i];
            if (a < 0 || a >= static_cast<std::int64_t>(A_) || !mask_[i * A_ + static_cast<std::size_t>(a)])
                throw InvalidAction("vector env: env " + std::to_string(i) + ": invalid action " + std::to_string(a) + ": " +
                                    envs_[i].why_invalid(a));
        }
        actions_ = actions.data();
        step_fn task{this};
        pool_->run(task);
    }

    // ---- buffers (row i belongs to env i) ------------------------------------------------------
    [[nodiscard]] std::span<const float> observations() const noexcept { return obs_; }
    [[nodiscard]] std::span<const std::uint8_t> action_masks() const noexcept { return mask_; }
    [[nodiscard]] std::span<const double> rewards() const noexcept { return reward_; }
    [[nodiscard]] std::span<const std::uint8_t> terminated() const noexcept { return terminated_; }
    [[nodiscard]] std::span<const std::uint8_t> truncated() const noexcept { return truncated_; }
    /// Final observation of env i's last episode (valid where terminated or truncated is set).
    [[nodiscard]] std::span<const float> final_observations() const noexcept { return final_obs_; }
    [[nodiscard]] const final_info& final(std::size_t i) const { return final_.at(i); }
    [[nodiscard]] std::uint64_t episode(std::size_t i) const { return episode_.at(i); }

private:
    static std::vector<Env> make_envs(const scenario& s, std::size_t n) {
        if (n == 0) throw ConfigError("vector env: num_envs must be >= 1");
        std::vector<Env> v;
        v.reserve(n);
        v.emplace_back(s);
        for (std::size_t i = 1; i < n; ++i) v.push_back(v.front());
        return v;
    }
    static std::size_t clamp_threads(std::size_t t, std::size_t n) noexcept {
        if (t == 0) t = 1;
        return n == 0 ? 1 : std::min(t, n);
    }
    [[nodiscard]] std::pair<std::size_t, std::size_t> block(std::size_t w) const noexcept {
        const std::size_t n = envs_.size(), t = pool_->size();
        return {n * w / t, n * (w + 1) / t};
    }

    void step_range(std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
            auto& en = envs_[i];
            const auto r = en.step(actions_[i]);
            reward_[i] = r.reward;
            terminated_[i] = r.terminated;
            truncated_[i] = r.truncated;
            if (r.terminated || r.truncated) {
                std::copy(obs_.begin() + i * obs_size_, obs_.begin() + (i + 1) * obs_size_, final_obs_.begin() + i * obs_size_);
                final_[i] = {en.episode_metrics(), en.episode_return(), en.steps(), en.seed()};
                en.reset(episode_seed(seed_, i, ++episode_[i]));
            }
        }
    }

    struct step_fn {
        basic_vector_env* self;
        void operator()(std::size_t w) const {
            auto [b, e] = self->block(w);
            self->step_range(b, e);
        }
    };

    std::vector<Env> envs_;
    std::unique_ptr<detail::block_pool> pool_;
    std::size_t obs_size_ = 0, A_ = 0;
    std::vector<float> obs_, final_obs_;
    std::vector<std::uint8_t> mask_, terminated_, truncated_;
    std::vector<double> reward_;
    std::vector<final_info> final_;
    std::vector<std::uint64_t> episode_;
    std::uint64_t seed_ = 0;
    const std::int64_t* actions_ = nullptr;
    bool started_ = false;
};

using vector_env = basic_vector_env<env>;

}  // namespace gpuplace
