#pragma once
/// \file model_zoo.hpp
/// Per model (job type) and GPU count: the measured throughput when the job's GPUs are in one node
/// (consolidated) and when they are spread across nodes, and the GPU memory the job needs.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "detail/json_util.hpp"
#include "error.hpp"
#include "job.hpp"

namespace gpuplace {

/// Throughput (steps/s of the whole job) at one GPU count.
struct scaling_point {
    std::uint32_t gpus = 1;
    double consolidated = 1.0;  ///< all GPUs in one node
    double spread = 1.0;        ///< GPUs spread across nodes (equal to consolidated for 1 GPU)
};

/// One model of the zoo.
struct ModelProfile {
    std::string name;
    double memory_gb = 4.0;             ///< GPU memory the job needs on each of its GPUs
    std::vector<scaling_point> points;  ///< measured GPU counts, ascending

    /// Largest measured GPU count.
    [[nodiscard]] std::uint32_t max_measured_gpus() const noexcept { return points.empty() ? 0 : points.back().gpus; }

    /// Throughput at k GPUs: measured where available, otherwise the per-GPU throughput is
    /// interpolated linearly between measured counts (held constant above the largest).
    [[nodiscard]] scaling_point at(std::uint32_t k) const noexcept {
        const auto& pts = points;
        if (k <= pts.front().gpus) return scale(pts.front(), k);
        for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
            const auto& a = pts[i];
            const auto& b = pts[i + 1];
            if (k == b.gpus) return b;
            if (k < b.gpus) {
                const double t = double(k - a.gpus) / double(b.gpus - a.gpus);
                const double c = (a.consolidated / a.gpus) * (1 - t) + (b.consolidated / b.gpus) * t;
                const double s = (a.spread / a.gpus) * (1 - t) + (b.spread / b.gpus) * t;
                return {k, c * k, s * k};
            }
        }
        return scale(pts.back(), k);
    }

private:
    static scaling_point scale(const scaling_point& p, std::uint32_t k) noexcept {
        const double f = double(k) / double(p.gpus);
        return {k, p.consolidated * f, p.spread * f};
    }
};

/// Where the zoo was measured: the link bandwidths (GB/s) and latencies (s) of the measurement
/// cluster, which the communication models use to calibrate compute and communication time.
struct measurement_cluster {
    double node_bandwidth = 100.0;     ///< GPU-GPU inside a server (NVLink)
    double network_bandwidth = 3.125;  ///< server-server (25 Gb/s Ethernet)
    double node_latency = 2e-6;
    double network_latency = 20e-6;
};

/// A set of model profiles, indexed by model_id.
class ModelZoo {
public:
    ModelZoo() = default;
    ModelZoo(std::vector<ModelProfile> models, measurement_cluster ref, std::string gpu_type = "v100")
        : models_(std::move(models)), ref_(ref), gpu_type_(std::move(gpu_type)) {
        validate("zoo");
    }

    [[nodiscard]] std::size_t size() const noexcept { return models_.size(); }
    [[nodiscard]] const ModelProfile& operator[](model_id m) const noexcept { return models_[m]; }
    [[nodiscard]] const ModelProfile& at(model_id m) const {
        if (m >= models_.size())
            throw ConfigError("model zoo: model id " + std::to_string(m) + " out of range (zoo has " +
                              std::to_string(models_.size()) + " models)");
        return models_[m];
    }
    [[nodiscard]] const std::vector<ModelProfile>& models() const noexcept { return models_; }
    [[nodiscard]] const measurement_cluster& reference() const noexcept { return ref_; }
    [[nodiscard]] const std::string& gpu_type() const noexcept { return gpu_type_; }

    /// Index of the model with this name; throws ConfigError listing the known names otherwise.
    [[nodiscard]] model_id find(std::string_view name) const {
        for (std::size_t i = 0; i < models_.size(); ++i)
            if (models_[i].name == name) return static_cast<model_id>(i);
        std::string known;
        for (const auto& m : models_) known += (known.empty() ? "" : ", ") + m.name;
        throw ConfigError("model zoo: unknown model \"" + std::string(name) + "\" (known: " + known + ")");
    }

    /// A small built-in zoo from Gavel's V100 measurements (stanford-futuredata/gavel, MIT licence):
    /// consolidated / spread steps per second at 1, 2, 4 and 8 GPUs. Memory is an estimate.
    [[nodiscard]] static ModelZoo builtin() {
        std::vector<ModelProfile> m = {
            {"ResNet-18 (batch size 64)", 3.0,
             {{1, 24.09, 24.09}, {2, 74.14, 31.48}, {4, 95.59, 38.31}, {8, 255.83, 63.15}}},
            {"ResNet-50 (batch size 32)", 6.0,
             {{1, 7.79, 7.79}, {2, 10.83, 8.97}, {4, 13.76, 12.85}, {8, 24.07, 22.83}}},
            {"Transformer (batch size 64)", 8.0,
             {{1, 8.62, 8.62}, {2, 15.88, 7.01}, {4, 19.66, 10.57}, {8, 49.65, 17.01}}},
            {"LM (batch size 20)", 4.0,
             {{1, 64.74, 64.74}, {2, 132.17, 30.44}, {4, 111.00, 33.40}, {8, 497.30, 58.89}}},
            {"Recommendation (batch size 2048)", 4.0, {{1, 7.47, 7.47}}},
            {"A3C", 2.0, {{1, 7.18, 7.18}}},
            {"CycleGAN", 6.0, {{1, 4.43, 4.43}}},
        };
        return ModelZoo(std::move(m), measurement_cluster{}, "v100");
    }

    /// Reads a zoo from JSON: {"gpu_type", "reference": {node_bandwidth, network_bandwidth,
    /// node_latency, network_latency}, "models": [{"name", "memory_gb", "throughput":
    /// {"<gpus>": [consolidated, spread], ...}}, ...]}. Errors name the JSON path.
    [[nodiscard]] static ModelZoo from_json(const detail::json& j, std::string_view path = "/zoo") {
        using namespace detail;
        check_keys(j, path, {"gpu_type", "reference", "models", "source", "license", "notes", "colocation"});
        measurement_cluster ref;
        if (auto it = j.find("reference"); it != j.end()) {
            const auto p = join_path(path, "reference");
            check_keys(*it, p, {"node_bandwidth", "network_bandwidth", "node_latency", "network_latency"});
            read_number(*it, p, "node_bandwidth", ref.node_bandwidth, 1e-9);
            read_number(*it, p, "network_bandwidth", ref.network_bandwidth, 1e-9);
            read_number(*it, p, "node_latency", ref.node_latency, 0.0);
            read_number(*it, p, "network_latency", ref.network_latency, 0.0);
        }
        std::string gpu_type = "v100";
        read_string(j, path, "gpu_type", gpu_type);
        auto mit = j.find("models");
        const auto mpath = join_path(path, "models");
        if (mit == j.end() || !mit->is_array() || mit->empty())
            config_fail(mpath, "expected a non-empty array of models");
        std::vector<ModelProfile> models;
        for (std::size_t i = 0; i < mit->size(); ++i) {
            const auto& mj = (*mit)[i];
            const auto p = join_path(mpath, std::to_string(i));
            check_keys(mj, p, {"name", "memory_gb", "throughput", "notes"});
            ModelProfile mp;
            if (!mj.contains("name")) config_fail(p, "missing key \"name\"");
            read_string(mj, p, "name", mp.name);
            read_number(mj, p, "memory_gb", mp.memory_gb, 0.0, 1e6);
            auto tit = mj.find("throughput");
            const auto tp = join_path(p, "throughput");
            if (tit == mj.end() || !tit->is_object() || tit->empty()) config_fail(tp, "expected an object {\"<gpus>\": [consolidated, spread]}");
            for (auto e = tit->begin(); e != tit->end(); ++e) {
                const auto ep = join_path(tp, e.key());
                std::uint32_t k = 0;
                try {
                    std::size_t pos = 0;
                    const long v = std::stol(e.key(), &pos);
                    if (pos != e.key().size() || v < 1 || v > 65536) throw std::invalid_argument("");
                    k = static_cast<std::uint32_t>(v);
                } catch (const std::exception&) {
                    config_fail(ep, "GPU count \"" + e.key() + "\" is not an integer in [1, 65536]");
                }
                const auto& v = e.value();
                if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
                    config_fail(ep, "expected [consolidated, spread] steps/s, got " + short_dump(v));
                const double c = v[0].get<double>(), s = v[1].get<double>();
                if (!(c > 0) || !(s > 0)) config_fail(ep, "throughputs must be > 0, got " + short_dump(v));
                mp.points.push_back({k, c, s});
            }
            std::sort(mp.points.begin(), mp.points.end(), [](auto& a, auto& b) { return a.gpus < b.gpus; });
            models.push_back(std::move(mp));
        }
        ModelZoo z;
        z.models_ = std::move(models);
        z.ref_ = ref;
        z.gpu_type_ = gpu_type;
        z.validate(std::string(path));
        return z;
    }

    /// Loads a zoo from a JSON file; errors name the file.
    [[nodiscard]] static ModelZoo load(const std::string& file) {
        std::ifstream in(file);
        if (!in) throw ConfigError("model zoo: cannot open \"" + file + "\"");
        std::stringstream ss;
        ss << in.rdbuf();
        return from_json(detail::parse_json(ss.str(), file), file + ":");
    }

private:
    void validate(const std::string& where) const {
        if (models_.empty()) throw ConfigError(where + ": the zoo has no models");
        if (models_.size() > 65535) throw ConfigError(where + ": too many models");
        for (const auto& m : models_) {
            if (m.points.empty()) throw ConfigError(where + ": model \"" + m.name + "\" has no throughput");
            for (std::size_t i = 1; i < m.points.size(); ++i)
                if (m.points[i].gpus == m.points[i - 1].gpus)
                    throw ConfigError(where + ": model \"" + m.name + "\" lists " + std::to_string(m.points[i].gpus) +
                                      " GPUs twice");
        }
    }

    std::vector<ModelProfile> models_;
    measurement_cluster ref_{};
    std::string gpu_type_ = "v100";
};

}  // namespace gpuplace
