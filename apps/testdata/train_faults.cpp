// gpuplace-train-faults (tests only, never installed): gpuplace-train with a fault injected through
// the training run's seams (apps/lib/train_program.hpp), for apps/testdata/resume_test.py:
//   gpuplace-train-faults <event>:<n>[:<signal>] <gpuplace-train's arguments...>
// At the n-th event the process sends itself SIGKILL, or INT, TERM, or INT2 (two SIGINTs: the
// second exits at once). Events: "iteration" (after an iteration's log row), "restart" (after a
// restart ended), "write" (halfway through any file the run writes), "write-state" (... of a
// state.bin), "write-checkpoint" (... of a ppo.json).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>

#include "../lib/train_program.hpp"

namespace {

struct kill_switch {
    std::string event, signal = "KILL";
    std::size_t at = 0;
    std::atomic<std::size_t> seen{0};

    /// Reads "<event>:<n>[:<signal>]"; false when malformed.
    bool parse(const std::string& v) {
        const auto a = v.find(':');
        if (a == std::string::npos) return false;
        const auto b = v.find(':', a + 1);
        event = v.substr(0, a);
        try {
            at = std::stoul(v.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1));
        } catch (const std::exception&) {
            return false;
        }
        if (b != std::string::npos) signal = v.substr(b + 1);
        return !event.empty() && at > 0;
    }
    void count(std::string_view e) {
        if (e != event || ++seen != at) return;
        if (signal == "INT") std::raise(SIGINT);
        else if (signal == "TERM") std::raise(SIGTERM);
        else if (signal == "INT2") {
            std::raise(SIGINT);
            std::raise(SIGINT);
        } else
            std::raise(SIGKILL);
    }
};

}  // namespace

int main(int argc, char** argv) {
    static kill_switch ks;
    if (argc < 2 || !ks.parse(argv[1])) {
        std::fprintf(stderr, "usage: gpuplace-train-faults <event>:<n>[:<signal>] <gpuplace-train arguments...>\n");
        return 2;
    }
    gpuplace::apps::train_seams seams;
    seams.on_event = [](std::string_view e, std::size_t) { ks.count(e); };
    seams.on_write = [](const std::string& file) {
        ks.count("write");
        if (file.ends_with("state.bin")) ks.count("write-state");
        if (file.ends_with("ppo.json")) ks.count("write-checkpoint");
    };
    argv[1] = argv[0];  // the program's name, then gpuplace-train's arguments
    return gpuplace::apps::train_main(argc - 1, argv + 1, seams);
}
