#pragma once
/// \file job_fields.hpp
/// Fields of a job beyond what the simulator reads (its GPUs, model, work and submit time): a
/// tenant, a priority, a deadline, GPU bounds, or a field of the user's own. A scenario declares
/// them (key "job_fields"); `jobs` entries and trace rows then carry them, and they reach the
/// env's per-job table (a side array: the simulator's job records do not grow), the observation
/// (as named features, when a field says "observe"), Python and the evaluation reports. A field
/// not declared is refused, naming it (docs/workloads.md).
///
/// A field is a number or a category (a name, stored as its index among the field's categories).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplace {

enum class field_type : std::uint8_t { number, category };

/// One declared job field.
struct job_field {
    std::string name;
    field_type type = field_type::number;
    /// Where a job does not give the field: a number (for a category, the index of a category);
    /// unset: every job of a list or row of a trace must give it (generated workloads give NaN).
    std::optional<double> default_value;
    /// A category field's values in index order (the default's first when it names one).
    std::vector<std::string> categories;
    /// A category field whose categories are all listed: another value is refused. Otherwise any
    /// value is taken, indexed in order of first appearance after the listed ones.
    bool closed = false;
    double lo = 0, hi = 1;  ///< a number's range in the observation: (value - lo) / (hi - lo), clamped to [0, 1]
    bool observe = false;   ///< a named feature of the current job and of each queue slot (segment "job_fields")
    /// A computed field: its values are the observation feature of one's own of this name
    /// (feature_registry.hpp), computed for each job when its episode is drawn; "" for a given field.
    std::string feature;
    /// Generated workloads (synthetic, proximity_drl): each job's value drawn, from a stream of the
    /// episode's seed of its own (the jobs drawn are those without it). A number: uniform in
    /// [draw_lo, draw_hi] when draw_hi > draw_lo; a category: by `draw_weights`, one per category.
    /// Neither: the default.
    double draw_lo = 0, draw_hi = 0;
    std::vector<double> draw_weights;
    friend bool operator==(const job_field&, const job_field&) = default;
};

/// The fields known by name (declared by their name alone, each option may still be set): "tenant"
/// (a category), "priority" (a number, default 0, observed in [0, 10]), "deadline" (seconds after
/// submission), "min_gpus" and "max_gpus" (GPU bounds of an elastic job: the round front end reads them, docs/rounds.md).
[[nodiscard]] inline std::optional<job_field> known_job_field(std::string_view name) {
    job_field f;
    f.name = std::string(name);
    if (name == "tenant") {
        f.type = field_type::category;
    } else if (name == "priority") {
        f.default_value = 0.0;
        f.hi = 10;
    } else if (name == "deadline") {
        f.hi = 86400;  // a day
    } else if (name == "min_gpus" || name == "max_gpus") {
        f.lo = 1;
        f.hi = 1024;
    } else {
        return std::nullopt;
    }
    return f;
}

/// The names of known_job_field()'s fields.
[[nodiscard]] inline std::vector<std::string> known_job_field_names() { return {"tenant", "priority", "deadline", "min_gpus", "max_gpus"}; }

/// The job keys a jobs entry always has, which no field may be named after.
[[nodiscard]] inline bool is_job_key(std::string_view n) noexcept {
    return n == "submit_time" || n == "num_gpus" || n == "model" || n == "work" || n == "gpu_fraction" || n == "id";
}

/// The index of declared field `name`, or npos.
[[nodiscard]] inline std::size_t field_index(const std::vector<job_field>& fields, std::string_view name) noexcept {
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (fields[i].name == name) return i;
    return std::string_view::npos;
}

/// The categories of every category field of a workload, interned in order of first appearance
/// after the declared ones; immutable once the workload is built.
class field_dictionary {
public:
    field_dictionary() = default;
    explicit field_dictionary(const std::vector<job_field>& fields) : names_(fields.size()) {
        for (std::size_t f = 0; f < fields.size(); ++f) names_[f] = fields[f].categories;
    }
    /// The index of category `value` of field f, added when new (nullopt: a closed list lacks it).
    [[nodiscard]] std::optional<double> intern(std::size_t f, std::string_view value, bool closed) {
        auto& v = names_[f];
        for (std::size_t i = 0; i < v.size(); ++i)
            if (v[i] == value) return double(i);
        if (closed) return std::nullopt;
        v.emplace_back(value);
        return double(v.size() - 1);
    }
    /// The categories of field f, in index order (empty for a number field).
    [[nodiscard]] const std::vector<std::string>& categories(std::size_t f) const { return names_[f]; }
    [[nodiscard]] std::size_t size() const noexcept { return names_.size(); }

private:
    std::vector<std::vector<std::string>> names_;
};

/// What an episode's jobs carry besides themselves (workload_source::generate()): per job, the
/// declared fields' values (NaN where missing; a category's index in the workload's
/// field_dictionary), and how many of the jobs had their model assigned by the scenario (a trace
/// row that gave none).
struct episode_extras {
    std::size_t width = 0;       ///< fields per job
    std::vector<double> fields;  ///< jobs x width, in the order of the jobs
    std::size_t models_assigned = 0;
};

/// A field's value as an observation feature in [0, 1]: a number by its range, a category as
/// index / (categories - 1); 0 where the value is missing (NaN).
[[nodiscard]] inline float field_feature(const job_field& f, double v, std::size_t categories) noexcept {
    if (!(v == v)) return 0.0f;
    double x = 0;
    if (f.type == field_type::category) x = categories > 1 ? v / double(categories - 1) : 0.0;
    else x = f.hi > f.lo ? (v - f.lo) / (f.hi - f.lo) : 0.0;
    return static_cast<float>(x < 0 ? 0.0 : x > 1 ? 1.0 : x);
}

}  // namespace gpuplace
