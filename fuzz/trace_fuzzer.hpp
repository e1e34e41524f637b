#pragma once
// The body of the trace-reader fuzzers (trace_philly_fuzzer.cpp, trace_openb_fuzzer.cpp,
// trace_csv_fuzzer.cpp): the input is the trace file's text, read through a string stream.
//
// An optional first line "#! <options>" (a comment to every reader) sets trace_options, so that
// seeds stay readable: skip, drop, gpus=N (cap), cluster=N (cluster GPUs), load=X, scale=X,
// from=X, to=X (window), first=N (max jobs), model=K (zoo model K) or model=? (unknown).
//
// Checked: only TraceError (row: "fuzz:LINE:COLUMN: ...") or ConfigError (options) escape; a read
// trace has jobs sorted by submit time from 0, ids 0..n-1, finite positive work, GPU requests in
// [1, cap], shares in (0, 1], zoo models, and every row accounted for.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include <gpuplace/trace.hpp>

#include "fuzz_check.hpp"

namespace gpuplace::fuzz {

inline bool digits_then(std::string_view s, std::size_t& i, char end) {
    const auto b = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > b && i < s.size() && s[i++] == end;
}

/// "fuzz:12:3: ..." (the source, then line and column).
inline bool has_location(std::string_view msg) {
    if (msg.rfind("fuzz:", 0) != 0) return false;
    std::size_t i = 5;
    return digits_then(msg, i, ':') && digits_then(msg, i, ':');
}

inline int fuzz_trace(trace_format format, const std::uint8_t* data, std::size_t size) {
    static const ModelZoo zoo = ModelZoo::builtin();
    const std::string text(reinterpret_cast<const char*>(data), size);
    trace_options o;
    std::size_t cluster = 0;
    bool options_ok = true, unknown_model = false;
    if (text.rfind("#!", 0) == 0) {
        std::istringstream first(text.substr(2, text.find('\n') == std::string::npos ? std::string::npos : text.find('\n') - 2));
        std::string tok;
        while (first >> tok) {
            const auto eq = tok.find('=');
            const std::string key = tok.substr(0, eq), val = eq == std::string::npos ? "" : tok.substr(eq + 1);
            const double x = std::strtod(val.c_str(), nullptr);
            const auto n = static_cast<std::size_t>(std::strtoull(val.c_str(), nullptr, 10) % 100000);
            if (key == "skip") o.skip_bad_rows = true;
            else if (key == "drop") o.drop_oversized = true;
            else if (key == "gpus") o.max_gpus = static_cast<std::uint32_t>(n);
            else if (key == "cluster") cluster = n;
            else if (key == "load") o.target_load = x;
            else if (key == "scale") o.time_scale = x;
            else if (key == "from") o.window_start = x;
            else if (key == "to") o.window_end = x;
            else if (key == "first") o.max_jobs = n;
            else if (key == "model" && val == "?") o.model = "no such model", unknown_model = true;
            else if (key == "model") o.model = zoo[model_id(n % zoo.size())].name, unknown_model = false;  // the last model= wins
        }
        options_ok = o.time_scale > 0 && o.target_load >= 0 && o.window_end > o.window_start;
    }
    std::istringstream in(text);
    trace t;
    try {
        t = read_trace(format, in, "fuzz", zoo, o, cluster);
    } catch (const TraceError& e) {
        FUZZ_CHECK(has_location(e.what()), "trace error without file:line:column: %s", e.what());
        return 0;
    } catch (const ConfigError& e) {
        const bool overflow = std::string_view(e.what()).find(" overflow the submit time or work of job ") != std::string_view::npos;
        FUZZ_CHECK(!options_ok || unknown_model || overflow, "config error with valid options: %s", e.what());
        return 0;
    }
    FUZZ_CHECK(options_ok && !unknown_model, "bad options accepted");
    FUZZ_CHECK(t.rows == t.jobs.size() + t.skipped_bad + t.filtered + t.outside + t.dropped,
               "rows %zu != jobs %zu + bad %zu + filtered %zu + outside %zu + dropped %zu", t.rows, t.jobs.size(),
               t.skipped_bad, t.filtered, t.outside, t.dropped);
    FUZZ_CHECK(o.skip_bad_rows || t.skipped_bad == 0, "rows skipped without skip_bad_rows");
    FUZZ_CHECK(!o.max_jobs || t.jobs.size() <= o.max_jobs, "%zu jobs > max_jobs %zu", t.jobs.size(), o.max_jobs);
    const std::size_t cap = o.max_gpus ? o.max_gpus : cluster;
    for (std::size_t i = 0; i < t.jobs.size(); ++i) {
        const auto& j = t.jobs[i];
        FUZZ_CHECK(j.id == i, "job %zu has id %u", i, j.id);
        FUZZ_CHECK(std::isfinite(j.submit_time) && j.submit_time >= 0, "job %zu submit %g", i, j.submit_time);
        FUZZ_CHECK(i == 0 ? j.submit_time == 0 : j.submit_time >= t.jobs[i - 1].submit_time, "job %zu out of order", i);
        FUZZ_CHECK(std::isfinite(j.work) && j.work > 0, "job %zu work %g", i, j.work);
        FUZZ_CHECK(j.num_gpus >= 1 && (!cap || j.num_gpus <= cap), "job %zu requests %u GPUs (cap %zu)", i, j.num_gpus, cap);
        FUZZ_CHECK(j.model < zoo.size(), "job %zu model %u", i, unsigned(j.model));
        FUZZ_CHECK(j.gpu_fraction > 0 && j.gpu_fraction <= 1, "job %zu gpu_fraction %g", i, j.gpu_fraction);
    }
    return 0;
}

}  // namespace gpuplace::fuzz
