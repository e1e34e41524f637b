# The compile-time budget's inputs stay put: the gpuplace headers a program's translation unit
# includes (g++ -M), against the list recorded in tests/budget/<name>.txt. A header that joins or
# leaves the list fails the test, naming it; when the change is meant, record the new list:
#   cmake -DSOURCE_DIR=<repo> -DCXX=<c++> -DNAME=<name> -DSOURCE=<file.cpp> [-DFLAGS=...] [-DDIRS=<include dirs>]
#         [-DFORBID=nlohmann;Eigen] [-DUPDATE=ON]
#         -P tests/budget/includes.cmake                      (ctest: budget_includes_<name>)
# The translation units must not reach third-party headers listed in FORBID (e.g. nlohmann, Eigen).
# What the budget itself is (CPU seconds and memory of the quick start) is measured by hand
# (docs/performance.md), never asserted by a test: it depends on the machine.
separate_arguments(_flags UNIX_COMMAND "${FLAGS}")
foreach(d ${DIRS})  # third-party include folders (nlohmann_json, Eigen), but for the compiler's own
  if(NOT d MATCHES "^/usr(/local)?/include/?$")
    list(APPEND _flags -isystem "${d}")
  endif()
endforeach()
execute_process(COMMAND "${CXX}" -std=c++20 -I "${SOURCE_DIR}/include" ${_flags} -M "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CXX} -M ${SOURCE} failed (${rc}):\n${err}")
endif()
string(REPLACE "\\\n" " " deps "${deps}")
string(REGEX REPLACE "^[^:]*:" "" deps "${deps}")
separate_arguments(deps UNIX_COMMAND "${deps}")
set(ours "")
foreach(d ${deps})
  foreach(f ${FORBID})
    if(d MATCHES "/${f}/")
      message(FATAL_ERROR "${SOURCE} includes ${d} (${f} must not be reached from it)")
    endif()
  endforeach()
  file(TO_CMAKE_PATH "${d}" d)
  cmake_path(NORMAL_PATH d)
  if(d MATCHES "/include/gpuplace/")
    string(REGEX REPLACE "^.*/include/gpuplace/" "" rel "${d}")
    list(APPEND ours "${rel}")
  endif()
endforeach()
list(REMOVE_DUPLICATES ours)
list(SORT ours)
string(REPLACE ";" "\n" now "${ours}")
set(now "${now}\n")
set(recorded_file "${SOURCE_DIR}/tests/budget/${NAME}.txt")
if(UPDATE)
  file(WRITE "${recorded_file}" "${now}")
  message(STATUS "recorded ${recorded_file}")
  return()
endif()
file(READ "${recorded_file}" recorded)
if(NOT now STREQUAL recorded)
  string(REPLACE "\n" ";" was "${recorded}")
  set(added ${ours})
  list(REMOVE_ITEM added ${was})
  set(removed ${was})
  list(REMOVE_ITEM removed ${ours} "")
  message(FATAL_ERROR "the headers ${SOURCE} includes changed (tests/budget/${NAME}.txt):\n  added: ${added}\n  removed: ${removed}\n"
                      "Measure the compile time again (docs/performance.md), then record the list with -DUPDATE=ON.")
endif()
list(LENGTH ours n)
message(STATUS "${NAME}: the same ${n} gpuplace headers")
