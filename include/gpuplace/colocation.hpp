#pragma once
/// \file colocation.hpp
/// Co-location: several jobs on one GPU. Options, and the interference table that says how fast a
/// job runs when it shares a GPU with another (its throughput there / its throughput alone).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "data.hpp"
#include "detail/input_file.hpp"
#include "error.hpp"
#include "model_zoo.hpp"

namespace gpuplace {

class interference_table;

/// Co-location options (scenario key "colocation"). Off by default.
struct colocation_config {
    bool enabled = false;
    std::uint32_t max_jobs_per_gpu = 2;  ///< jobs one GPU may host
    double gpu_memory_gb = 32.0;         ///< memory of each GPU (V100 32 GB)
    std::string profile;                 ///< optional interference profile file (.csv or .json)
    /// The reader of a JSON profile: the layer that reads scenarios sets it (gpuplace/json/colocation.hpp's
    /// read_json_profile) when a scenario names a .json profile, so that this header parses no JSON.
    interference_table (*read_json)(const std::string& file, const ModelZoo& zoo, interference_table base) = nullptr;

    friend bool operator==(const colocation_config& a, const colocation_config& b) noexcept {
        return a.enabled == b.enabled && a.max_jobs_per_gpu == b.max_jobs_per_gpu && a.gpu_memory_gb == b.gpu_memory_gb &&
               a.profile == b.profile;
    }
};

/// Pairwise interference factors between the zoo's models: factor(a, b) is a's throughput when it
/// shares a GPU with b divided by a's throughput alone; 0 means the pair cannot share. Pairs
/// without data use the time-slicing fallback min(1, 1 / (share_a + share_b)), where a share is
/// the fraction of a GPU the job asks for (1 for whole-GPU jobs, so two such jobs split the GPU).
class interference_table {
public:
    static constexpr double unknown = -1.0;

    interference_table() = default;
    explicit interference_table(std::size_t num_models) : n_(num_models), f_(num_models * num_models, unknown) {}

    [[nodiscard]] std::size_t num_models() const noexcept { return n_; }
    /// Sets a's factor next to b (>= 0; 0 = cannot share).
    void set(model_id a, model_id b, double factor) { f_.at(std::size_t(a) * n_ + b) = factor; }
    /// The measured factor, or `unknown`.
    [[nodiscard]] double measured(model_id a, model_id b) const noexcept {
        return (a < n_ && b < n_) ? f_[std::size_t(a) * n_ + b] : unknown;
    }
    /// a's rate factor next to b, given the GPU shares both jobs ask for.
    [[nodiscard]] double factor(model_id a, double share_a, model_id b, double share_b) const noexcept {
        const double m = measured(a, b);
        if (m >= 0) return m;
        return std::min(1.0, 1.0 / (share_a + share_b));
    }
    /// Whether a and b may share a GPU (both factors > 0).
    [[nodiscard]] bool compatible(model_id a, double sa, model_id b, double sb) const noexcept {
        return factor(a, sa, b, sb) > 0 && factor(b, sb, a, sa) > 0;
    }

    /// The zoo's measured pairs (ModelZoo::colocation: [self, other] steps/s when sharing one GPU)
    /// as factors self / (a's isolated throughput at 1 GPU), capped at 1; [0, 0] means the pair
    /// cannot share. Pairs the zoo does not know stay unknown (time-slicing fallback).
    [[nodiscard]] static interference_table from_zoo(const ModelZoo& zoo) {
        interference_table t(zoo.size());
        if (!zoo.has_colocation()) return t;
        for (std::size_t a = 0; a < zoo.size(); ++a) {
            const double iso = zoo[model_id(a)].at(1).consolidated;
            for (std::size_t b = 0; b < zoo.size(); ++b) {
                const auto p = zoo.colocation(model_id(a), model_id(b));
                if (p[0] < 0) continue;
                t.set(model_id(a), model_id(b), (p[0] == 0 && p[1] == 0) ? 0.0 : std::min(1.0, p[0] / iso));
            }
        }
        return t;
    }

    /// Loads a user's profile of factors: CSV with header `model,other,factor` (factor of `model`
    /// next to `other`, 0 = cannot share), or JSON {"<model>": {"<other>": factor}}. Entries
    /// override `base`. Errors name file:line (CSV) or the JSON path.
    /// `read_json` reads a .json profile (colocation_config::read_json).
    [[nodiscard]] static interference_table load_profile(const std::string& path, const ModelZoo& zoo, interference_table base,
                                                         interference_table (*read_json)(const std::string&, const ModelZoo&,
                                                                                          interference_table) = nullptr) {
        const std::string file = resolve_data_path(path);
        std::string text;
        if (!detail::read_input_file<ConfigError>(file, text, display_path(file), "co-location profile: "))
            throw ConfigError("co-location profile: cannot open \"" + display_path(file) + "\"");
        std::istringstream in(std::move(text));
        if (base.num_models() != zoo.size()) base = interference_table(zoo.size());
        const bool is_json = file.size() >= 5 && file.substr(file.size() - 5) == ".json";
        if (is_json) {
            if (!read_json)
                throw ConfigError("co-location profile \"" + display_path(file) +
                                  "\": no reader for JSON profiles (colocation_config::read_json); read the scenario with "
                                  "gpuplace/json/scenario.hpp, or set read_json = gpuplace::read_json_profile (gpuplace/json/colocation.hpp)");
            return read_json(file, zoo, std::move(base));
        }
        std::string line;
        std::size_t lineno = 0;
        while (std::getline(in, line)) {
            ++lineno;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            if (line.empty() || line[0] == '#') continue;
            if (lineno == 1 && line.rfind("model,", 0) == 0) continue;  // header
            const auto c1 = line.find(','), c2 = line.rfind(',');
            const auto where = file + ":" + std::to_string(lineno);
            if (c1 == std::string::npos || c1 == c2)
                throw TraceError(where + ": expected 3 columns model,other,factor, got \"" + line + "\"");
            const auto a = line.substr(0, c1), b = line.substr(c1 + 1, c2 - c1 - 1), v = line.substr(c2 + 1);
            double f = 0;
            try {
                std::size_t pos = 0;
                f = std::stod(v, &pos);
                if (pos != v.size()) throw std::invalid_argument("");
            } catch (const std::exception&) {
                throw TraceError(where + ": column 3 (factor): \"" + v + "\" is not a number");
            }
            if (f < 0) throw TraceError(where + ": column 3 (factor): " + v + " is negative");
            model_id ia = 0, ib = 0;
            try {
                ia = zoo.find(a);
                ib = zoo.find(b);
            } catch (const ConfigError& e) {
                throw TraceError(where + ": " + e.what());
            }
            base.set(ia, ib, f);
        }
        return base;
    }

    /// The table of co-location options `c` for a zoo: the zoo's pairs, then its profile's, if any.
    [[nodiscard]] static interference_table of(const colocation_config& c, const ModelZoo& zoo) {
        auto t = from_zoo(zoo);
        if (!c.profile.empty()) t = load_profile(c.profile, zoo, std::move(t), c.read_json);
        return t;
    }

private:
    static int find(const ModelZoo& zoo, std::string_view n) {
        for (std::size_t i = 0; i < zoo.size(); ++i)
            if (zoo[model_id(i)].name == n) return int(i);
        return -1;
    }
    std::size_t n_ = 0;
    std::vector<double> f_;
};

}  // namespace gpuplace
