#pragma once
/// \file data.hpp
/// Where data files (traces, zoo files, co-location profiles) are found.
///
/// - A path starting with "$GPUPLACE_DATA/" names a file of the data folder: the folder given to
///   set_data_dir(), else the environment variable GPUPLACE_DATA, else the folder the build names
///   (the macro GPUPLACE_DATA_DIR: the repository's data/ for a build tree, <prefix>/share/gpuplace/data
///   once installed; the Python package points it at the data it ships).
/// - A relative path in a scenario file is relative to that file's folder (load_scenario() makes it
///   absolute); anywhere else, to the working directory.

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>

#include "error.hpp"

namespace gpuplace {

namespace detail {
struct data_dir_state {
    std::mutex m;
    std::string dir;
};
inline data_dir_state& data_dir_override() {
    static data_dir_state s;
    return s;
}
inline constexpr std::string_view data_prefix = "$GPUPLACE_DATA/";
}  // namespace detail

/// Sets the data folder for "$GPUPLACE_DATA/..." paths (an empty string restores the default).
inline void set_data_dir(std::string dir) {
    auto& s = detail::data_dir_override();
    const std::lock_guard lock(s.m);
    s.dir = std::move(dir);
}

/// The data folder: set_data_dir()'s, else $GPUPLACE_DATA, else the build's GPUPLACE_DATA_DIR (or,
/// where that folder does not exist, <prefix>/share/gpuplace/data beside an installed program).
/// ConfigError when none is known.
[[nodiscard]] inline std::string data_dir() {
    {
        auto& s = detail::data_dir_override();
        const std::lock_guard lock(s.m);
        if (!s.dir.empty()) return s.dir;
    }
    if (const char* d = std::getenv("GPUPLACE_DATA"); d && *d) return d;
#ifdef GPUPLACE_DATA_DIR
    // A program installed with `cmake --install` was built against the build tree's folder; where
    // that is gone, the folder installed beside it (<prefix>/bin/../share/gpuplace/data) is its own.
    if (std::error_code ec; !std::filesystem::is_directory(GPUPLACE_DATA_DIR, ec)) {
        const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        if (!ec) {
            auto beside = exe.parent_path().parent_path() / "share" / "gpuplace" / "data";
            if (std::filesystem::is_directory(beside, ec)) return beside.string();
        }
    }
    return GPUPLACE_DATA_DIR;
#else
    throw ConfigError("no data folder for \"$GPUPLACE_DATA/...\" paths: set the environment variable GPUPLACE_DATA "
                      "or call gpuplace::set_data_dir() (builds through the gpuplace CMake target know it)");
#endif
}

/// Whether a path names a file of the data folder ("$GPUPLACE_DATA/...").
[[nodiscard]] inline bool is_data_path(std::string_view path) noexcept { return path.starts_with(detail::data_prefix); }

/// The file a path names: "$GPUPLACE_DATA/x" in data_dir(); a relative path under base_dir when
/// it is given; anything else as it is.
[[nodiscard]] inline std::string resolve_data_path(std::string_view path, std::string_view base_dir = {}) {
    namespace fs = std::filesystem;
    if (is_data_path(path)) return (fs::path(data_dir()) / std::string(path.substr(detail::data_prefix.size()))).string();
    const fs::path p{std::string(path)};
    if (p.is_absolute() || base_dir.empty() || path.empty()) return std::string(path);
    return (fs::path(std::string(base_dir)) / p).lexically_normal().string();
}

/// A path as a scenario file at base_dir means it: a relative path under base_dir; a data-folder
/// path ("$GPUPLACE_DATA/..."), an absolute or an empty path as it is.
[[nodiscard]] inline std::string relative_to(std::string_view path, std::string_view base_dir) {
    if (is_data_path(path)) return std::string(path);
    return resolve_data_path(path, base_dir);
}

/// A file name for messages: absolute, so that a relative path shows where it was looked for.
[[nodiscard]] inline std::string display_path(const std::string& file) {
    std::error_code ec;
    const auto a = std::filesystem::absolute(file, ec);
    return ec ? file : a.lexically_normal().string();
}

}  // namespace gpuplace
