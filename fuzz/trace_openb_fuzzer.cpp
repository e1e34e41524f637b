// Fuzzes the openb trace reader (gpuplace::read_trace); see trace_fuzzer.hpp.
#include "trace_fuzzer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return gpuplace::fuzz::fuzz_trace(gpuplace::trace_format::openb, data, size);
}
