"""The version is written once, in include/gpuplace/version.hpp: the top-level CMakeLists.txt and
python/pyproject.toml read it from there, and CHANGELOG.md has a section for it."""

import pathlib
import re

import gpuplace

ROOT = pathlib.Path(__file__).resolve().parents[2]


def header_version() -> str:
    text = (ROOT / "include/gpuplace/version.hpp").read_text()
    parts = [re.search(rf"version_{p} = (\d+);", text).group(1) for p in ("major", "minor", "patch")]
    string = re.search(r'version_string = "([^"]+)";', text).group(1)
    assert string == ".".join(parts), f"version.hpp: version_string {string!r} but numbers {parts}"
    return string


def test_the_package_and_its_core_report_the_header_version():
    v = header_version()
    assert gpuplace.__version__ == v  # python/pyproject.toml: the regex metadata provider
    assert gpuplace._core.core_version == v  # the C++ core's gpuplace::version_string


def test_the_builds_read_the_header_and_the_changelog_has_the_release():
    assert "include/gpuplace/version.hpp" in (ROOT / "CMakeLists.txt").read_text()
    pyproject = (ROOT / "python/pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and "../include/gpuplace/version.hpp" in pyproject
    assert re.search(rf"^## \[{re.escape(header_version())}\] - \d{{4}}-\d{{2}}-\d{{2}}$",
                     (ROOT / "CHANGELOG.md").read_text(), re.M)
