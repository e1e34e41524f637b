#pragma once
/// \file vector_env.hpp
/// N environments stepped in one call, with contiguous (struct of arrays) observation, mask,
/// reward, terminated, truncated and done buffers, autoreset (in the step that ends an episode, or
/// in the next one), optional worker threads, and a built-in sampler of uniformly random valid
/// actions (one random stream per env). Results do not depend on the number of threads. Nothing
/// is allocated per step after reset().

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include "detail/enum_names.hpp"
#include "detail/rng.hpp"
#include "detail/thread_pool.hpp"
#include "detail/valid_actions.hpp"
#include "env.hpp"
#include "env_concepts.hpp"
#include "error.hpp"
#include "metrics.hpp"

namespace gpuplace {

namespace detail {

/// The machine's physical memory in bytes, or 0 when it is not known.
[[nodiscard]] inline double physical_memory_bytes() noexcept {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return double(pages) * double(page);
#endif
    return 0;
}

}  // namespace detail

/// The seed of episode `episode` (0, 1, ...) of env `index` in a vector env reset with `seed`.
[[nodiscard]] constexpr std::uint64_t episode_seed(std::uint64_t seed, std::uint64_t index, std::uint64_t episode) noexcept {
    return detail::mix_seed(detail::mix_seed(seed, index + 1), episode + 1);
}

/// The seed of env `index`'s action sampler in a vector env reset with `seed`.
[[nodiscard]] constexpr std::uint64_t sampler_seed(std::uint64_t seed, std::uint64_t index) noexcept {
    return detail::mix_seed(detail::mix_seed(seed, 0x73616d706c6572ULL), index + 1);  // "sampler"
}

/// When an env whose episode ended starts its next episode (Gymnasium's autoreset modes).
enum class autoreset_mode : std::uint8_t {
    /// In the step that ends it: the step returns the next episode's first observation and mask;
    /// final_observations() holds the last observation of the one that ended.
    same_step,
    /// In the next step: the step that ends an episode returns its last observation; the next
    /// step ignores that env's action and returns the first observation of its next episode, with
    /// reward 0 and neither flag set.
    next_step,
};

template <>
struct detail::enum_names<autoreset_mode> {
    static constexpr std::array<std::pair<autoreset_mode, std::string_view>, 2> values{
        {{autoreset_mode::same_step, "same_step"}, {autoreset_mode::next_step, "next_step"}}};
};
[[nodiscard]] inline std::string_view to_string(autoreset_mode m) noexcept { return detail::enum_name(m); }

/// The autoreset mode of a name ("same_step", "next_step"); ConfigError naming `what` otherwise.
[[nodiscard]] inline autoreset_mode parse_autoreset_mode(std::string_view name, std::string_view what = "vector env: autoreset") {
    if (const auto m = detail::enum_from_name<autoreset_mode>(name)) return *m;
    throw ConfigError(std::string(what) + ": unknown autoreset mode \"" + std::string(name) + "\" (allowed: " +
                      detail::enum_name_list<autoreset_mode>() + ")");
}

/// What a finished episode leaves behind at autoreset.
struct final_info {
    metrics m;
    double episode_return = 0;
    std::size_t length = 0;  ///< steps
    std::uint64_t seed = 0;  ///< the episode's seed
};

/// A vector env of env type Env (a VectorEnv, env_concepts.hpp: every basic_env, or a type of one's own).
template <VectorEnv Env>
class basic_vector_env {
public:
    using env_type = Env;

    /// `num_envs` copies of Env built from the scenario, stepped by `num_threads` threads.
    basic_vector_env(const scenario& s, std::size_t num_envs, std::size_t num_threads = 1,
                     autoreset_mode mode = autoreset_mode::same_step)
        : basic_vector_env(make_envs(s, num_envs), num_threads, mode) {}

    /// Takes ownership of envs (all with the same observation size and number of GPUs).
    explicit basic_vector_env(std::vector<Env> envs, std::size_t num_threads = 1,
                              autoreset_mode mode = autoreset_mode::same_step)
        : envs_(std::move(envs)), pool_(std::make_unique<detail::block_pool>(clamp_threads(num_threads, envs_.size()))),
          mode_(mode) {
        if (envs_.empty()) throw ConfigError("vector env: num_envs must be >= 1");
        resets_ = std::make_unique<detail::shared_queue>(envs_.size(), pool_->size());
        obs_size_ = envs_[0].observation_size();
        A_ = envs_[0].num_actions();
        for (std::size_t i = 1; i < envs_.size(); ++i)
            if (envs_[i].observation_size() != obs_size_ || envs_[i].num_actions() != A_)
                throw ConfigError("vector env: env " + std::to_string(i) + " has a different observation or action size");
        const auto N = envs_.size();
        require_memory(N, envs_[0].num_gpus(), obs_size_, A_, false);
        obs_.assign(N * obs_size_, 0.0f);
        final_obs_.assign(N * obs_size_, 0.0f);
        mask_.assign(N * A_, 0);
        reward_.assign(N, 0.0);
        elapsed_.assign(N, 0.0);
        terminated_.assign(N, 0);
        truncated_.assign(N, 0);
        done_.assign(N, 0);
        ended_.assign(pool_->size(), 0);
        sampler_.assign(N, detail::rng{});
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
    /// The threads the last step ran on: num_threads(), or 1 where stepping on one thread measured
    /// faster (adaptive threads, set_adaptive_threads()).
    [[nodiscard]] std::size_t active_threads() const noexcept { return parallel_ ? pool_->size() : 1; }
    /// Adaptive threads (the default): with more than one thread, the vector env times its steps
    /// on the calling thread alone and on all threads (16 steps each at most, the caller's work
    /// between two steps included; adaptive_way()) every recalibrate_steps steps or more, and
    /// steps the faster way until the next; so on a busy
    /// machine (another process on a core) or with little work per step it is never much slower
    /// than one thread. Off: every step on every thread. Results are the same either way.
    void set_adaptive_threads(bool on) noexcept {
        adaptive_ = on;
        parallel_ = true;
        calibrate_at_ = on ? 0 : calibrate_steps + 1;
    }
    [[nodiscard]] bool adaptive_threads() const noexcept { return adaptive_; }
    static constexpr std::size_t calibrate_steps = 32;      ///< steps timed per measurement (half each way)
    static constexpr std::size_t recalibrate_steps = 2048;  ///< steps between two measurements (all threads won)
    static constexpr std::size_t max_recalibrate_steps = std::size_t{1} << 20;  ///< ... after all threads lost often
    [[nodiscard]] std::size_t observation_size() const noexcept { return obs_size_; }
    [[nodiscard]] std::size_t num_actions() const noexcept { return A_; }
    [[nodiscard]] autoreset_mode autoreset() const noexcept { return mode_; }
    /// Sets the autoreset mode; the vector env must then be reset() before it steps again.
    void set_autoreset(autoreset_mode mode) noexcept {
        mode_ = mode;
        started_ = false;
    }
    [[nodiscard]] Env& env(std::size_t i) { return envs_.at(i); }
    [[nodiscard]] const Env& env(std::size_t i) const { return envs_.at(i); }

    /// Resets every env: env i starts episode 0 with episode_seed(seed, i, 0), and its action
    /// sampler (sample_valid_actions, step_random) restarts from sampler_seed(seed, i).
    void reset(std::uint64_t seed = 0) {
        seed_ = seed;
        std::fill(episode_.begin(), episode_.end(), 0);
        std::fill(reward_.begin(), reward_.end(), 0.0);
        std::fill(terminated_.begin(), terminated_.end(), 0);
        std::fill(truncated_.begin(), truncated_.end(), 0);
        std::fill(done_.begin(), done_.end(), 0);
        for (std::size_t i = 0; i < sampler_.size(); ++i) sampler_[i].seed(sampler_seed(seed, i));
        auto task = [this](std::size_t w) {
            auto [b, e] = block(w);
            for (std::size_t i = b; i < e; ++i) envs_[i].reset(episode_seed(seed_, i, 0));
        };
        pool_->run(task);
        started_ = true;
    }

    /// Steps env i with actions[i]. All actions are checked first: an invalid one throws
    /// InvalidAction naming the env and leaves every env as it was. An env whose episode ends
    /// stores its final observation and info (final_observations(), final()), then resets with
    /// its next episode seed: in this step (autoreset_mode::same_step), or in the next, which
    /// ignores its action (next_step; restarting(i) tells which envs do).
    /// If `obs_out` is not empty (num_envs x observation_size floats), env i's observation after
    /// the step (after its autoreset) is also copied to row i of it, right after env i steps,
    /// while the row is still in cache. Returns the number of episodes that ended.
    std::size_t step(std::span<const std::int64_t> actions, std::span<float> obs_out = {}) {
        check_stepping(obs_out);
        if (actions.size() != envs_.size())
            throw InvalidAction("vector env: got " + std::to_string(actions.size()) + " actions for " +
                                std::to_string(envs_.size()) + " envs");
        for (std::size_t i = 0; i < envs_.size(); ++i) {
            const auto a = actions[i];
            if (restarting(i)) continue;  // its action is ignored
            if (a < 0 || a >= static_cast<std::int64_t>(A_) || !mask_[i * A_ + static_cast<std::size_t>(a)])
                throw InvalidAction("vector env: env " + std::to_string(i) + ": invalid action " + std::to_string(a) + ": " +
                                    envs_[i].why_invalid(a));
        }
        return run_step(actions.data(), nullptr, obs_out.data());
    }

    /// Draws, for every env, a uniformly random valid action (among the entries its mask allows,
    /// DEFER included when valid) from env i's own random stream, into out (num_envs values); -1,
    /// without a draw, for an env that restarts in the next step (restarting(i)).
    /// Deterministic: the same reset seed and sequence of calls give the same actions, whatever
    /// the number of threads.
    void sample_valid_actions(std::span<std::int64_t> out) {
        if (!started_) throw StateError("vector env: sample_valid_actions() called before reset()");
        if (out.size() != envs_.size())
            throw Error("vector env: sample_valid_actions(): out has " + std::to_string(out.size()) + " entries for " +
                        std::to_string(envs_.size()) + " envs");
        for (std::size_t i = 0; i < envs_.size(); ++i)
            out[i] = restarting(i) ? -1 : detail::sample_valid(mask_.data() + i * A_, A_, sampler_[i]);
    }

    /// Whether env i's episode ended in the last step and the next step starts its next one
    /// (autoreset_mode::next_step only).
    [[nodiscard]] bool restarting(std::size_t i) const noexcept { return mode_ == autoreset_mode::next_step && done_[i]; }

    /// Steps every env with a uniformly random valid action drawn as sample_valid_actions() does
    /// (the same streams: step_random() equals sample_valid_actions(a) then step(a)), sampled and
    /// stepped env by env in the worker threads. The actions taken go to actions_out when it is
    /// not empty (-1 for an env that restarts); obs_out as in step(). Returns the number of
    /// episodes that ended.
    std::size_t step_random(std::span<std::int64_t> actions_out = {}, std::span<float> obs_out = {}) {
        check_stepping(obs_out);
        if (!actions_out.empty() && actions_out.size() != envs_.size())
            throw Error("vector env: step_random(): actions_out has " + std::to_string(actions_out.size()) +
                        " entries for " + std::to_string(envs_.size()) + " envs");
        return run_step(nullptr, actions_out.empty() ? nullptr : actions_out.data(), obs_out.data());
    }

    // ---- saving and restoring (to resume training) ----------------------------------------------

    /// The seed of the last reset() (every episode's seed derives from it).
    [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }
    /// Env i's action sampler (its random stream).
    [[nodiscard]] const detail::rng& sampler(std::size_t i) const { return sampler_.at(i); }

    /// Puts env i where a run left it: episode `episode` of the reset seed after `actions` (replayed:
    /// an env is deterministic), its sampler at `sampler`. Needs reset() first. InvalidAction or
    /// StateError when the actions do not fit the episode (they come from another scenario or build).
    void restore(std::size_t i, std::uint64_t episode, std::span<const std::int64_t> actions, const detail::rng& sampler) {
        if (!started_) throw StateError("vector env: restore() called before reset()");
        auto& e = envs_.at(i);
        e.reset(episode_seed(seed_, i, episode));
        episode_[i] = episode;
        for (std::size_t k = 0; k < actions.size(); ++k) {
            if (e.done())
                throw StateError("vector env: restore(): env " + std::to_string(i) + "'s episode ended after " +
                                 std::to_string(k) + " of " + std::to_string(actions.size()) + " actions");
            (void)e.step(actions[k]);
        }
        if (e.done()) throw StateError("vector env: restore(): env " + std::to_string(i) + "'s episode is over after its actions");
        sampler_[i] = sampler;
        reward_[i] = 0;
        terminated_[i] = truncated_[i] = done_[i] = 0;
    }

    // ---- buffers (row i belongs to env i) ------------------------------------------------------
    [[nodiscard]] std::span<const float> observations() const noexcept { return obs_; }
    [[nodiscard]] std::span<const std::uint8_t> action_masks() const noexcept { return mask_; }
    [[nodiscard]] std::span<const double> rewards() const noexcept { return reward_; }
    /// Simulated seconds each env's last step advanced (for discounting by simulated time).
    [[nodiscard]] std::span<const double> elapsed() const noexcept { return elapsed_; }
    [[nodiscard]] std::span<const std::uint8_t> terminated() const noexcept { return terminated_; }
    [[nodiscard]] std::span<const std::uint8_t> truncated() const noexcept { return truncated_; }
    /// terminated or truncated, per env (1 where the last step ended an episode).
    [[nodiscard]] std::span<const std::uint8_t> dones() const noexcept { return done_; }
    /// Final observation of env i's last episode (valid where terminated or truncated is set).
    [[nodiscard]] std::span<const float> final_observations() const noexcept { return final_obs_; }
    [[nodiscard]] const final_info& final(std::size_t i) const { return final_.at(i); }
    [[nodiscard]] std::uint64_t episode(std::size_t i) const { return episode_.at(i); }

private:
    static std::vector<Env> make_envs(const scenario& s, std::size_t n) {
        if (n == 0) throw ConfigError("vector env: num_envs must be >= 1");
        Env first(s);
        require_memory(n, first.num_gpus(), first.observation_size(), first.num_actions(), true);
        std::vector<Env> v;
        v.reserve(n);
        v.push_back(std::move(first));
        for (std::size_t i = 1; i < n; ++i) v.push_back(v.front());
        return v;
    }
    /// ConfigError, before anything is allocated for them, when n envs cannot fit in this machine's
    /// memory: at least the vector env's observation (twice: the final observations), mask and
    /// per-env fields, and with `copies` each env's own object, observation and mask.
    static void require_memory(std::size_t n, std::size_t gpus, std::size_t obs, std::size_t actions, bool copies) {
        const double per_env = 2.0 * double(obs) * sizeof(float) + double(actions) + 64.0 +
                               (copies ? double(sizeof(Env)) + double(obs) * sizeof(float) + double(actions) : 0.0);
        const double need = double(n) * per_env, have = detail::physical_memory_bytes();
        if (have > 0 && need > have) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "vector env: %zu envs of %zu GPUs need at least %.1f GiB (observations and masks alone), more than "
                          "this machine's %.1f GiB of memory",
                          n, gpus, need / 1073741824.0, have / 1073741824.0);
            throw ConfigError(buf);
        }
    }
    /// The worker threads: 1..num_envs (each thread steps at least one env); ConfigError otherwise.
    static std::size_t clamp_threads(std::size_t t, std::size_t n) {
        if (n == 0) throw ConfigError("vector env: num_envs must be >= 1");
        if (t == 0 || t > n)
            throw ConfigError("vector env: num_threads " + std::to_string(t) + " out of range [1, " + std::to_string(n) +
                              "] (each thread steps at least one of the " + std::to_string(n) + " envs)");
        return t;
    }
    [[nodiscard]] std::pair<std::size_t, std::size_t> block(std::size_t w) const noexcept {
        const std::size_t n = envs_.size(), t = pool_->size();
        return {n * w / t, n * (w + 1) / t};
    }

    void check_stepping(std::span<float> obs_out) const {
        if (!started_) throw StateError("vector env: step() called before reset()");
        if (!obs_out.empty() && obs_out.size() != envs_.size() * obs_size_)
            throw Error("vector env: obs_out has " + std::to_string(obs_out.size()) + " floats, expected " +
                        std::to_string(envs_.size()) + " x " + std::to_string(obs_size_));
    }

    std::size_t run_step(const std::int64_t* actions, std::int64_t* actions_out, float* obs_out) {
        actions_ = actions;
        actions_out_ = actions_out;
        obs_out_ = obs_out;
        resets_->begin();
        if (pool_->size() == 1 || !adaptive_) {
            step_fn task{this};
            pool_->run(task);
        } else {
            step_on(adaptive_way());
        }
        std::size_t ended = 0;
        for (auto& c : ended_) ended += c;
        return ended;
    }

    /// Whether this step runs on all threads (adaptive threads). A measurement steps up to
    /// calibrate_steps / 2 steps on the calling thread alone, then as many on all threads, and
    /// times each from its start to the next step's start: the caller's own work in between
    /// counts, so workers that spin on a busy machine while the caller needs the core count
    /// against their way. The first step of each half (the switch) is left out. The all-threads
    /// half stops as soon as it has taken longer than the one-thread half (it cannot win: on a
    /// busy machine one such step can cost a thousand single-threaded ones); each measurement all
    /// threads lose doubles the steps to the next one (up to max_recalibrate_steps).
    bool adaptive_way() {
        constexpr std::size_t half = calibrate_steps / 2;
        const auto now = std::chrono::steady_clock::now();
        if (calibrate_at_ > calibrate_steps) {  // between measurements
            if (++since_calibration_ >= recalibrate_every_) calibrate_at_ = 0;
            return parallel_;
        }
        if (calibrate_at_ > 0) {  // the last step is over: its time
            const std::size_t k = calibrate_at_ - 1;
            const double dt = std::chrono::duration<double>(now - last_start_).count();
            if (k != 0 && k != half) (k < half ? seconds_one_ : seconds_all_) += dt;
        }
        const bool all_lost = calibrate_at_ > half + 1 && seconds_all_ > seconds_one_;
        if (calibrate_at_ == calibrate_steps || all_lost) {
            parallel_ = !all_lost && seconds_all_ <= seconds_one_;
            recalibrate_every_ = parallel_ ? recalibrate_steps : std::min(2 * recalibrate_every_, max_recalibrate_steps);
            seconds_one_ = seconds_all_ = 0;
            calibrate_at_ = calibrate_steps + 1;
            since_calibration_ = 0;
            return parallel_;
        }
        last_start_ = now;
        return calibrate_at_++ >= half;
    }

    /// One step on every thread of the pool, or on the calling thread alone (every env in turn,
    /// then the autoresets): the same results either way.
    void step_on(bool all) {
        if (all) {
            step_fn task{this};
            pool_->run(task);
            return;
        }
        std::fill(ended_.begin(), ended_.end(), 0);
        ended_[0] = step_range(0, envs_.size());
        resets_->drain_alone([this](std::uint32_t i) { reset_one(i); });
    }

    /// Steps envs [b, e); with no actions given, env i's action is drawn from its mask first.
    std::size_t step_range(std::size_t b, std::size_t e) {
        std::size_t ended = 0;
        const bool next_step = mode_ == autoreset_mode::next_step;
        for (std::size_t i = b; i < e; ++i) {
            auto& en = envs_[i];
            if (next_step && done_[i]) {  // its episode ended in the last step: it starts the next one
                if (!actions_ && actions_out_) actions_out_[i] = -1;
                reward_[i] = 0;
                elapsed_[i] = 0;
                terminated_[i] = truncated_[i] = done_[i] = 0;
                resets_->push(static_cast<std::uint32_t>(i));  // reset_one(i), by whichever worker is free
                continue;
            }
            std::int64_t a;
            if (actions_) {
                a = actions_[i];
            } else {
                a = detail::sample_valid(mask_.data() + i * A_, A_, sampler_[i]);
                if (actions_out_) actions_out_[i] = a;
            }
            const auto r = en.step(a);
            reward_[i] = r.reward;
            elapsed_[i] = r.elapsed;
            terminated_[i] = r.terminated;
            truncated_[i] = r.truncated;
            const bool done = r.terminated || r.truncated;
            done_[i] = done;
            if (done) {
                ++ended;
                std::copy(obs_.begin() + i * obs_size_, obs_.begin() + (i + 1) * obs_size_, final_obs_.begin() + i * obs_size_);
                final_[i] = {en.episode_metrics(), en.episode_return(), en.steps(), en.seed()};
                if (!next_step) resets_->push(static_cast<std::uint32_t>(i));  // reset_one(i), by whichever worker is free
                else if (obs_out_)
                    std::copy(obs_.begin() + i * obs_size_, obs_.begin() + (i + 1) * obs_size_, obs_out_ + i * obs_size_);
            } else if (obs_out_) {
                std::copy(obs_.begin() + i * obs_size_, obs_.begin() + (i + 1) * obs_size_, obs_out_ + i * obs_size_);
            }
        }
        return ended;
    }

    /// Autoreset of env i after its episode ended (its final observation and info already kept).
    void reset_one(std::size_t i) {
        envs_[i].reset(episode_seed(seed_, i, ++episode_[i]));
        if (obs_out_)
            std::copy(obs_.begin() + i * obs_size_, obs_.begin() + (i + 1) * obs_size_, obs_out_ + i * obs_size_);
    }

    /// Worker w steps its block, then takes autoresets (its own or another worker's) until none
    /// is left: a reset costs about a hundred steps, so a block with one would otherwise finish
    /// long after the others.
    struct step_fn {
        basic_vector_env* self;
        void operator()(std::size_t w) const {
            auto [b, e] = self->block(w);
            try {
                self->ended_[w] = self->step_range(b, e);
            } catch (...) {
                self->resets_->done();  // the other workers take what this one pushed
                throw;
            }
            self->resets_->drain([this](std::uint32_t i) { self->reset_one(i); });
        }
    };

    std::vector<Env> envs_;
    std::unique_ptr<detail::block_pool> pool_;
    std::unique_ptr<detail::shared_queue> resets_;  ///< this step's autoresets
    std::size_t obs_size_ = 0, A_ = 0;
    std::vector<float> obs_, final_obs_;
    std::vector<std::uint8_t> mask_, terminated_, truncated_, done_;
    std::vector<std::size_t> ended_;  ///< per worker: episodes that ended in its block
    std::vector<detail::rng> sampler_;
    std::vector<double> reward_, elapsed_;
    std::vector<final_info> final_;
    std::vector<std::uint64_t> episode_;
    std::uint64_t seed_ = 0;
    const std::int64_t* actions_ = nullptr;
    std::int64_t* actions_out_ = nullptr;
    float* obs_out_ = nullptr;
    autoreset_mode mode_ = autoreset_mode::same_step;
    bool started_ = false;
    // adaptive threads (set_adaptive_threads(), adaptive_way())
    bool adaptive_ = true, parallel_ = true;
    std::size_t calibrate_at_ = 0, since_calibration_ = 0;  ///< calibrate_at_ > calibrate_steps: not measuring
    std::size_t recalibrate_every_ = recalibrate_steps;
    std::chrono::steady_clock::time_point last_start_{};
    double seconds_one_ = 0, seconds_all_ = 0;  ///< this measurement's steps, one thread and all threads
};

using vector_env = basic_vector_env<env>;

}  // namespace gpuplace
