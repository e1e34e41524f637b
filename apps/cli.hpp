#pragma once
// apps/cli.hpp: the command line of every gpuplace program, on CLI11 (Debian libcli11-dev; only the
// programs use it, never the installed library). The same conventions everywhere:
//  - `--help` prints the usage on stdout and exits 0;
//  - a usage error (unknown flag, missing or malformed value, value out of range) prints
//    "<program>: <what is wrong>" and a pointer to --help on stderr and exits 2;
//  - the program's own errors (a bad scenario file, an unknown policy, an output path that cannot
//    be written) print "<program>: error: <what>" and exit 1, before any work starts;
//  - numbers are checked by whole() and number(), which print their ranges readably.

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>

#include <unistd.h>

#include <CLI/CLI.hpp>

namespace gpuplace::apps {

/// The exit status of a usage error.
inline constexpr int usage_error = 2;

/// Parses the command line: -1 when the program goes on, else the status to exit with (0 after
/// --help, usage_error after a usage error, with its message printed). The App's name (its
/// second constructor argument, e.g. "gpuplace-eval") names the program in messages.
inline int parse(CLI::App& app, int argc, const char* const* argv) {
    app.failure_message([](const CLI::App* a, const CLI::Error& e) {
        return a->get_name() + ": " + e.what() + "\nRun with --help for more information.\n";
    });
    try {
        app.parse(argc, argv);
        return -1;
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : usage_error;
    }
}

/// Reports a usage error found after parsing (e.g. two options that need each other) and returns
/// usage_error.
inline int usage_failure(const CLI::App& app, const std::string& what) {
    std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", app.get_name().c_str(), what.c_str());
    return usage_error;
}

/// `v` in %g form ("1e+12", "0.5").
inline std::string readable(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

/// A whole number in [lo, hi] (a value that is not one says so, e.g. "abc is not a whole number").
inline CLI::Validator whole(std::uint64_t lo, std::uint64_t hi = std::numeric_limits<std::uint64_t>::max()) {
    const std::string range = hi == std::numeric_limits<std::uint64_t>::max() ? std::to_string(lo) + " or more"
                                                                             : std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& v) -> std::string {
            const bool digits = !v.empty() && v.size() <= 20 && v.find_first_not_of("0123456789") == std::string::npos;
            errno = 0;
            const unsigned long long x = digits ? std::strtoull(v.c_str(), nullptr, 10) : 0;
            if (!digits || errno == ERANGE) return "\"" + v + "\" is not a whole number (expected " + range + ")";
            if (x < lo || x > hi) return v + " is out of range (expected " + range + ")";
            return {};
        },
        range);
}

/// A finite number in [lo, hi], or in (lo, hi] when `above` (e.g. a factor that must be > 0).
inline CLI::Validator number(double lo, double hi, bool above = false) {
    const bool open_top = hi == std::numeric_limits<double>::max();
    const std::string range = open_top ? (above ? "a number > " : "a number >= ") + readable(lo)
                              : (above ? "a number > " + readable(lo) + " and <= " : "a number in [" + readable(lo) + ", ") +
                                    readable(hi) + (above ? "" : "]");
    return CLI::Validator(
        [lo, hi, above, range](std::string& v) -> std::string {
            char* end = nullptr;
            const double x = v.empty() ? NAN : std::strtod(v.c_str(), &end);
            if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x)) return "\"" + v + "\" is not a number (expected " + range + ")";
            if (x < lo || x > hi || (above && x == lo)) return v + " is out of range (expected " + range + ")";
            return {};
        },
        range);
}

/// Whether a file can be made in the existing folder `dir` (errno says why not): a probe file made
/// and removed at once. Permissions alone do not tell (root passes them; /proc and read-only
/// filesystems refuse what they allow).
inline bool can_make_file_in(const std::filesystem::path& dir) {
    std::string probe = (dir / ".gpuplace-write-probe-XXXXXX").string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
}

/// "cannot write in <dir> (<errno's words>): expected a folder on a writable filesystem (not
/// under /proc, /sys or a read-only mount)".
inline std::string cannot_write_in(const std::string& dir) {
    return "cannot write in " + dir + " (" + std::generic_category().message(errno) +
           "): expected a folder on a writable filesystem (not under /proc, /sys or a read-only mount)";
}

/// Why a file cannot be written at `path` (given by `flag`), or "" when it can: a folder there, a
/// missing or unwritable folder it would go in.
inline std::string output_file_problem(const std::string& flag, const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) return flag + ": an empty file name";
    if (fs::is_directory(path, ec)) return flag + " " + path + ": " + path + " is a directory, not a file";
    const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (!fs::exists(dir, ec)) return flag + " " + path + ": the folder " + dir.string() + " does not exist";
    if (!fs::is_directory(dir, ec)) return flag + " " + path + ": " + dir.string() + " is a file, not a folder";
    if (fs::exists(path, ec) ? ::access(path.c_str(), W_OK) != 0 : ::access(dir.c_str(), W_OK | X_OK) != 0)
        return flag + " " + path + ": cannot write there (" + std::generic_category().message(errno) + ")";
    if (!can_make_file_in(dir)) return flag + " " + path + ": " + cannot_write_in(dir.string());  // the file is written beside itself, then renamed
    return {};
}

/// Why `path` (given by `flag`) cannot be used as an output folder (it, or the folders it would be
/// made in, cannot be written), or "" when it can. Nothing is left behind (can_make_file_in()).
inline std::string output_folder_problem(const std::string& flag, const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) return flag + ": an empty folder name";
    fs::path p = fs::absolute(path, ec);
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    if (!fs::is_directory(p, ec))
        return flag + " " + path + ": " + (p == fs::absolute(path, ec) ? path : p.string()) + " is a file, not a folder";
    if (::access(p.c_str(), W_OK | X_OK) != 0)
        return flag + " " + path + ": cannot write in " + p.string() + " (" + std::generic_category().message(errno) + ")";
    if (!can_make_file_in(p)) return flag + " " + path + ": " + cannot_write_in(p.string());
    return {};
}

/// Prints "<program>: error: <what>" and returns 1 (the status of the program's own errors).
inline int failure(const CLI::App& app, const std::string& what) {
    std::fprintf(stderr, "%s: error: %s\n", app.get_name().c_str(), what.c_str());
    return 1;
}

/// Prints "<program>: warning: <what>" (a value that is legal but surprising).
inline void warning(const CLI::App& app, const std::string& what) {
    std::fprintf(stderr, "%s: warning: %s\n", app.get_name().c_str(), what.c_str());
}

}  // namespace gpuplace::apps
