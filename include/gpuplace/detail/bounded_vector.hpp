#pragma once
/// \file detail/bounded_vector.hpp
/// A vector whose capacity is set before use: push_back() neither reallocates nor checks, so it
/// inlines to a store and an increment (std::vector's push_back keeps its reallocation path, and
/// a step's few pushes then cost a call each).

#include <cstddef>
#include <span>
#include <vector>

namespace gpuplace::detail {

template <class T>
class bounded_vector {
public:
    /// Makes room for at least n elements (keeps the contents).
    void reserve(std::size_t n) {
        if (n > buf_.size()) buf_.resize(n);
    }
    /// Appends x. Precondition: size() < capacity().
    void push_back(const T& x) noexcept { buf_[n_++] = x; }
    void clear() noexcept { n_ = 0; }

    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return buf_.size(); }
    [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
    [[nodiscard]] T* data() noexcept { return buf_.data(); }
    [[nodiscard]] const T* data() const noexcept { return buf_.data(); }
    [[nodiscard]] T* begin() noexcept { return buf_.data(); }
    [[nodiscard]] T* end() noexcept { return buf_.data() + n_; }
    [[nodiscard]] const T* begin() const noexcept { return buf_.data(); }
    [[nodiscard]] const T* end() const noexcept { return buf_.data() + n_; }
    [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return buf_[i]; }
    [[nodiscard]] operator std::span<const T>() const noexcept { return {buf_.data(), n_}; }

private:
    std::vector<T> buf_;
    std::size_t n_ = 0;
};

}  // namespace gpuplace::detail
