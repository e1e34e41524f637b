// Tests of include/gpuplace/env/wait_queue.hpp: queue order, the scan for a job that fits
// (exclusive GPUs and with a fits() test; backfill and strict head-of-line), deferral epochs.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <gpuplace/env/wait_queue.hpp>

namespace {

using gpuplace::env_detail::wait_queue;

/// A queue of jobs 0..n-1 with the given requests, inserted in order under `less`.
template <class Less>
wait_queue queue_of(const std::vector<std::uint32_t>& gpus, Less less) {
    wait_queue q;
    q.reset(gpus.size());
    for (std::uint32_t j = 0; j < gpus.size(); ++j) q.insert(j, gpus[j], less);
    return q;
}

std::vector<std::uint32_t> order_of(const wait_queue& q) { return {q.jobs().begin(), q.jobs().end()}; }

const auto fifo = [](std::uint32_t a, std::uint32_t b) { return a < b; };
const auto never_fits = [](std::uint32_t) { return false; };

}  // namespace

TEST_CASE("wait_queue: insertion follows the order, ties keep arrival order") {
    const std::vector<std::uint32_t> gpus = {4, 1, 2, 1};
    auto fewest = [&](std::uint32_t a, std::uint32_t b) { return gpus[a] < gpus[b]; };  // ties: not less
    const auto q = queue_of(gpus, fewest);
    CHECK(order_of(q) == std::vector<std::uint32_t>{1, 3, 2, 0});
    for (std::size_t i = 0; i < q.size(); ++i) CHECK(q.gpus_at(i) == gpus[q.job_at(i)]);
    auto q2 = queue_of(gpus, fifo);
    CHECK(order_of(q2) == std::vector<std::uint32_t>{0, 1, 2, 3});
    q2.erase(1);
    CHECK(order_of(q2) == std::vector<std::uint32_t>{0, 2, 3});
    CHECK(q2.gpus_at(1) == 2);
    q2.reset(2);
    CHECK(q2.empty());
}

TEST_CASE("wait_queue: exclusive GPUs, backfill and strict head-of-line") {
    const auto q = queue_of({4, 1, 2}, fifo);
    // backfill: the first job that fits
    CHECK(q.find(wait_queue::no_job, 2, true, true, never_fits) == 1);
    CHECK(q.find(wait_queue::no_job, 4, true, true, never_fits) == 0);
    CHECK(q.find(wait_queue::no_job, 0, true, true, never_fits) == wait_queue::npos);
    // strict: only the head may start
    CHECK(q.find(wait_queue::no_job, 2, false, true, never_fits) == wait_queue::npos);
    // a skipped head does not block the others, even when strict
    CHECK(q.find(0, 2, false, true, never_fits) == 1);
    CHECK(q.find(1, 2, true, true, never_fits) == 2);
}

TEST_CASE("wait_queue: deferred jobs are skipped until the epoch moves") {
    auto q = queue_of({1, 1, 1}, fifo);
    q.defer(0);
    CHECK(q.find(wait_queue::no_job, 8, true, true, never_fits) == 1);
    CHECK(q.find(wait_queue::no_job, 8, false, true, never_fits) == 1);  // a deferred head does not block
    q.defer(1);
    q.defer(2);
    CHECK(q.find(wait_queue::no_job, 8, true, true, never_fits) == wait_queue::npos);
    q.next_epoch();
    CHECK(q.find(wait_queue::no_job, 8, true, true, never_fits) == 0);
    CHECK(q.info(0).deferred == 1);
}

TEST_CASE("wait_queue: with shared GPUs, fits() decides") {
    const auto q = queue_of({2, 3, 1}, fifo);
    std::vector<std::uint32_t> asked;
    auto fits_three = [&](std::uint32_t j) {
        asked.push_back(j);
        return j == 2;
    };
    CHECK(q.find(wait_queue::no_job, 0, true, false, fits_three) == 2);
    CHECK(asked == std::vector<std::uint32_t>{0, 1, 2});
    asked.clear();
    CHECK(q.find(wait_queue::no_job, 0, false, false, fits_three) == wait_queue::npos);  // strict: the head only
    CHECK(asked == std::vector<std::uint32_t>{0});
}
