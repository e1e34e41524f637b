#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gpuplace/calibration.hpp>
#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>

using namespace gpuplace;

namespace {
/// Throughput (steps/s) RingAllReduce gives model m on `gpus`.
double modelled(const TreeTopology& t, const ModelZoo& z, model_id m, const std::vector<gpu_id>& gpus) {
    const RingAllReduce c;
    const auto k = static_cast<std::uint32_t>(gpus.size());
    return 1.0 / (c.ideal_step_time(t, z, m, k) * c.evaluate(t, z, m, gpus).slowdown);
}
std::vector<gpu_id> consolidated(std::uint32_t k) {
    std::vector<gpu_id> v;
    for (std::uint32_t i = 0; i < k; ++i) v.push_back(i);
    return v;
}
std::vector<gpu_id> spread(std::uint32_t k) {
    std::vector<gpu_id> v;
    for (std::uint32_t i = 0; i < k; ++i) v.push_back(i * 8);
    return v;
}
}  // namespace

TEST_CASE("model zoo: the embedded Gavel V100 zoo equals data/model_zoo_v100.json") {
    const auto z = ModelZoo::gavel_v100();
    CHECK(z.size() == 26);
    CHECK(z.gpu_type() == "v100");
    CHECK(ModelZoo::builtin().size() == z.size());
    const auto f = ModelZoo::load(std::string(GPUPLACE_SOURCE_DIR) + "/data/model_zoo_v100.json");
    REQUIRE(f.size() == z.size());
    for (std::size_t m = 0; m < z.size(); ++m) {
        CHECK(f[model_id(m)].name == z[model_id(m)].name);
        CHECK(f[model_id(m)].memory_gb == z[model_id(m)].memory_gb);
        REQUIRE(f[model_id(m)].points.size() == z[model_id(m)].points.size());
        for (std::size_t i = 0; i < z[model_id(m)].points.size(); ++i) {
            CHECK(f[model_id(m)].points[i].consolidated == z[model_id(m)].points[i].consolidated);
            CHECK(f[model_id(m)].points[i].spread == z[model_id(m)].points[i].spread);
        }
        for (std::size_t o = 0; o < z.size(); ++o) CHECK(f.colocation(model_id(m), model_id(o)) == z.colocation(model_id(m), model_id(o)));
    }
}

TEST_CASE("model zoo: measured values, noisy entries and single-GPU-only models") {
    const auto z = ModelZoo::gavel_v100();
    const auto& r18 = z[z.find("ResNet-18 (batch size 64)")];
    REQUIRE(r18.points.size() == 4);
    CHECK(r18.at(8).consolidated == doctest::Approx(255.82913926317391));
    CHECK(r18.at(8).spread == doctest::Approx(63.15389344591445));
    // measured spread 13.94 > consolidated 10.29 at 8 GPUs: no placement sensitivity
    const auto& r50 = z[z.find("ResNet-50 (batch size 128)")];
    CHECK(r50.at(8).spread == r50.at(8).consolidated);
    for (const char* n : {"A3C", "CycleGAN", "Recommendation (batch size 2048)"}) CHECK(z[z.find(n)].max_measured_gpus() == 1);
    // co-location: measured pair, and a pair that cannot share
    const auto c = z.colocation(z.find("ResNet-18 (batch size 16)"), z.find("ResNet-18 (batch size 64)"));
    CHECK(c[0] == doctest::Approx(32.353384328946916));
    CHECK(c[1] == doctest::Approx(24.093231895382736));
    CHECK(z.has_colocation());
    for (const auto& m : z.models()) CHECK(m.memory_gb > 0);
}

TEST_CASE("model zoo: calibration reproduces every stored throughput on the measurement cluster") {
    const auto z = ModelZoo::gavel_v100();
    const auto t = measurement_topology(z);
    double worst = 0;
    for (std::size_t m = 0; m < z.size(); ++m)
        for (const auto& p : z[model_id(m)].points) {
            const double ec = std::abs(modelled(t, z, model_id(m), consolidated(p.gpus)) / p.consolidated - 1);
            const double es = std::abs(modelled(t, z, model_id(m), spread(p.gpus)) / p.spread - 1);
            CHECK_MESSAGE(ec < 0.05, z[model_id(m)].name, " @", p.gpus);
            CHECK_MESSAGE(es < 0.05, z[model_id(m)].name, " @", p.gpus);
            worst = std::max({worst, ec, es});
        }
    // consistent entries are exact; entries made placement-insensitive keep only the extra hop latency
    CHECK(worst < 0.005);
    // calibration_rows() (gpuplace-eval --calibration) says the same, point by point
    const auto rows = calibration_rows(z);
    std::size_t i = 0;
    double worst_row = 0;
    for (std::size_t m = 0; m < z.size(); ++m)
        for (const auto& p : z[model_id(m)].points) {
            REQUIRE(i < rows.size());
            CHECK(rows[i].model == z[model_id(m)].name);
            CHECK(rows[i].gpus == p.gpus);
            CHECK(rows[i].model_consolidated == modelled(t, z, model_id(m), consolidated(p.gpus)));
            CHECK(rows[i].model_spread == modelled(t, z, model_id(m), spread(p.gpus)));
            worst_row = std::max(worst_row, rows[i++].max_error_percent);
        }
    CHECK(i == rows.size());
    CHECK(worst_row == doctest::Approx(100 * worst));
}

TEST_CASE("model zoo: calibration reproduces the raw Gavel measurements wherever they are consistent") {
    const std::string file = std::string(GPUPLACE_SOURCE_DIR) + "/data/gavel/simulation_throughputs.json";
    std::ifstream in(file);
    const auto raw = detail::json::parse(in);
    const auto z = ModelZoo::gavel_v100();
    const auto t = measurement_topology(z);
    std::size_t consistent = 0, noisy = 0;
    for (auto it = raw["v100"].begin(); it != raw["v100"].end(); ++it) {
        const auto& key = it.key();  // "('<model>', <gpus>)"
        const auto comma = key.rfind(',');
        const std::string name = key.substr(2, comma - 3);
        const auto k = static_cast<std::uint32_t>(std::stoul(key.substr(comma + 1)));
        const double c = (*it)["null"].get<double>();
        const double s = raw["v100_unconsolidated"][key]["null"].get<double>();
        const auto m = z.find(name);
        CHECK(modelled(t, z, m, consolidated(k)) == doctest::Approx(c).epsilon(1e-9));
        if (k > 1 && s < c) {
            ++consistent;
            CHECK(modelled(t, z, m, spread(k)) == doctest::Approx(s).epsilon(1e-9));
        } else if (k > 1) {
            ++noisy;
        }
    }
    CHECK(consistent == 49);  // 19 models x 3 multi-GPU counts, less the 8 noisy ones
    CHECK(noisy == 8);
}

TEST_CASE("model zoo: a bad co-location section names the JSON path") {
    auto j = detail::json::parse(R"({"models": [{"name": "a", "throughput": {"1": [2, 2]}}],
                                     "colocation": {"a": {"b": [1, 1]}}})");
    CHECK_THROWS_WITH_AS(zoo_from_json(j), "config /zoo/colocation/a/b: unknown model \"b\"", ConfigError);
    j["colocation"] = {{"a", {{"a", {1, -1}}}}};
    CHECK_THROWS_WITH_AS(zoo_from_json(j), "config /zoo/colocation/a/a: expected [self, other] steps/s >= 0, got [1,-1]",
                         ConfigError);
    j["colocation"] = {{"a", {{"a", {0.5, 0.5}}}}};
    const auto z = zoo_from_json(j);
    CHECK(z.colocation(0, 0) == std::array<double, 2>{0.5, 0.5});
}

TEST_CASE("model zoo: copies share the profiles (the envs of a vector env read one copy)") {
    const auto z = gpuplace::ModelZoo::builtin();
    const auto copy = z;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    CHECK(&copy.models() == &z.models());
    CHECK(&copy[0] == &z[0]);
    CHECK(copy.size() == z.size());
    const auto other = gpuplace::ModelZoo::builtin();  // built again: its own profiles, equal values
    CHECK(&other.models() != &z.models());
    CHECK(other.models().front().name == z.models().front().name);
    const gpuplace::ModelZoo empty;
    CHECK(empty.size() == 0);
    CHECK(!empty.has_colocation());
    CHECK(empty.colocation(0, 0)[0] == -1.0);

    gpuplace::env a;
    const gpuplace::env b = a;
    CHECK(&a.zoo().models() == &b.zoo().models());
}
