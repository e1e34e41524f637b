# ctest install_headers_only: configure the library alone (no tests, examples, programs or
# benchmarks), install it straight after configure (nothing built), then build and run the quick
# start in a project that finds the installed package with Eigen hidden; then check that
# find_package(gpuplace COMPONENTS rl) gives gpuplace::rl where Eigen is found, and that a program
# built against it loads a shipped model and the philly preset from the prefix with GPUPLACE_DATA unset.
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -DGENERATOR=<gen> -P tests/install/run.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}" -DGPUPLACE_BUILD_TESTS=OFF
    -DGPUPLACE_BUILD_EXAMPLES=OFF -DGPUPLACE_BUILD_APPS=OFF -DGPUPLACE_BUILD_BENCHMARKS=OFF)
run(${CMAKE_COMMAND} --install "${WORK_DIR}/build" --prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install" -B "${WORK_DIR}/consumer" -G "${GENERATOR}"
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON -DCMAKE_BUILD_TYPE=Debug
    -DGPUPLACE_QUICKSTART=${SOURCE_DIR}/examples/quickstart.cpp)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/consumer")
run("${WORK_DIR}/consumer/quickstart")
# with Eigen visible, the rl component and its target
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install" -B "${WORK_DIR}/consumer-rl" -G "${GENERATOR}"
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DGPUPLACE_TEST_RL=ON)
# the installed data: a model and the philly preset load with GPUPLACE_DATA unset, from the prefix
run(${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-rl")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=GPUPLACE_DATA "${WORK_DIR}/consumer-rl/installed_data"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "installed_data failed (${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCH "^[^\n]*" data_dir "${out}")
file(REAL_PATH "${WORK_DIR}/prefix" prefix_real)
if(NOT data_dir MATCHES "^${prefix_real}/" AND NOT data_dir MATCHES "^${WORK_DIR}/prefix/")
  message(FATAL_ERROR "the installed package's data folder is ${data_dir}, not under the prefix ${WORK_DIR}/prefix")
endif()
