#pragma once
/// \file comm_registry.hpp
/// Communication models of one's own, by name. A model is a CommModel type on TreeTopology (the
/// topology type of every env a scenario builds), registered with one call,
///
///     struct hop_penalty {  // 5% slower per level the ring crosses
///         static constexpr std::string_view name = "hop_penalty";
///         double ideal_step_time(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m, std::uint32_t k) const noexcept;
///         gpuplace::comm_result evaluate(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m, std::span<const gpuplace::gpu_id> gpus) const noexcept;
///         gpuplace::cost_bounds bounds(const gpuplace::TreeTopology& t, const gpuplace::ModelZoo& z, gpuplace::model_id m, std::uint32_t k) const noexcept;
///     };
///     gpuplace::register_comm_model<hop_penalty>("5% slower per level the ring crosses");
///
/// (M::from_config(c, path) makes it when M has one, else M{}), at namespace scope with
/// GPUPLACE_REGISTER_COMM_MODEL(M, about), or by a factory of comm_model_interface (a model written
/// in another language: Python's @gpuplace.register_comm_model). A scenario then names it,
/// `"comm": {"model": "hop_penalty"}`: the env's comm_model holds it, and every front door that
/// builds envs from scenarios (gpuplace-eval, the trainers, the planners, the benchmark, Python)
/// takes it. The registry lists it under kind "comm_model". Included by comm.hpp.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm.hpp"
#include "detail/named_store.hpp"
#include "error.hpp"

namespace gpuplace {

/// Makes a registered model from a scenario's "comm" (`path` names it in errors).
using comm_model_factory = std::function<std::shared_ptr<const comm_model_interface>(const comm_config&, std::string_view path)>;

/// A registered communication model: its name, what it is, its factory.
struct registered_comm_model {
    std::string name, about;
    comm_model_factory make;
};

namespace detail {
[[nodiscard]] inline named_store<registered_comm_model>& comm_models() {
    static named_store<registered_comm_model> s;
    return s;
}

/// A CommModel type M on TreeTopology as a comm_model_interface.
template <class M>
class comm_model_adaptor final : public comm_model_interface {
public:
    comm_model_adaptor(std::string name, M m) : name_(std::move(name)), m_(std::move(m)) {}
    [[nodiscard]] std::string_view name() const noexcept override { return name_; }
    [[nodiscard]] double ideal_step_time(const TreeTopology& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept override {
        return double(m_.ideal_step_time(t, z, m, k));
    }
    [[nodiscard]] comm_result evaluate(const TreeTopology& t, const ModelZoo& z, model_id m, std::span<const gpu_id> gpus) const noexcept override {
        return m_.evaluate(t, z, m, gpus);
    }
    [[nodiscard]] cost_bounds bounds(const TreeTopology& t, const ModelZoo& z, model_id m, std::uint32_t k) const noexcept override {
        return m_.bounds(t, z, m, k);
    }
    void check(const TreeTopology& t, std::string_view path) const override {
        if constexpr (requires { m_.check(t, path); }) m_.check(t, path);
    }

private:
    std::string name_;
    M m_;
};

inline std::shared_ptr<const comm_model_interface> make_registered_comm(const comm_config& c, std::string_view path) {
    const auto e = comm_models().find(c.model);
    if (!e) return nullptr;
    auto m = e->make(c, path);
    if (!m) throw ConfigError("config " + std::string(path) + "/model: comm model \"" + c.model + "\"'s factory made no model");
    return m;
}

inline std::string registered_comm_names() {
    std::string s;
    for (const auto& e : comm_models().all()) s += ", " + e->name;
    return s;
}
}  // namespace detail

/// Registers `make` as communication model `name`. Returns true (for an initializer at namespace
/// scope). ConfigError for an empty name, a built-in model's name, one registered already, or no
/// factory.
inline bool register_comm_model(const std::string& name, const std::string& about, comm_model_factory make) {
    if (name.empty()) throw ConfigError("comm model name \"\": empty");
    if (name == RingAllReduce::name || name == TreeRouteCost::name) throw ConfigError("comm model \"" + name + "\" is a built-in model");
    if (!make) throw ConfigError("comm model \"" + name + "\": no factory");
    detail::comm_models().add<ConfigError>(std::make_shared<const registered_comm_model>(registered_comm_model{name, about, std::move(make)}),
                                           "comm model");
    return true;
}

/// Registers CommModel type M under M::name: a scenario naming it gets M::from_config(its comm
/// config, path) when M has one, else M{}; M::check(topology, path) runs when an env is built, if
/// M has one.
template <class M>
    requires CommModel<M, TreeTopology>
bool register_comm_model(const std::string& about) {
    const std::string name(M::name);
    return register_comm_model(name, about, [name](const comm_config& c, std::string_view path) -> std::shared_ptr<const comm_model_interface> {
        return std::make_shared<const detail::comm_model_adaptor<M>>(name, comm_of_config<M>(c, path));
    });
}

/// Removes the model registered under `name`; returns whether there was one (envs built with it keep it).
inline bool unregister_comm_model(std::string_view name) { return detail::comm_models().remove(name); }

/// The registered models, in registration order.
[[nodiscard]] inline std::vector<std::shared_ptr<const registered_comm_model>> registered_comm_models() { return detail::comm_models().all(); }

/// The model registered under `name`, or null.
[[nodiscard]] inline std::shared_ptr<const registered_comm_model> find_comm_model(std::string_view name) {
    return detail::comm_models().find(name);
}

/// Registers CommModel type M (register_comm_model<M>()) when the program starts; at namespace scope.
#define GPUPLACE_REGISTER_COMM_MODEL(M, about)                                                              \
    [[maybe_unused]] static const bool GPUPLACE_DETAIL_CONCAT(gpuplace_registered_comm_model_, __LINE__) = \
        ::gpuplace::register_comm_model<M>(about)

}  // namespace gpuplace
