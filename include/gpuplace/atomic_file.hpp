#pragma once
/// \file atomic_file.hpp
/// Atomic file writes: the bytes go to a temporary file in the target's folder, which is flushed
/// to disk (fsync) and renamed over the target, so that a reader (or a run resumed after a crash)
/// finds either the old file or the new one, never a mixture. A caller may pass an observer that
/// runs halfway through the write (fault injection: a test kills the process there).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#define GPUPLACE_POSIX_FILES 1
#else
#include <fstream>
#endif

#include "error.hpp"

namespace gpuplace {

/// Called halfway through an atomic write with the target's file name: half of the bytes are in
/// the temporary file, the target is untouched (tests inject faults here).
using write_observer = std::function<void(const std::string& file)>;

/// The temporary file an atomic write of `file` uses: ".<name>.tmp" in the same folder.
[[nodiscard]] inline std::filesystem::path atomic_temp_path(const std::filesystem::path& file) {
    return file.parent_path() / ("." + file.filename().string() + ".tmp");
}

/// Writes `bytes` to `file` atomically (see the file comment); `halfway`, when set, runs halfway
/// through. Throws Error naming the file.
inline void write_file_atomic(const std::string& file, std::string_view bytes, const write_observer& halfway = {}) {
    namespace fs = std::filesystem;
    const fs::path target(file);
    const fs::path tmp = atomic_temp_path(target);
    auto fail = [&](const std::string& what) { throw Error("cannot write " + file + ": " + what); };
    const auto& hook = halfway;
    const std::size_t half = bytes.size() / 2;
#ifdef GPUPLACE_POSIX_FILES
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail(std::strerror(errno));
    auto put = [&](std::string_view part) {
        while (!part.empty()) {
            const auto n = ::write(fd, part.data(), part.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                const int e = errno;
                ::close(fd);
                fail(std::strerror(e));
            }
            part.remove_prefix(static_cast<std::size_t>(n));
        }
    };
    put(bytes.substr(0, half));
    if (hook) hook(file);
    put(bytes.substr(half));
    if (::fsync(fd) != 0) {
        const int e = errno;
        ::close(fd);
        fail(std::strerror(e));
    }
    if (::close(fd) != 0) fail(std::strerror(errno));
    if (std::rename(tmp.c_str(), target.c_str()) != 0) fail(std::strerror(errno));
    // the rename itself reaches the disk once the folder is synced
    const auto dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
#else
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail("cannot open " + tmp.string());
        out.write(bytes.data(), std::streamsize(half));
        if (hook) hook(file);
        out.write(bytes.data() + half, std::streamsize(bytes.size() - half));
        out.flush();
        if (!out) fail("write failed");
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec) fail(ec.message());
#endif
}

}  // namespace gpuplace
