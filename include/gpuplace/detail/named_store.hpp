#pragma once
/// \file detail/named_store.hpp
/// The store behind each registry of things of one's own (disciplines, trace formats, workload
/// kinds): entries with a `name` and an `about`, kept in registration order behind a mutex, each
/// shared so that a reader keeps what it found after the entry is removed.

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

/// A name unique to its line, for the static initializers of the GPUPLACE_REGISTER_* macros of
/// each registry: GPUPLACE_DETAIL_CONCAT(prefix_, __LINE__).
#define GPUPLACE_DETAIL_CONCAT2(a, b) a##b
#define GPUPLACE_DETAIL_CONCAT(a, b) GPUPLACE_DETAIL_CONCAT2(a, b)

namespace gpuplace::detail {

template <class Entry>
class named_store {
public:
    using pointer = std::shared_ptr<const Entry>;

    /// Adds `e`; throws E "<what> "<name>" is registered already (<about>)" when its name is
    /// taken (the caller's error type: this header includes no public one).
    template <class E>
    void add(pointer e, std::string_view what) {
        std::lock_guard lock(m_);
        for (const auto& x : v_)
            if (x->name == e->name) throw E(std::string(what) + " \"" + e->name + "\" is registered already (" + x->about + ")");
        v_.push_back(std::move(e));
    }
    /// Removes the entry named `name`; returns whether there was one.
    bool remove(std::string_view name) {
        std::lock_guard lock(m_);
        return std::erase_if(v_, [&](const pointer& x) { return x->name == name; }) > 0;
    }
    /// The entry named `name`, or null.
    [[nodiscard]] pointer find(std::string_view name) const {
        std::lock_guard lock(m_);
        for (const auto& x : v_)
            if (x->name == name) return x;
        return nullptr;
    }
    /// Every entry, in registration order.
    [[nodiscard]] std::vector<pointer> all() const {
        std::lock_guard lock(m_);
        return v_;
    }

private:
    mutable std::mutex m_;
    std::vector<pointer> v_;
};

}  // namespace gpuplace::detail
