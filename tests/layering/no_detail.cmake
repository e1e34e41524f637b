# The programs (apps/) and the Python bindings (python/cpp/) use the library's public API only:
# no gpuplace detail:: name and no gpuplace/detail/ header (pybind11's py::detail is not ours); and
# no header of the installed library includes the training run (src/training_run/) or the benchmark
# (src/bench/).
#   cmake -DSOURCE_DIR=<repository> -P tests/layering/no_detail.cmake      (ctest: layering_no_detail)
file(GLOB_RECURSE _files
     "${SOURCE_DIR}/apps/*.cpp" "${SOURCE_DIR}/apps/*.hpp"
     "${SOURCE_DIR}/python/cpp/*.cpp" "${SOURCE_DIR}/python/cpp/*.hpp")
set(_found "")
foreach(_f ${_files})
  file(STRINGS "${_f}" _lines REGEX "detail::|gpuplace/detail/")
  foreach(_line ${_lines})
    string(REPLACE "pybind11::detail::" "" _rest "${_line}")
    string(REPLACE "py::detail::" "" _rest "${_rest}")
    if(_rest MATCHES "detail::|gpuplace/detail/")
      file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_f}")
      string(STRIP "${_line}" _line)
      string(APPEND _found "  ${_rel}: ${_line}\n")
    endif()
  endforeach()
endforeach()
if(_found)
  message(FATAL_ERROR "apps/ and python/cpp/ use gpuplace's detail (make what they need public API):\n${_found}")
endif()
# No header of the installed library includes the training run (src/training_run/) or the benchmark (src/bench/).
file(GLOB_RECURSE _headers "${SOURCE_DIR}/include/*.hpp")
foreach(_h ${_headers})
  file(STRINGS "${_h}" _inc REGEX "#include.*(training_run|[\"<]bench/)")
  if(_inc)
    file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${_h}")
    message(FATAL_ERROR "${_rel} includes the training run or the benchmark (programs' code, src/): ${_inc}")
  endif()
endforeach()
list(LENGTH _files _n)
message(STATUS "layering: ${_n} files of apps/ and python/cpp/ use no detail:: name")
