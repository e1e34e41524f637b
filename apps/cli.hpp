#pragma once
// apps/cli.hpp: the command line of every gpuplace program, on CLI11 (Debian libcli11-dev; only the
// programs use it, never the installed library). The same conventions everywhere:
//  - `--help` prints the usage on stdout and exits 0;
//  - a usage error (unknown flag, missing or malformed value, value out of range) prints
//    "<program>: <what is wrong>" and a pointer to --help on stderr and exits 2;
//  - the program's own errors (a bad scenario file, an unknown policy) exit 1.

#include <cstdio>
#include <string>

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

}  // namespace gpuplace::apps
