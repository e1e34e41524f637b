#pragma once
/// \file detail/input_file.hpp
/// How every file reader of the library and the programs takes a file: only a regular file, and
/// at most max_input_bytes of it. A folder opens as an empty stream on Linux, /dev/zero never
/// ends and a FIFO waits for a writer, so each is refused by name before it is opened, as is a
/// file larger than the cap (the error states the cap).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace gpuplace::detail {

/// The most bytes read from one input file (a scenario, zoo, topology, co-location profile, trace,
/// training config, checkpoint, training state or benchmark result): 1 GiB.
inline constexpr std::uintmax_t max_input_bytes = std::uintmax_t{1} << 30;

/// `n` bytes as a message gives it: "1 GiB (1073741824 bytes)", "5000 bytes".
[[nodiscard]] inline std::string bytes_text(std::uintmax_t n) {
    if (n >= (std::uintmax_t{1} << 30) && n % (std::uintmax_t{1} << 30) == 0)
        return std::to_string(n >> 30) + " GiB (" + std::to_string(n) + " bytes)";
    return std::to_string(n) + " bytes";
}

/// Why `file` (shown as `shown`) cannot be read as an input file, or "" when it can or does not
/// exist (its reader's open then says so): a folder, a device, a FIFO or a socket, or a file of
/// more than `cap` bytes.
[[nodiscard]] inline std::string input_file_problem(const std::string& file, const std::string& shown,
                                                    std::uintmax_t cap = max_input_bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto type = fs::status(file, ec).type();
    const char* what = nullptr;
    switch (type) {
        case fs::file_type::regular: break;
        case fs::file_type::none:
        case fs::file_type::not_found: return {};
        case fs::file_type::directory: return shown + " is a directory, not a file";
        case fs::file_type::character: what = "a character device"; break;
        case fs::file_type::block: what = "a block device"; break;
        case fs::file_type::fifo: what = "a named pipe (FIFO)"; break;
        case fs::file_type::socket: what = "a socket"; break;
        default: what = "not a regular file"; break;
    }
    if (what) return shown + " is " + what + ", not a regular file (an input must be a file of at most " + bytes_text(cap) + ")";
    const auto n = fs::file_size(file, ec);
    if (!ec && n > cap) return shown + " has " + std::to_string(n) + " bytes, more than the " + bytes_text(cap) + " an input file may have";
    return {};
}

/// Reads the whole of input file `file` into `out`: false when it cannot be opened (the caller
/// says so in its words); E(prefix + why) when it is no input file (input_file_problem()) or
/// grows past `cap` while it is read.
template <class E>
[[nodiscard]] bool read_input_file(const std::string& file, std::string& out, const std::string& shown, const std::string& prefix,
                                   std::uintmax_t cap = max_input_bytes) {
    if (auto why = input_file_problem(file, shown, cap); !why.empty()) throw E(prefix + why);
    std::ifstream in(file, std::ios::binary);
    if (!in) return false;
    out.clear();
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        out.append(buf, static_cast<std::size_t>(in.gcount()));
        if (out.size() > cap) throw E(prefix + shown + " has more than the " + bytes_text(cap) + " an input file may have");
    }
    return true;
}

}  // namespace gpuplace::detail
