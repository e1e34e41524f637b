#pragma once
/// \file detail/input_file.hpp
/// What the file readers check before opening a file: a folder opens as an empty stream on Linux,
/// so each reader refuses it by name instead of reporting an empty or truncated document.

#include <filesystem>
#include <string>
#include <system_error>

namespace gpuplace::detail {

/// "<shown> is a directory, not a file" when `file` is a folder, else "".
[[nodiscard]] inline std::string directory_not_file(const std::string& file, const std::string& shown) {
    std::error_code ec;
    if (!std::filesystem::is_directory(file, ec)) return {};
    return shown + " is a directory, not a file";
}

[[nodiscard]] inline std::string directory_not_file(const std::string& file) { return directory_not_file(file, file); }

}  // namespace gpuplace::detail
