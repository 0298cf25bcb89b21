# SPDX-License-Identifier: Apache-2.0
# Runs one documentation example and compares its standard output with the
# expected text; fails on any difference or a nonzero exit status.
#   cmake -DPROG=program -DEMU="emulator|args" -DEXPECTED=file.expected -P run_example.cmake
cmake_minimum_required(VERSION 3.20)

string(REPLACE "|" ";" emu "${EMU}")
execute_process(COMMAND ${emu} "${PROG}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(READ "${EXPECTED}" want)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROG} exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT out STREQUAL want)
  message(FATAL_ERROR "${PROG}: the output differs from ${EXPECTED}\n"
                      "got:\n${out}\nwant:\n${want}\nstderr:\n${err}")
endif()
message(STATUS "${PROG}: exit 0, output as in ${EXPECTED}:\n${out}")
