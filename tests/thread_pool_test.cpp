// Tests of include/gpuplace/detail/thread_pool.hpp: the block pool runs one task per worker and
// rethrows a worker's exception; the shared queue hands every pushed item to exactly one worker,
// round after round, also when a worker fails before draining.

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <gpuplace/detail/thread_pool.hpp>

namespace gd = gpuplace::detail;

TEST_CASE("block pool: each worker runs once per run(), a worker's exception reaches the caller") {
    for (std::size_t threads : {1u, 2u, 4u}) {
        gd::block_pool pool(threads);
        REQUIRE(pool.size() == threads);
        std::vector<std::atomic<int>> runs(threads);
        auto f = [&](std::size_t w) { runs[w].fetch_add(1); };
        for (int r = 0; r < 50; ++r) pool.run(f);
        for (auto& x : runs) CHECK(x.load() == 50);
        auto bad = [&](std::size_t w) {
            if (w + 1 == threads) throw std::runtime_error("worker " + std::to_string(w));
        };
        CHECK_THROWS_WITH_AS(pool.run(bad), ("worker " + std::to_string(threads - 1)).c_str(), std::runtime_error);
        pool.run(f);  // still usable
        for (auto& x : runs) CHECK(x.load() == 51);
    }
}

TEST_CASE("shared queue: every pushed item is drained exactly once, by some worker, each round") {
    for (std::size_t threads : {1u, 2u, 3u}) {
        constexpr std::size_t items = 64;
        gd::block_pool pool(threads);
        gd::shared_queue q(items, threads);
        std::vector<std::atomic<int>> done(items);
        for (int round = 0; round < 200; ++round) {
            for (auto& d : done) d.store(0);
            q.begin();
            // worker w pushes the items i with i % threads == w, some rounds only a few of them
            auto f = [&](std::size_t w) {
                for (std::size_t i = w; i < items; i += threads)
                    if ((i + std::size_t(round)) % 3 != 0) q.push(static_cast<std::uint32_t>(i));
                q.drain([&](std::uint32_t i) { done[i].fetch_add(1); });
            };
            pool.run(f);
            for (std::size_t i = 0; i < items; ++i) REQUIRE(done[i].load() == ((i + std::size_t(round)) % 3 != 0 ? 1 : 0));
        }
        // a round with nothing pushed ends too
        q.begin();
        auto none = [&](std::size_t) { q.drain([&](std::uint32_t) { FAIL("nothing was pushed"); }); };
        pool.run(none);
    }
}

TEST_CASE("shared queue: a worker that fails before draining leaves its items to the others") {
    constexpr std::size_t threads = 2, items = 10;
    gd::block_pool pool(threads);
    gd::shared_queue q(items, threads);
    std::vector<std::atomic<int>> done(items);
    q.begin();
    auto f = [&](std::size_t w) {
        if (w == 1) {
            q.push(7);
            q.done();  // what the vector env does when a worker's part throws
            throw std::runtime_error("worker 1 failed");
        }
        q.push(3);
        q.drain([&](std::uint32_t i) { done[i].fetch_add(1); });
    };
    CHECK_THROWS_WITH_AS(pool.run(f), "worker 1 failed", std::runtime_error);
    CHECK(done[3].load() == 1);
    CHECK(done[7].load() == 1);
}
