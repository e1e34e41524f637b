#pragma once
/// \file model_zoo.hpp
/// Per model (job type) and GPU count: the measured throughput when the job's GPUs are in one node
/// (consolidated) and when they are spread across nodes, and the GPU memory the job needs.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "data.hpp"
#include "detail/gavel_zoo.hpp"
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
    /// What a zoo holds. It never changes once built, so copies of a zoo share one (the envs of a
    /// vector env then read the same profiles, which stay in cache, instead of one copy each).
    struct data {
        std::vector<ModelProfile> models;
        std::vector<std::array<double, 2>> coloc;  ///< n x n, row = first model; empty = unknown
        measurement_cluster ref{};
        std::string gpu_type = "v100";
    };

public:
    ModelZoo() : d_(std::make_shared<const data>()) {}
    ModelZoo(std::vector<ModelProfile> models, measurement_cluster ref, std::string gpu_type = "v100") {
        data d{std::move(models), {}, ref, std::move(gpu_type)};
        validate(d, "zoo");
        d_ = std::make_shared<const data>(std::move(d));
    }

    [[nodiscard]] std::size_t size() const noexcept { return d_->models.size(); }
    [[nodiscard]] const ModelProfile& operator[](model_id m) const noexcept { return d_->models[m]; }
    [[nodiscard]] const ModelProfile& at(model_id m) const {
        if (m >= size())
            throw ConfigError("model zoo: model id " + std::to_string(m) + " out of range (zoo has " +
                              std::to_string(size()) + " models)");
        return d_->models[m];
    }
    [[nodiscard]] const std::vector<ModelProfile>& models() const noexcept { return d_->models; }
    [[nodiscard]] const measurement_cluster& reference() const noexcept { return d_->ref; }
    [[nodiscard]] const std::string& gpu_type() const noexcept { return d_->gpu_type; }

    /// Index of the model with this name; throws ConfigError listing the known names otherwise.
    [[nodiscard]] model_id find(std::string_view name) const {
        const auto& models = d_->models;
        for (std::size_t i = 0; i < models.size(); ++i)
            if (models[i].name == name) return static_cast<model_id>(i);
        std::string known;
        for (const auto& m : models) known += (known.empty() ? "" : ", ") + m.name;
        throw ConfigError("model zoo: unknown model \"" + std::string(name) + "\" (known: " + known + ")");
    }

    /// The default zoo: Gavel's V100 measurements (stanford-futuredata/gavel, MIT licence), 26 job
    /// types at 1, 2, 4 and 8 GPUs (7 of them single-GPU only), with the pairwise co-location
    /// throughputs of 1-GPU jobs. Embedded (detail/gavel_zoo.hpp, generated by scripts/make_zoo.py
    /// like data/model_zoo_v100.json): needs no file. Memory per model is an estimate.
    [[nodiscard]] static ModelZoo gavel_v100() {
        namespace g = detail::gavel;
        std::vector<ModelProfile> m;
        m.reserve(g::num_models);
        for (const auto& mm : g::models) {
            ModelProfile p{std::string(mm.name), mm.memory_gb, {}};
            for (std::size_t i = mm.first; i < mm.first + mm.count; ++i)
                p.points.push_back({g::points[i].gpus, g::points[i].consolidated, g::points[i].spread});
            m.push_back(std::move(p));
        }
        data d{std::move(m), {}, measurement_cluster{g::node_bandwidth, g::network_bandwidth, g::node_latency, g::network_latency},
               std::string(g::gpu_type)};
        validate(d, "zoo");
        d.coloc.resize(g::num_models * g::num_models);
        for (std::size_t a = 0; a < g::num_models; ++a)
            for (std::size_t b = 0; b < g::num_models; ++b)
                d.coloc[a * g::num_models + b] = {g::colocation[a][b][0], g::colocation[a][b][1]};
        return ModelZoo(std::move(d));
    }

    /// The zoo used when a scenario names none: gavel_v100().
    [[nodiscard]] static ModelZoo builtin() { return gavel_v100(); }

    /// Whether pairwise co-location throughputs are known.
    [[nodiscard]] bool has_colocation() const noexcept { return !d_->coloc.empty(); }

    /// Steps/s of 1-GPU jobs a and b when they share one GPU: {a's, b's}; {0, 0} when they cannot
    /// share, {-1, -1} when not measured (or the zoo has no co-location data).
    [[nodiscard]] std::array<double, 2> colocation(model_id a, model_id b) const noexcept {
        if (d_->coloc.empty() || a >= size() || b >= size()) return {-1.0, -1.0};
        return d_->coloc[std::size_t(a) * size() + b];
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
        data d{std::move(models), {}, ref, gpu_type};
        validate(d, std::string(path));
        if (auto cit = j.find("colocation"); cit != j.end()) read_colocation(d, *cit, join_path(path, "colocation"));
        return ModelZoo(std::move(d));
    }

    /// Loads a zoo from a JSON file; errors name the file.
    [[nodiscard]] static ModelZoo load(const std::string& path) {
        const std::string file = resolve_data_path(path);
        std::ifstream in(file);
        if (!in) throw ConfigError("model zoo: cannot open \"" + display_path(file) + "\"");
        std::stringstream ss;
        ss << in.rdbuf();
        return from_json(detail::parse_json(ss.str(), file), file + ":");
    }

private:
    explicit ModelZoo(data&& d) : d_(std::make_shared<const data>(std::move(d))) {}

    /// {"<model>": {"<other>": [self, other]}}; names must be in the zoo.
    static void read_colocation(data& d, const detail::json& c, const std::string& path) {
        using namespace detail;
        if (!c.is_object()) config_fail(path, "expected an object {\"<model>\": {\"<other>\": [self, other]}}, got " + short_dump(c));
        const auto& models = d.models;
        const std::size_t n = models.size();
        std::vector<std::array<double, 2>> out(n * n, std::array<double, 2>{-1.0, -1.0});
        auto id = [&](const std::string& name, const std::string& p) -> std::size_t {
            for (std::size_t i = 0; i < n; ++i)
                if (models[i].name == name) return i;
            config_fail(p, "unknown model \"" + name + "\"");
        };
        for (auto a = c.begin(); a != c.end(); ++a) {
            const auto pa = join_path(path, a.key());
            const auto ia = id(a.key(), pa);
            if (!a->is_object()) config_fail(pa, "expected an object, got " + short_dump(*a));
            for (auto b = a->begin(); b != a->end(); ++b) {
                const auto pb = join_path(pa, b.key());
                const auto ib = id(b.key(), pb);
                const auto& v = b.value();
                if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() || v[0].get<double>() < 0 ||
                    v[1].get<double>() < 0)
                    config_fail(pb, "expected [self, other] steps/s >= 0, got " + short_dump(v));
                out[ia * n + ib] = {v[0].get<double>(), v[1].get<double>()};
            }
        }
        d.coloc = std::move(out);
    }

    static void validate(const data& d, const std::string& where) {
        const auto& models = d.models;
        if (models.empty()) throw ConfigError(where + ": the zoo has no models");
        if (models.size() > 65535) throw ConfigError(where + ": too many models");
        for (const auto& m : models) {
            if (m.points.empty()) throw ConfigError(where + ": model \"" + m.name + "\" has no throughput");
            for (std::size_t i = 1; i < m.points.size(); ++i)
                if (m.points[i].gpus == m.points[i - 1].gpus)
                    throw ConfigError(where + ": model \"" + m.name + "\" lists " + std::to_string(m.points[i].gpus) +
                                      " GPUs twice");
        }
    }

    std::shared_ptr<const data> d_;  ///< never null
};

}  // namespace gpuplace
