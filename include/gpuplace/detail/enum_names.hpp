#pragma once
/// \file detail/enum_names.hpp
/// One enum <-> name table per enum: specialise enum_names<E> with a constexpr array `values` of
/// {value, name} pairs in declaration order; enum_name(), enum_from_name() and enum_name_list()
/// read it, so to_string(), the JSON readers and their "allowed: ..." messages share one list.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gpuplace::detail {

template <class E>
struct enum_names;  ///< specialised per enum: static constexpr std::array<std::pair<E, std::string_view>, N> values

template <class E>
concept named_enum = requires { enum_names<E>::values; };

/// The name of a value ("?" for a value outside the table).
template <named_enum E>
[[nodiscard]] constexpr std::string_view enum_name(E e) noexcept {
    for (const auto& [v, n] : enum_names<E>::values)
        if (v == e) return n;
    return "?";
}

/// The value of a name, if it is one.
template <named_enum E>
[[nodiscard]] constexpr std::optional<E> enum_from_name(std::string_view name) noexcept {
    for (const auto& [v, n] : enum_names<E>::values)
        if (n == name) return v;
    return std::nullopt;
}

/// Every name, in order, joined by ", " (for "allowed: ..." messages).
template <named_enum E>
[[nodiscard]] std::string enum_name_list() {
    std::string s;
    for (const auto& [v, n] : enum_names<E>::values) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}

}  // namespace gpuplace::detail
