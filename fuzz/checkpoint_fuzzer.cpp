// Fuzzes checkpoint loading (gpuplace::rl::parse_checkpoint): only CheckpointError may escape,
// its message names the source; a checkpoint that loads gives a network that acts: on a zero
// observation with every action valid, and with only the last action valid, it picks a valid
// action.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <gpuplace/rl/checkpoint.hpp>

#include "fuzz_check.hpp"

namespace gp = gpuplace;

namespace {

/// A checkpoint whose obs_spec or layer sizes ask for a network of gigabytes. The loader builds the
/// network from them before it reads the parameters, so such a file makes it allocate that much
/// (std::bad_alloc, or the OOM killer): a known limitation (docs/reliability.md), skipped here so
/// that the fuzzer looks for other problems.
bool huge(std::string_view text) {
    const auto j = gp::detail::json::parse(text.begin(), text.end(), nullptr, false);
    if (!j.is_object()) return false;
    if (auto s = j.find("obs_spec"); s != j.end() && s->is_object())
        for (const auto& [k, v] : s->items())
            if (v.is_number() && v.get<double>() > 4096) return true;
    if (auto n = j.find("network"); n != j.end() && n->is_object())
        for (const char* key : {"hidden", "value_hidden"})
            if (auto h = n->find(key); h != n->end() && h->is_array()) {
                if (h->size() > 8) return true;
                for (const auto& v : *h)
                    if (v.is_number() && v.get<double>() > 1024) return true;
            }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (huge(text)) return 0;
    gp::rl::checkpoint c;
    try {
        c = gp::rl::parse_checkpoint<float>(text, "fuzz");
    } catch (const gp::CheckpointError& e) {
        FUZZ_CHECK(std::string_view(e.what()).rfind("checkpoint fuzz: ", 0) == 0, "message without the source: %s", e.what());
        return 0;
    }
    const auto& sp = c.network.spec();
    if (sp.obs_size() > (1u << 16)) return 0;
    std::vector<float> obs(sp.obs_size(), 0.0f);
    std::vector<std::uint8_t> mask(sp.num_actions(), 1);
    typename gp::rl::actor_critic::workspace w;
    const auto a = c.network.act(obs, mask, w);
    FUZZ_CHECK(a < sp.num_actions(), "action %zu of %zu", a, sp.num_actions());
    std::fill(mask.begin(), mask.end(), 0);
    mask.back() = 1;
    const auto b = c.network.act(obs, mask, w);
    FUZZ_CHECK(b + 1 == sp.num_actions(), "masked action %zu chosen (only %zu is valid)", b, sp.num_actions() - 1);
    return 0;
}
