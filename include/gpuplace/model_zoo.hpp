#pragma once
/// \file model_zoo.hpp
/// Per model (job type) and GPU count: the measured throughput when the job's GPUs are in one node
/// (consolidated) and when they are spread across nodes, and the GPU memory the job needs. A zoo is
/// measured on one GPU type (its reference type, gpu_type()) and may hold the same models measured
/// on other GPU types (gpu_types(), of_type()): what heterogeneous clusters run on.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data.hpp"
#include "data/gavel_zoo.hpp"
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

class ModelZoo;


namespace detail {
/// Reads zoo files for ModelZoo::load(); defined by gpuplace/json/zoo.hpp.
struct zoo_file_reader;
}  // namespace detail


/// A set of model profiles, indexed by model_id.
class ModelZoo {
    /// What a zoo holds. It never changes once built, so copies of a zoo share one (the envs of a
    /// vector env then read the same profiles, which stay in cache, instead of one copy each).
    struct data {
        std::vector<ModelProfile> models;
        std::vector<std::array<double, 2>> coloc;  ///< n x n, row = first model; empty = unknown
        measurement_cluster ref{};
        std::string gpu_type = "v100";
        std::vector<ModelZoo> types;  ///< the zoos of the other GPU types (same models, same order)
    };

public:
    ModelZoo() : d_(std::make_shared<const data>()) {}
    /// A zoo of `models` measured on `ref`, with the pairwise co-location throughputs of 1-GPU
    /// jobs (n x n {self, other} steps/s, row = first model; empty: unknown). ConfigError, naming
    /// `where`, when it has no model, a model without throughput, or a GPU count twice.
    ModelZoo(std::vector<ModelProfile> models, measurement_cluster ref, std::string gpu_type = "v100",
             std::vector<std::array<double, 2>> colocation = {}, const std::string& where = "zoo") {
        data d{std::move(models), {}, ref, std::move(gpu_type), {}};
        validate(d, where);
        if (!colocation.empty() && colocation.size() != d.models.size() * d.models.size())
            throw ConfigError(where + ": co-location data for " + std::to_string(colocation.size()) + " pairs, expected " +
                              std::to_string(d.models.size() * d.models.size()));
        d.coloc = std::move(colocation);
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
    /// throughputs of 1-GPU jobs, and the same models measured on P100 and K80 (gpu_types():
    /// v100, p100, k80). Embedded (data/gavel_zoo.hpp, generated by scripts/make_zoo.py like
    /// data/model_zoo_v100.json): needs no file. Memory per model is an estimate.
    [[nodiscard]] static ModelZoo gavel_v100() {
        namespace g = ::gpuplace::data::gavel;
        auto type = [](std::size_t t) {
            std::vector<ModelProfile> m;
            m.reserve(g::num_models);
            for (const auto& mm : g::models[t]) {
                ModelProfile p{std::string(mm.name), mm.memory_gb, {}};
                for (std::size_t i = mm.first; i < mm.first + mm.count; ++i)
                    p.points.push_back({g::points[i].gpus, g::points[i].consolidated, g::points[i].spread});
                m.push_back(std::move(p));
            }
            data d{std::move(m), {}, measurement_cluster{g::node_bandwidth, g::network_bandwidth, g::node_latency, g::network_latency},
                   std::string(g::gpu_types[t]), {}};
            validate(d, "zoo");
            d.coloc.resize(g::num_models * g::num_models);
            for (std::size_t a = 0; a < g::num_models; ++a)
                for (std::size_t b = 0; b < g::num_models; ++b)
                    d.coloc[a * g::num_models + b] = {g::colocation[t][a][b][0], g::colocation[t][a][b][1]};
            return d;
        };
        data d = type(0);
        for (std::size_t t = 1; t < g::num_types; ++t) d.types.push_back(ModelZoo(type(t)));
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

    // ---- GPU types ------------------------------------------------------------------------------

    /// The GPU types the zoo has throughputs for: the reference type (gpu_type()) first.
    [[nodiscard]] std::vector<std::string> gpu_types() const {
        std::vector<std::string> v{d_->gpu_type};
        for (const auto& z : d_->types) v.push_back(z.gpu_type());
        return v;
    }
    [[nodiscard]] std::size_t num_types() const noexcept { return 1 + d_->types.size(); }
    /// The index (into gpu_types()) of a type, or num_types() when the zoo has no such type.
    [[nodiscard]] std::size_t type_index(std::string_view name) const noexcept {
        if (name == d_->gpu_type) return 0;
        for (std::size_t i = 0; i < d_->types.size(); ++i)
            if (d_->types[i].gpu_type() == name) return i + 1;
        return num_types();
    }
    /// The zoo of type t (0: this zoo without its other types; the copy shares the profiles):
    /// the same models, their throughputs and co-location pairs measured on that type.
    [[nodiscard]] ModelZoo of_type(std::size_t t) const {
        if (t == 0) {
            if (d_->types.empty()) return *this;
            data d{d_->models, d_->coloc, d_->ref, d_->gpu_type, {}};
            return ModelZoo(std::move(d));
        }
        if (t > d_->types.size())
            throw ConfigError("model zoo: GPU type index " + std::to_string(t) + " out of range (the zoo has " +
                              std::to_string(num_types()) + " types)");
        return d_->types[t - 1];
    }
    /// A copy of this zoo with `types` as its other GPU types (replacing any): each must hold the
    /// same models in the same order, be of a type other than this zoo's and the others', and have no
    /// types of its own. ConfigError naming `where` otherwise.
    [[nodiscard]] ModelZoo with_types(std::vector<ModelZoo> types, const std::string& where = "zoo") const {
        data d{d_->models, d_->coloc, d_->ref, d_->gpu_type, {}};
        for (std::size_t i = 0; i < types.size(); ++i) {
            const auto& z = types[i];
            const std::string w = where + "/" + z.gpu_type();
            if (z.num_types() != 1) throw ConfigError(w + ": a GPU type's zoo has no types of its own");
            if (z.gpu_type() == d.gpu_type) throw ConfigError(w + ": the reference type \"" + d.gpu_type + "\" twice");
            for (std::size_t k = 0; k < i; ++k)
                if (types[k].gpu_type() == z.gpu_type()) throw ConfigError(w + ": type \"" + z.gpu_type() + "\" twice");
            if (z.size() != d.models.size())
                throw ConfigError(w + ": " + std::to_string(z.size()) + " models, expected the reference type's " +
                                  std::to_string(d.models.size()));
            for (std::size_t m = 0; m < z.size(); ++m)
                if (z[model_id(m)].name != d.models[m].name)
                    throw ConfigError(w + ": model " + std::to_string(m) + " is \"" + z[model_id(m)].name + "\", expected \"" +
                                      d.models[m].name + "\" (the reference type's models, in order)");
        }
        d.types = std::move(types);
        return ModelZoo(std::move(d));
    }

    /// Throughput of model m at k GPUs on GPU type t (index into gpu_types()).
    [[nodiscard]] scaling_point throughput(model_id m, std::size_t t, std::uint32_t k) const noexcept {
        return t == 0 || t > d_->types.size() ? d_->models[m].at(k) : d_->types[t - 1][m].at(k);
    }
    /// Speed of model m at k GPUs on type t relative to the reference type: the ratio of their
    /// consolidated throughputs (1 for the reference type).
    [[nodiscard]] double type_speed(model_id m, std::size_t t, std::uint32_t k) const noexcept {
        if (t == 0) return 1.0;
        return throughput(m, t, k).consolidated / d_->models[m].at(k).consolidated;
    }

    /// Loads a zoo file (JSON: {"gpu_type", "reference": {node_bandwidth, network_bandwidth,
    /// node_latency, network_latency}, "models": [{"name", "memory_gb", "throughput":
    /// {"<gpus>": [consolidated, spread], ...}}, ...], "colocation"}); errors name the file.
    /// The reader is gpuplace::load_zoo() of gpuplace/json/zoo.hpp: a program that calls this
    /// includes that header (a compile error otherwise: `Reader` is complete only there).
    template <class Reader = detail::zoo_file_reader>
    [[nodiscard]] static ModelZoo load(const std::string& path) {
        return Reader::read(path);
    }

private:
    explicit ModelZoo(data&& d) : d_(std::make_shared<const data>(std::move(d))) {}

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

/// A model of `zoo` drawn uniformly among those measured at >= k GPUs (among all when none is):
/// below(n) draws an index in [0, n) (detail::rng::below). The draw of the generators and of the
/// trace readers' model mixes.
template <class Below>
[[nodiscard]] model_id draw_model_measured_at(const ModelZoo& zoo, std::uint32_t k, Below&& below) {
    std::size_t eligible = 0;
    for (std::size_t z = 0; z < zoo.size(); ++z) eligible += zoo[model_id(z)].max_measured_gpus() >= k;
    if (eligible == 0) return static_cast<model_id>(below(zoo.size()));
    auto pick = below(eligible);
    for (std::size_t z = 0; z < zoo.size(); ++z)
        if (zoo[model_id(z)].max_measured_gpus() >= k && pick-- == 0) return model_id(z);
    return 0;
}

}  // namespace gpuplace
