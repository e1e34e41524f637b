#pragma once
/// \file detail/number_format.hpp
/// A double as text, laid out as JSON writes numbers (nlohmann::json's dump(): "0.0", "60.0",
/// "0.0001", "1e+300", "1.5e-05", "null" for NaN and infinities), for error messages of headers that do not include a JSON
/// library. The digits are the shortest that read back to the same double (std::to_chars);
/// nlohmann's Grisu2 prints the same digits except for some 17-digit values, whose last digit it
/// may print differently.

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace gpuplace::detail {

[[nodiscard]] inline std::string format_number(double v) {
    if (!std::isfinite(v)) return "null";  // as JSON writes NaN and infinities
    if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
    std::array<char, 64> buf{};
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific);
    std::string s(buf.data(), r.ptr), out;
    if (s[0] == '-') {
        out = "-";
        s.erase(0, 1);
    }
    const auto e = s.find('e');
    std::string digits = s.substr(0, 1) + (e > 2 ? s.substr(2, e - 2) : "");  // d.ddd -> dddd
    const int k = int(digits.size()), n = std::atoi(s.c_str() + e + 1) + 1;  // v = 0.digits x 10^n
    if (k <= n && n <= 15) return out + digits + std::string(std::size_t(n - k), '0') + ".0";
    if (0 < n && n <= 15) return out + digits.substr(0, std::size_t(n)) + "." + digits.substr(std::size_t(n));
    if (-4 < n && n <= 0) return out + "0." + std::string(std::size_t(-n), '0') + digits;
    out += digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    const int x = n - 1;
    out += x < 0 ? "e-" : "e+";
    if (std::abs(x) < 10) out += '0';
    return out + std::to_string(std::abs(x));
}

/// The decimals (at least `min_digits`, at most `max_digits`) with which "%.*f" prints a and b
/// differently: for messages that compare two numbers ("1.2996 h < 1.3004 h", not "1.300 h <
/// 1.300 h"). max_digits when even those print equal.
[[nodiscard]] inline int distinguishing_digits(double a, double b, int min_digits = 3, int max_digits = 9) {
    int d = min_digits;
    for (std::array<char, 64> x{}, y{}; d < max_digits; ++d) {
        std::snprintf(x.data(), x.size(), "%.*f", d, a);
        std::snprintf(y.data(), y.size(), "%.*f", d, b);
        if (std::string_view(x.data()) != std::string_view(y.data())) break;
    }
    return d;
}

}  // namespace gpuplace::detail
