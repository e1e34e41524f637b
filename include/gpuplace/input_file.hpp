#pragma once
/// \file input_file.hpp
/// How every file reader of the library reads a file, for programs of one's own: only a regular
/// file, and at most max_input_bytes of it (detail/input_file.hpp; a device, a FIFO or a socket
/// would give an endless or empty stream, or wait for a writer).

#include <concepts>
#include <cstdint>
#include <string>

#include "data.hpp"
#include "detail/input_file.hpp"
#include "error.hpp"

namespace gpuplace {

/// The most bytes a reader takes from one input file: 1 GiB (read_input_file()).
inline constexpr std::uintmax_t max_input_bytes = detail::max_input_bytes;

/// Reads the whole of `file` as every file reader of the library does: only a regular file of at
/// most max_input_bytes. A folder, a device, a FIFO or a socket, or a larger file, is an E naming
/// it ("<what> /dev/zero is a character device, not a regular file (...)"); a file that cannot be
/// opened, E("cannot open <what> \"<file>\"").
template <std::derived_from<Error> E = Error>
[[nodiscard]] std::string read_input_file(const std::string& file, const std::string& what) {
    std::string text;
    const std::string shown = display_path(file), kind = what.empty() ? "" : what + " ";
    if (!detail::read_input_file<E>(file, text, shown, kind)) throw E("cannot open " + kind + "\"" + shown + "\"");
    return text;
}

}  // namespace gpuplace
