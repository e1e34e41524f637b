# ctest helper: runs PROGRAM with ARGS (a ;-list) and checks its exit status is EXPECT and, when
# MATCH is set, that what it printed (stdout and stderr) matches the regular expression MATCH, and
# when NOMATCH is set, that it does not match NOMATCH, and when CONTAINS is set, that it contains
# that text, literally (no regular expression).
#   cmake -DPROGRAM=<exe> -DARGS=<args> -DEXPECT=<status> [-DMATCH=<regex>] [-DNOMATCH=<regex>] [-DCONTAINS=<text>]
#         [-DEMPTY_LAST=ON] -P apps/testdata/exit_status.cmake
# -DEMPTY_LAST=ON passes an empty argument after ARGS (a ;-list cannot hold one).
if(EMPTY_LAST)
  execute_process(COMMAND "${PROGRAM}" ${ARGS} "" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
else()
  execute_process(COMMAND "${PROGRAM}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc STREQUAL "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit status ${rc}, expected ${EXPECT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: the output does not match \"${MATCH}\"\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED NOMATCH AND "${out}${err}" MATCHES "${NOMATCH}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: the output matches \"${NOMATCH}\"\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED CONTAINS)
  string(FIND "${out}${err}" "${CONTAINS}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${PROGRAM} ${ARGS}: the output does not contain \"${CONTAINS}\"\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endif()
