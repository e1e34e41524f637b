#pragma once
/// \file json/util.hpp
/// Path-aware JSON reading: every error names the JSON path and the offending value.

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../error.hpp"

namespace gpuplace::detail {

using json = nlohmann::json;

[[nodiscard]] inline std::string short_dump(const json& v) {
    std::string s = v.dump();
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

/// Throws if `obj` is not an object or has a key that is not in `allowed`.
inline void check_keys(const json& obj, std::string_view path, std::initializer_list<std::string_view> allowed) {
    if (!obj.is_object()) config_fail(path, "expected an object, got " + short_dump(obj));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool ok = false;
        for (auto a : allowed) ok = ok || (a == it.key());
        if (!ok) {
            std::string list;
            for (auto a : allowed) {
                if (!list.empty()) list += ", ";
                list += a;
            }
            config_fail(join_path(path, it.key()), "unknown key \"" + it.key() + "\" (allowed: " + list + ")");
        }
    }
}

/// Reads a number at obj[key] (if present) into `out`, checking lo <= value <= hi.
inline void read_number(const json& obj, std::string_view path, const char* key, double& out,
                        double lo = -1e300, double hi = 1e300) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    const auto p = join_path(path, key);
    if (!it->is_number()) config_fail(p, "expected a number, got " + short_dump(*it));
    const double v = it->get<double>();
    if (!(v >= lo && v <= hi))
        config_fail(p, "value " + short_dump(*it) + " out of range [" + json(lo).dump() + ", " + json(hi).dump() + "]");
    out = v;
}

/// Reads an integer at obj[key] (if present) into `out`, checking lo <= value <= hi.
template <class Int>
inline void read_int(const json& obj, std::string_view path, const char* key, Int& out, long long lo, long long hi) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    const auto p = join_path(path, key);
    if (!it->is_number_integer()) config_fail(p, "expected an integer, got " + short_dump(*it));
    const long long v = it->get<long long>();
    if (v < lo || v > hi)
        config_fail(p, "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = static_cast<Int>(v);
}

/// A range [lo, hi] of numbers with min <= lo <= hi <= max, at `path` (errors name it).
[[nodiscard]] inline std::pair<double, double> read_range(const json& v, std::string_view path, double min, double max) {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
        config_fail(path, "expected a number or a range [lo, hi], got " + short_dump(v));
    const double lo = v[0].get<double>(), hi = v[1].get<double>();
    if (!(lo >= min && hi <= max && lo <= hi))
        config_fail(path, "range " + short_dump(v) + " is not within [" + json(min).dump() + ", " + json(max).dump() + "] with lo <= hi");
    return {lo, hi};
}

/// One string, or a non-empty array of strings, at `path`.
[[nodiscard]] inline std::vector<std::string> read_names(const json& v, std::string_view path, std::string_view what) {
    std::vector<std::string> out;
    if (v.is_string()) out.push_back(v.get<std::string>());
    else if (v.is_array() && !v.empty())
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_string()) config_fail(join_path(path, std::to_string(i)), "expected " + std::string(what) + ", got " + short_dump(v[i]));
            out.push_back(v[i].get<std::string>());
        }
    else
        config_fail(path, "expected " + std::string(what) + " or a non-empty array of them, got " + short_dump(v));
    return out;
}

inline void read_bool(const json& obj, std::string_view path, const char* key, bool& out) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    if (!it->is_boolean()) config_fail(join_path(path, key), "expected true or false, got " + short_dump(*it));
    out = it->get<bool>();
}

inline void read_string(const json& obj, std::string_view path, const char* key, std::string& out) {
    auto it = obj.find(key);
    if (it == obj.end()) return;
    if (!it->is_string()) config_fail(join_path(path, key), "expected a string, got " + short_dump(*it));
    out = it->get<std::string>();
}

/// Byte offset (1-based, as nlohmann's parse_error::byte) just past the first number token equal to
/// `token` outside a string in `text`, or 0 when not found. Used to place a number-overflow error.
[[nodiscard]] inline std::size_t number_token_end(std::string_view text, std::string_view token) noexcept {
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (text.substr(i, token.size()) == token) {
            return i + token.size();
        }
    }
    return 0;
}

/// The message of a JSON syntax error or of a number too large for a double (nlohmann's
/// out_of_range 406, e.g. 1e400), as "invalid JSON at byte N: <what>".
[[nodiscard]] inline std::string json_error_text(std::string_view text, const json::exception& e) {
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&e)) {
        std::string msg = "invalid JSON at byte " + std::to_string(pe->byte) + ": " + e.what();
        // the token the parser stopped in: Infinity and NaN (Python's json.dumps writes them for
        // non-finite floats) are not JSON
        std::size_t b = std::min<std::size_t>(pe->byte > 0 ? pe->byte - 1 : 0, text.size());
        while (b > 0 && (std::isalnum(static_cast<unsigned char>(text[b - 1])) || text[b - 1] == '-' || text[b - 1] == '+')) --b;
        const auto token = text.substr(b, 9);
        if (token.starts_with("Infinity") || token.starts_with("-Infinity") || token.starts_with("NaN"))
            msg += " (JSON has no Infinity or NaN: every number must be finite)";
        return msg;
    }
    const std::string what = e.what();
    std::size_t byte = 0;
    if (const auto open = what.find('\''), close = what.rfind('\''); open != std::string::npos && close > open)
        byte = number_token_end(text, std::string_view(what).substr(open + 1, close - open - 1));
    return "invalid JSON at byte " + std::to_string(byte) + ": " + what + " (a number too large for a double)";
}

/// Input that is not JSON text before any syntax is read (a binary file), or JSON whose object has a
/// key twice: `path` is the JSON path of the duplicate key ("" for the first), `what` the problem.
struct json_input_error {
    std::string path, what;
};

/// Byte offset (0-based) of the first byte of `text` that is not UTF-8 text (a NUL byte, or a byte
/// outside a well-formed UTF-8 sequence), or npos when every byte is.
[[nodiscard]] inline std::size_t first_non_text_byte(std::string_view text) noexcept {
    const auto* u = reinterpret_cast<const unsigned char*>(text.data());
    for (std::size_t i = 0; i < text.size();) {
        const unsigned c = u[i];
        std::size_t n = 0;
        unsigned lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
        if (c == 0) return i;
        if (c < 0x80) n = 0;
        else if (c >= 0xc2 && c <= 0xdf) n = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;  // no UTF-16 surrogates
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        } else
            return i;
        if (n > 0 && i + n >= text.size()) return i;  // cut short
        for (std::size_t k = 1; k <= n; ++k) {
            const unsigned b = u[i + k];
            if (b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xbfu)) return i;
        }
        i += n + 1;
    }
    return std::string_view::npos;
}

/// Parses JSON text, refusing a binary file and a key that appears twice in an object (nlohmann
/// would keep the last value silently); both throw json_input_error. Syntax errors throw nlohmann's
/// exceptions. The one parser of every JSON document gpuplace reads (parse_json, rl::parse_checkpoint).
[[nodiscard]] inline json parse_json_strict(std::string_view text) {
    if (const auto b = first_non_text_byte(text); b != std::string_view::npos) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", unsigned(static_cast<unsigned char>(text[b])));
        throw json_input_error{"", "not a JSON text file: byte " + std::to_string(b + 1) + " is " + hex +
                                       ", which is not UTF-8 text (a binary file?)"};
    }
    struct frame {
        bool array = false;
        std::size_t count = 0;  // arrays: elements so far
        std::string label;      // this container's path
        std::string key;        // objects: the current key
        std::vector<std::string> keys;
    };
    std::vector<frame> stack;
    auto open = [&](bool array) {
        frame f;
        f.array = array;
        if (!stack.empty()) {
            auto& top = stack.back();
            f.label = join_path(top.label, top.array ? std::to_string(top.count++) : top.key);
        }
        stack.push_back(std::move(f));
    };
    const json::parser_callback_t check = [&](int, json::parse_event_t ev, json& parsed) {
        switch (ev) {
            case json::parse_event_t::object_start: open(false); break;
            case json::parse_event_t::array_start: open(true); break;
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                if (!stack.empty()) stack.pop_back();
                break;
            case json::parse_event_t::key: {
                auto& top = stack.back();
                auto k = parsed.get<std::string>();
                if (std::find(top.keys.begin(), top.keys.end(), k) != top.keys.end())
                    throw json_input_error{join_path(top.label, k), "duplicate key \"" + k +
                                                                        "\" (a key may appear only once in an object)"};
                top.keys.push_back(k);
                top.key = std::move(k);
                break;
            }
            case json::parse_event_t::value:
                if (!stack.empty() && stack.back().array) ++stack.back().count;
                break;
        }
        return true;
    };
    return json::parse(text.begin(), text.end(), check);
}

/// Parses JSON text; a syntax error, a number too large for a double, a binary file or a duplicate
/// key becomes a ConfigError naming the source and the byte offset or the JSON path.
[[nodiscard]] inline json parse_json(std::string_view text, std::string_view source) {
    try {
        return parse_json_strict(text);
    } catch (const json_input_error& e) {
        throw ConfigError(std::string(source) + ": " + (e.path.empty() ? "" : "config " + e.path + ": ") + e.what);
    } catch (const json::parse_error& e) {
        throw ConfigError(std::string(source) + ": " + json_error_text(text, e));
    } catch (const json::out_of_range& e) {
        throw ConfigError(std::string(source) + ": " + json_error_text(text, e));
    }
}

}  // namespace gpuplace::detail
