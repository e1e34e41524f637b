#pragma once
/// \file detail/thread_pool.hpp
/// A tiny persistent pool that runs one task per worker and waits for all (C++20 atomic wait,
/// after a short spin: back-to-back calls, as in a training loop's steps, find the workers awake).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace gpuplace::detail {

/// A hint to the CPU that this is a spin-wait loop.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

/// Waits until a.load() != old: spins for up to `spin` first, then blocks (atomic wait).
template <class T>
void spin_then_wait(const std::atomic<T>& a, T old, std::chrono::microseconds spin) noexcept {
    const auto until = std::chrono::steady_clock::now() + spin;
    for (unsigned i = 1; a.load(std::memory_order_acquire) == old; ++i) {
        cpu_relax();
        if (i % 64 == 0 && std::chrono::steady_clock::now() > until) {
            while (a.load(std::memory_order_acquire) == old) a.wait(old);
            return;
        }
    }
}

class block_pool {
public:
    /// `threads` workers in all, the calling thread included (so threads - 1 are started).
    explicit block_pool(std::size_t threads = 1) {
        if (threads == 0) threads = 1;
        errors_.resize(threads);
        for (std::size_t i = 1; i < threads; ++i) workers_.emplace_back([this, i] { loop(i); });
    }
    block_pool(const block_pool&) = delete;
    block_pool& operator=(const block_pool&) = delete;
    ~block_pool() {
        stop_.store(true);
        gen_.fetch_add(1);
        gen_.notify_all();
        for (auto& w : workers_) w.join();
    }

    [[nodiscard]] std::size_t size() const noexcept { return workers_.size() + 1; }

    /// Runs f(worker) for worker = 0 .. size()-1, worker 0 on the calling thread; rethrows the
    /// first exception of any worker.
    template <class F>
    void run(F& f) {
        if (workers_.empty()) {
            f(std::size_t{0});
            return;
        }
        fn_ = [](void* ctx, std::size_t w) { (*static_cast<F*>(ctx))(w); };
        ctx_ = &f;
        pending_.store(workers_.size());
        gen_.fetch_add(1);
        gen_.notify_all();
        try {
            f(std::size_t{0});
        } catch (...) {
            errors_[0] = std::current_exception();
        }
        for (std::size_t p; (p = pending_.load()) != 0;) spin_then_wait(pending_, p, spin_);
        for (auto& e : errors_)
            if (e) {
                auto ex = e;
                for (auto& x : errors_) x = nullptr;
                std::rethrow_exception(ex);
            }
    }

private:
    void loop(std::size_t idx) {
        std::uint64_t seen = 0;  // gen_ starts at 0 and only run() changes it
        for (;;) {
            spin_then_wait(gen_, seen, spin_);
            seen = gen_.load();
            if (stop_.load()) return;
            try {
                fn_(ctx_, idx);
            } catch (...) {
                errors_[idx] = std::current_exception();
            }
            if (pending_.fetch_sub(1) == 1) pending_.notify_one();
        }
    }

    std::vector<std::thread> workers_;
    std::vector<std::exception_ptr> errors_;
    std::atomic<std::uint64_t> gen_{0};
    std::atomic<std::size_t> pending_{0};
    std::atomic<bool> stop_{false};
    void (*fn_)(void*, std::size_t) = nullptr;
    void* ctx_ = nullptr;
    static constexpr std::chrono::microseconds spin_{100};  ///< spin before blocking
};

/// Work found by the workers of one block_pool::run() and done by whichever worker is free: a
/// vector env's autoresets, which cost as much as a hundred steps and would otherwise leave the
/// worker whose block has one running long after the others. Workers push() items while they run
/// their own part, then all call drain(), which runs f(item) on pushed items until every worker
/// has called drain() and none is left. begin() starts a round (before run()). An item's slot is
/// tagged with its round, so a claimer never reads the previous round's item.
class shared_queue {
public:
    /// Room for `capacity` items per round, among `workers` workers.
    shared_queue(std::size_t capacity, std::size_t workers)
        : slots_(std::make_unique<std::atomic<std::uint64_t>[]>(capacity)), workers_(workers) {}  // slots start at 0

    /// Starts a round: called while no worker runs.
    void begin() noexcept {
        round_ = round_ % 0xffffffffu + 1;  // 1 .. 2^32 - 1: never the 0 the slots start with
        push_.store(0, std::memory_order_relaxed);
        claim_.store(0, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
    }

    /// Adds an item (at most `capacity` per round).
    void push(std::uint32_t item) noexcept {
        const auto p = push_.fetch_add(1, std::memory_order_acq_rel);
        slots_[p].store(round_ << 32 | item, std::memory_order_release);
    }

    /// Marks this worker's pushes over, then runs f(item) on unclaimed items until all workers have
    /// marked theirs over and nothing is left. If f throws, the item is lost and the exception
    /// propagates; the other workers go on.
    template <class F>
    void drain(F&& f) {
        done();
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
        for (unsigned i = 1;; ++i) {
            auto c = claim_.load(std::memory_order_acquire);
            if (c < push_.load(std::memory_order_acquire)) {
                if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) continue;
                std::uint64_t v;  // its pusher has claimed the slot and is about to fill it
                for (unsigned k = 1; ((v = slots_[c].load(std::memory_order_acquire)) >> 32) != round_; ++k)
                    if (k % 64 == 0) std::this_thread::yield();  // (it may have lost its core)
                    else cpu_relax();
                f(static_cast<std::uint32_t>(v));
                continue;
            }
            if (done_.load(std::memory_order_acquire) == workers_ &&
                claim_.load(std::memory_order_acquire) >= push_.load(std::memory_order_acquire))
                return;
            // another worker is still at its own part: spin a while, then give the core away
            if (i % 64 == 0 && std::chrono::steady_clock::now() > until) std::this_thread::yield();
            else cpu_relax();
        }
    }

    /// Runs f(item) on every item pushed this round, on the calling thread alone: for a round that
    /// one thread ran entirely (no other worker will call drain()).
    template <class F>
    void drain_alone(F&& f) {
        for (auto c = claim_.load(std::memory_order_relaxed); c < push_.load(std::memory_order_relaxed); c = claim_.load(std::memory_order_relaxed)) {
            claim_.store(c + 1, std::memory_order_relaxed);
            f(static_cast<std::uint32_t>(slots_[c].load(std::memory_order_relaxed)));
        }
    }

    /// Marks this worker's pushes over without draining (a worker that failed before drain()).
    void done() noexcept { done_.fetch_add(1, std::memory_order_acq_rel); }

private:
    std::unique_ptr<std::atomic<std::uint64_t>[]> slots_;
    std::size_t workers_;
    std::uint64_t round_ = 0;
    std::atomic<std::size_t> push_{0}, claim_{0}, done_{0};
};

}  // namespace gpuplace::detail
