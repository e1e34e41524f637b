// Tests of include/gpuplace/atomic_file.hpp: a write replaces the file whole, the observer runs
// halfway with the target untouched, no temporary file is left, and a failure names the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gpuplace/atomic_file.hpp>
#include <gpuplace/error.hpp>

TEST_CASE("atomic file: a write replaces the file whole, the observer runs halfway") {
    const auto file = (std::filesystem::temp_directory_path() / "gpuplace_atomic_test.txt").string();
    gpuplace::write_file_atomic(file, "old");
    std::string seen;
    gpuplace::write_file_atomic(file, "new contents", [&](const std::string& f) {
        std::ifstream in(f);
        std::getline(in, seen);  // the target still holds the old contents halfway through
    });
    CHECK(seen == "old");
    std::ifstream in(file);
    std::string now;
    std::getline(in, now);
    CHECK(now == "new contents");
    CHECK_FALSE(std::filesystem::exists(gpuplace::atomic_temp_path(file)));
    CHECK_THROWS_WITH_AS(gpuplace::write_file_atomic("/no/such/dir/f.txt", "x"),
                         doctest::Contains("cannot write /no/such/dir/f.txt"), gpuplace::Error);
    std::filesystem::remove(file);
}
