// The training run (training_run.hpp): a restart's state files (its network and normalisers, the latest state and
// the previous one).

#include "training_run.hpp"
#include "training_run_internal.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gpuplace/json.hpp>
#include <gpuplace/input_file.hpp>
#include <gpuplace/detail/number_format.hpp>
#include <gpuplace/rl/checkpoint.hpp>
#include <gpuplace/rl/state_file.hpp>
#include <gpuplace/version.hpp>

namespace gpuplace::rl {

namespace run_internal {

/// A network's parameters and normalisers as a state document (the same layout as save_state()'s).
[[nodiscard]] json network_state(const actor_critic& net) {
    json parts = json::array(), norms = json::array();
    for (const auto& [name, n] : net.named()) parts.push_back(detail::to_bytes<float>({n->params().data(), std::size_t(n->params().size())}));
    for (const auto& r : net.normalizers()) {
        const double c = r.count();
        norms.push_back({{"mean", detail::to_bytes<double>({r.mean().data(), std::size_t(r.mean().size())})},
                         {"var", detail::to_bytes<double>({r.var().data(), std::size_t(r.var().size())})},
                         {"count", detail::to_bytes<double>({&c, 1})}});
    }
    return {{"parts", std::move(parts)}, {"normalizers", std::move(norms)}};
}

/// Sets a network (of the right shape) from network_state().
void set_network_state(actor_critic& net, const json& j, const std::string& src, const std::string& path) {
    const auto& parts = detail::state_get(j, src, path, "parts");
    auto named = net.named();
    if (!parts.is_array() || parts.size() != named.size())
        throw CheckpointError("state " + src + ": " + path + "/parts: expected " + std::to_string(named.size()) + " parts");
    std::vector<std::vector<float>> values;
    for (std::size_t k = 0; k < named.size(); ++k)
        values.push_back(detail::from_bytes<float>(parts[k], src, path + "/parts/" + std::to_string(k), named[k].second->num_params()));
    const auto& norms = detail::state_get(j, src, path, "normalizers");
    if (!norms.is_array() || norms.size() != net.normalizers().size())
        throw CheckpointError("state " + src + ": " + path + "/normalizers: wrong number of normalizers");
    for (std::size_t k = 0; k < named.size(); ++k) std::copy(values[k].begin(), values[k].end(), named[k].second->params().data());
    for (std::size_t k = 0; k < norms.size(); ++k) {
        auto& r = net.normalizers()[k];
        const auto n = std::size_t(r.mean().size());
        const std::string p = path + "/normalizers/" + std::to_string(k);
        const auto mean = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "mean"), src, p + "/mean", n);
        const auto var = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "var"), src, p + "/var", n);
        const auto count = detail::from_bytes<double>(detail::state_get(norms[k], src, p, "count"), src, p + "/count", 1);
        r.set(Eigen::Map<const Eigen::VectorXd>(mean.data(), Eigen::Index(n)),
              Eigen::Map<const Eigen::VectorXd>(var.data(), Eigen::Index(n)), count[0]);
    }
}

/// Reads a restart's state file, falling back to the previous one (state.prev.bin) when the
/// latest cannot be read. Returns null when neither exists.
[[nodiscard]] json read_restart_state(const std::string& dir, std::string& used,
                                                               const std::function<void(const std::string&)>& print) {
    namespace fs = std::filesystem;
    const std::string cur = dir + "/state.bin", prev = dir + "/state.prev.bin";
    if (!fs::exists(cur) && !fs::exists(prev)) return nullptr;
    std::string why;
    if (fs::exists(cur)) {
        try {
            used = cur;
            return read_state_file(cur);
        } catch (const CheckpointError& e) {
            if (!fs::exists(prev)) throw;
            why = e.what();
        }
    }
    used = prev;
    try {
        auto j = read_state_file(prev);
        if (print && !why.empty()) print(why + "; using the previous state " + prev + "\n");
        return j;
    } catch (const CheckpointError& e) {
        if (why.empty()) throw;
        throw CheckpointError(why + "; the previous state cannot be used either: " + e.what());
    }
}

/// Writes a restart's state: the last one becomes state.prev.bin, then state.bin is written atomically.
void write_restart_state(const std::string& dir, const json& doc, const write_observer& on_write) {
    namespace fs = std::filesystem;
    const std::string cur = dir + "/state.bin", prev = dir + "/state.prev.bin";
    std::error_code ec;
    if (fs::exists(cur)) fs::rename(cur, prev, ec);
    write_state_file(cur, doc, on_write);
    if (!fs::exists(dir + state_mark, ec))
        write_file_atomic(dir + state_mark, "this restart saved its training state in state.bin (gpuplace-train --resume reads it)\n");
}

}  // namespace run_internal

}  // namespace gpuplace::rl
