#pragma once
/// \file rl/state_file.hpp
/// Files of a trainer's whole state (to resume a run bit for bit): a JSON document stored as CBOR
/// (nlohmann/json's binary format), whose arrays of numbers are byte strings of little-endian
/// values, so that every float, double and random state comes back exactly.
///
/// File layout: the 8 bytes "GPSTATE\n", the FNV-1a 64-bit hash of the rest (8 bytes,
/// little-endian), then the CBOR document. A truncated or corrupted file fails the hash check with
/// a CheckpointError naming the file. Files are written atomically (atomic_file.hpp).

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "../atomic_file.hpp"
#include "../detail/input_file.hpp"
#include "../json/util.hpp"
#include "../error.hpp"

namespace gpuplace::rl {

namespace detail {

using gpuplace::detail::json;

inline constexpr std::string_view state_magic = "GPSTATE\n";

/// FNV-1a, 64 bits: detects truncation and corruption of a state file (not an adversary).
[[nodiscard]] inline std::uint64_t fnv1a64(std::string_view bytes) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

template <class T>
concept state_scalar = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::uint64_t> ||
                       std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint8_t>;

template <state_scalar T>
using state_bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint8_t>>;

/// The values as a CBOR byte string of little-endian values.
template <state_scalar T>
[[nodiscard]] json to_bytes(std::span<const T> v) {
    json::binary_t b;
    b.reserve(v.size() * sizeof(T));
    for (const T x : v) {
        const auto u = std::bit_cast<state_bits<T>>(x);
        for (std::size_t k = 0; k < sizeof(T); ++k) b.push_back(static_cast<std::uint8_t>(u >> (8 * k)));
    }
    return json::binary(std::move(b));
}

/// Reads values written by to_bytes(); `count` (if not ~0) is the number expected. Errors are
/// CheckpointErrors "state <source>: <path>: ...".
template <state_scalar T>
[[nodiscard]] std::vector<T> from_bytes(const json& j, std::string_view source, const std::string& path,
                                        std::size_t count = ~std::size_t{0}) {
    auto fail = [&](const std::string& what) {
        throw CheckpointError("state " + std::string(source) + ": " + path + ": " + what);
    };
    if (!j.is_binary()) fail("expected a byte string");
    const auto& b = j.get_binary();
    if (b.size() % sizeof(T) != 0) fail("has " + std::to_string(b.size()) + " bytes, not a whole number of values");
    const std::size_t n = b.size() / sizeof(T);
    if (count != ~std::size_t{0} && n != count) fail("has " + std::to_string(n) + " values, expected " + std::to_string(count));
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        state_bits<T> u = 0;
        for (std::size_t k = 0; k < sizeof(T); ++k) u |= static_cast<state_bits<T>>(static_cast<state_bits<T>>(b[i * sizeof(T) + k]) << (8 * k));
        v[i] = std::bit_cast<T>(u);
    }
    return v;
}

/// obj[key], or a CheckpointError naming the missing path.
[[nodiscard]] inline const json& state_get(const json& obj, std::string_view source, const std::string& path, const char* key) {
    if (!obj.is_object())
        throw CheckpointError("state " + std::string(source) + ": " + (path.empty() ? "/" : path) + ": expected an object");
    const auto it = obj.find(key);
    if (it == obj.end()) throw CheckpointError("state " + std::string(source) + ": " + path + "/" + key + ": missing");
    return *it;
}

/// obj[key] as an unsigned integer, or a CheckpointError.
[[nodiscard]] inline std::uint64_t state_uint(const json& obj, std::string_view source, const std::string& path, const char* key) {
    const auto& v = state_get(obj, source, path, key);
    if (!v.is_number_unsigned())
        throw CheckpointError("state " + std::string(source) + ": " + path + "/" + key + ": expected a non-negative integer, got " +
                              gpuplace::detail::short_dump(v));
    return v.get<std::uint64_t>();
}

/// The JSON paths where two documents differ (at most `max` of them, then "...").
[[nodiscard]] inline std::string differences(const json& stored, const json& now, std::size_t max = 6) {
    const auto patch = json::diff(stored, now);
    std::string out;
    std::size_t k = 0;
    for (const auto& op : patch) {
        if (k++ == max) return out + ", ...";
        const std::string p = op.value("path", "");
        const json* a = nullptr;
        try {
            a = &stored.at(json::json_pointer(p));
        } catch (const json::exception&) {
        }
        out += (out.empty() ? "" : ", ") + (p.empty() ? std::string("/") : p) + " (stored " +
               (a ? gpuplace::detail::short_dump(*a) : std::string("absent")) + ", now " +
               (op.contains("value") ? gpuplace::detail::short_dump(op["value"]) : std::string("absent")) + ")";
    }
    return out;
}

}  // namespace detail

/// Writes a state document to `file` atomically (`halfway`: see write_file_atomic()).
inline void write_state_file(const std::string& file, const gpuplace::detail::json& doc, const write_observer& halfway = {}) {
    const auto cbor = gpuplace::detail::json::to_cbor(doc);
    const std::string_view body(reinterpret_cast<const char*>(cbor.data()), cbor.size());
    std::string bytes(detail::state_magic);
    const std::uint64_t h = detail::fnv1a64(body);
    for (std::size_t k = 0; k < 8; ++k) bytes.push_back(static_cast<char>((h >> (8 * k)) & 0xff));
    bytes.append(body);
    gpuplace::write_file_atomic(file, bytes, halfway);
}

/// Reads a state file written by write_state_file(). A missing, truncated or corrupted file is a
/// CheckpointError naming the file and what is wrong.
[[nodiscard]] inline gpuplace::detail::json read_state_file(const std::string& file) {
    std::string bytes;
    if (!gpuplace::detail::read_input_file<CheckpointError>(file, bytes, file, "state ")) throw CheckpointError("state " + file + ": cannot open");
    const auto m = detail::state_magic.size();
    if (bytes.size() < m + 8 || std::string_view(bytes).substr(0, m) != detail::state_magic)
        throw CheckpointError("state " + file + ": not a gpuplace state file (" + std::to_string(bytes.size()) + " bytes)");
    std::uint64_t h = 0;
    for (std::size_t k = 0; k < 8; ++k) h |= std::uint64_t(static_cast<unsigned char>(bytes[m + k])) << (8 * k);
    const std::string_view body = std::string_view(bytes).substr(m + 8);
    if (detail::fnv1a64(body) != h)
        throw CheckpointError("state " + file + ": corrupted or truncated (" + std::to_string(bytes.size()) +
                              " bytes; its checksum does not match)");
    try {
        return gpuplace::detail::json::from_cbor(body.begin(), body.end());
    } catch (const gpuplace::detail::json::exception& e) {
        throw CheckpointError("state " + file + ": unreadable: " + e.what());
    }
}

}  // namespace gpuplace::rl
