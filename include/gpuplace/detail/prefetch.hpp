#pragma once
/// \file detail/prefetch.hpp
/// A hint that memory will be read soon, so that the cache fetches it while other work runs (a
/// no-op where the compiler has no such hint). It never changes a result.

#include <cstddef>

namespace gpuplace::detail {

/// Asks for every 64-byte line of [p, p + bytes) to be fetched into the cache.
inline void prefetch_range(const void* p, std::size_t bytes) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    const auto* c = static_cast<const char*>(p);
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off);
#else
    (void)p;
    (void)bytes;
#endif
}

}  // namespace gpuplace::detail
