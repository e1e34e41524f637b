#pragma once
/// \file detail/valid_actions.hpp
/// Counting and selecting the valid entries of an action mask row (entries 0 or 1, 1 = valid)
/// eight at a time, without a data-dependent branch per entry: the vector env's sampler of
/// uniformly random valid actions (sample_valid) and random_policy's k-th valid action. A scan
/// entry by entry costs a branch per entry and mispredicts about once per draw; how long it
/// takes also moves with where the compiler places its blocks (docs/performance.md, the action
/// sampler).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "rng.hpp"

namespace gpuplace::detail {

/// Sum of the 8 bytes of x when each is 0 or 1.
[[nodiscard]] constexpr std::uint32_t byte_sum01(std::uint64_t x) noexcept {
    return static_cast<std::uint32_t>((x * 0x0101010101010101ULL) >> 56);
}

/// The index (0-7) of the first byte of p greater than k, for bytes that do not decrease, are at
/// most 127, and end above k (k <= 127). Adding 127 - k to every byte sets the high bit of exactly
/// those greater than k, without a carry between bytes; the others are counted.
[[nodiscard]] constexpr std::uint32_t first_byte_above(std::uint64_t p, std::uint32_t k) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    return 8 - byte_sum01(((p + (127 - std::uint64_t{k}) * ones) & highs) >> 7);
}

/// 8 mask entries from p as the bytes of a word (little-endian: p[0] in the low byte).
[[nodiscard]] inline std::uint64_t load_word(const std::uint8_t* p) noexcept {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
}

/// Prefix counts of the valid entries of a group of up to 64 entries, m[0 .. n) (n >= 1): byte i
/// is the number of valid entries among m[0 .. 8i + 8), so the last byte is the group's count.
/// Reads nothing past m + n.
[[nodiscard]] inline std::uint64_t group_prefix(const std::uint8_t* m, std::size_t n) noexcept {
    std::uint64_t c = 0;
    if (n >= 64) {
        for (std::size_t i = 0; i < 8; ++i) c |= std::uint64_t{byte_sum01(load_word(m + 8 * i))} << (8 * i);
    } else {
        std::size_t i = 0;
        for (; 8 * i + 8 <= n; ++i) c |= std::uint64_t{byte_sum01(load_word(m + 8 * i))} << (8 * i);
        std::uint32_t tail = 0;
        for (std::size_t a = 8 * i; a < n; ++a) tail += m[a];
        c |= std::uint64_t{tail} << (8 * i);
    }
    return c * 0x0101010101010101ULL;  // at most 64 per byte: no carry
}

/// The index of the k-th valid entry (k = 0, 1, ...) of a group of up to 64 entries m[0 .. n)
/// whose prefix counts are p (group_prefix), k < the group's count: the word from the prefix
/// counts, then the entry from the word's own prefix counts, without a data-dependent branch (a
/// scan mispredicts about once per draw, which costs more than the arithmetic).
[[nodiscard]] inline std::size_t select_in_group(const std::uint8_t* m, std::size_t n, std::uint64_t p, std::uint32_t k) noexcept {
    const std::uint32_t i = first_byte_above(p, k);
    k -= static_cast<std::uint32_t>(((p << 8) >> (8 * i)) & 0xff);  // valid entries before word i
    const std::size_t b = 8 * std::size_t{i};
    std::uint64_t x = 0;
    if (b + 8 <= n) x = load_word(m + b);
    else
        for (std::size_t a = b; a < n; ++a) x |= std::uint64_t{m[a]} << (8 * (a - b));
    return b + first_byte_above(x * 0x0101010101010101ULL, k);
}

/// The number of valid entries of a mask row of A entries, each 0 or 1, counted 8 at a time.
[[nodiscard]] inline std::uint32_t count_valid(const std::uint8_t* mask, std::size_t A) noexcept {
    const std::size_t W = A / 8;
    std::uint32_t n = 0;
    for (std::size_t w = 0; w < W; ++w) n += byte_sum01(load_word(mask + 8 * w));
    for (std::size_t a = 8 * W; a < A; ++a) n += mask[a];
    return n;
}

/// The index of the k-th valid entry (k = 0, 1, ...; k < the number of valid entries) of a mask
/// row of A entries, each 0 or 1.
[[nodiscard]] inline std::size_t select_valid(const std::uint8_t* mask, std::size_t A, std::uint32_t k) noexcept {
    for (std::size_t g = 0;; g += 64) {
        const std::size_t n = std::min<std::size_t>(64, A - g);
        const auto p = group_prefix(mask + g, n);
        const auto c = static_cast<std::uint32_t>(p >> 56);
        if (k < c) return g + select_in_group(mask + g, n, p, k);
        k -= c;
    }
}

/// A uniformly random valid action of one mask row (entries 0 or 1, 1 = valid), or -1 if none is
/// valid. Rows of up to 128 entries (64 GPUs and DEFER): the valid entries are counted 8 at a time
/// in groups of 64 and the k-th is selected, branch-free within its group. Longer rows first try
/// 2 uniform draws over the row, kept when valid (rejection; O(1) when many actions are valid),
/// then count the row and select_valid(). Each stage is uniform over the valid actions, so the
/// mixture is too.
[[nodiscard]] inline std::int64_t sample_valid(const std::uint8_t* mask, std::size_t A, rng& r) noexcept {
    if (A <= 128) {
        const std::size_t n0 = std::min<std::size_t>(A, 64), n1 = A - n0;
        const auto p0 = group_prefix(mask, n0);
        const auto p1 = n1 ? group_prefix(mask + 64, n1) : 0;
        const auto c0 = static_cast<std::uint32_t>(p0 >> 56), c = c0 + static_cast<std::uint32_t>(p1 >> 56);
        if (c == 0) return -1;
        const auto k = static_cast<std::uint32_t>(r.below(c));
        if (k < c0) return static_cast<std::int64_t>(select_in_group(mask, n0, p0, k));
        return static_cast<std::int64_t>(64 + select_in_group(mask + 64, n1, p1, k - c0));
    }
    for (int t = 0; t < 2; ++t) {  // at load 1.0 most GPUs are busy: more tries mostly fail
        const auto a = r.below(A);
        if (mask[a]) return static_cast<std::int64_t>(a);
    }
    const std::uint32_t n = count_valid(mask, A);
    if (n == 0) return -1;
    return static_cast<std::int64_t>(select_valid(mask, A, static_cast<std::uint32_t>(r.below(n))));
}

}  // namespace gpuplace::detail
