# SPDX-License-Identifier: Apache-2.0
# CTest smoke test of "bench_evp sweep" (label bench): a few cells of one
# level in one process, then checks of the CSV it wrote: the columns, one row
# per (operation, size) asked for, every output check passed ("ok": chapoly's
# and the base's output equal to the reference's, the floor's to what it
# promises), and numbers in the timing columns. The A/B part (--base) runs a
# copy of the same module as the base, in its own library context: the
# header must name the copy as the file the base runs from, and every row
# must carry base_ns and ratio_base; bench_evp itself (not the sweep) runs
# once with --base too, its table needs a 'vs base' column and its CSV base
# rows that passed the output check. No ratio is judged: timings are not
# pass/fail on a shared machine.
#   cmake -DPROG=bench_evp -DEMU="emulator|args" -DMODULE=chapoly.so -DOUT=dir -P sweep_smoke.cmake
cmake_minimum_required(VERSION 3.20)

set(ops seal open chacha20 quic-hp poly1305 xseal tls13 quic-open stream16)
set(sizes 16 64 65)
# what each operation keeps of those sizes (bench_sweep_level.c, op_sizes)
set(expect_quic-open 64 65)
set(expect_stream16 64 65)
set(expect_quic-hp 16 64)
set(floor_ops seal open chacha20 quic-hp poly1305)
set(columns level kernel default_limit op size baseline check chapoly_ns default_ns ratio reps
    spread remeasured ratio_first reps_first floor_ns chapoly_above_floor_ns
    default_above_floor_ns boringssl_ns base_ns ratio_base ratio_base_first layout placement)

string(REPLACE "|" ";" emu "${EMU}")
list(JOIN ops "," ops_arg)
list(JOIN sizes "," sizes_arg)
# the base: a copy of the module, so dlopen maps a second copy of its code
set(base_dir "${OUT}/sweep-smoke-base")
file(REMOVE_RECURSE "${base_dir}")
file(MAKE_DIRECTORY "${base_dir}")
get_filename_component(module_name "${MODULE}" NAME)
file(COPY "${MODULE}" DESTINATION "${base_dir}")
if(NOT module_name STREQUAL "chapoly.so")
  file(RENAME "${base_dir}/${module_name}" "${base_dir}/chapoly.so")
endif()
file(REAL_PATH "${base_dir}/chapoly.so" base_file)
file(REMOVE "${OUT}/sweep-smoke.csv")
execute_process(
  COMMAND ${emu} "${PROG}" sweep --this-process --module "${MODULE}" --base "${base_dir}"
          --ops ${ops_arg} --sizes ${sizes_arg}
          --reps 3 --rereps 3 --burst 0.05 --near 100 --spread 1 --csv "${OUT}/sweep-smoke.csv"
          --png "${OUT}/sweep-smoke.png"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench_evp sweep exited with ${rc} (2: an output check failed)")
endif()
string(FIND "${out}" "runs from ${base_file}: chapoly " at)
if(at LESS 0)
  message(FATAL_ERROR "the sweep's header does not say the base runs from ${base_file}")
endif()
if(NOT out MATCHES "worst vs base: ratio [0-9.]+ at ")
  message(FATAL_ERROR "no 'worst vs base' headline")
endif()
# the re-measure (every cell: --near 100) waits to spread its repetitions over
# --spread seconds
if(NOT out MATCHES "pass 2 +[1-9][0-9]* s: [0-9]+ cells again, 3 repetitions x [0-9]+ bursts of [0-9.]+ ms over 1 s or more")
  message(FATAL_ERROR "no re-measure spread over 1 s (--spread 1)")
endif()

file(STRINGS "${OUT}/sweep-smoke.csv" lines)
list(POP_FRONT lines header)
string(REPLACE "," ";" header "${header}")
if(NOT header STREQUAL columns)
  message(FATAL_ERROR "CSV columns are\n  ${header}\nexpected\n  ${columns}")
endif()

set(seen "")
foreach(line IN LISTS lines)
  # empty fields must stay fields: pad them before splitting
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE ",," ",-," line "${line}")
  string(REGEX REPLACE ",$" ",-" line "${line}")
  string(REPLACE "," ";" f "${line}")
  list(LENGTH f n)
  list(LENGTH columns ncol)
  if(NOT n EQUAL ncol)
    message(FATAL_ERROR "row with ${n} fields, not ${ncol}: ${line}")
  endif()
  list(GET f 3 op)
  list(GET f 4 size)
  list(GET f 6 check)
  if(NOT check STREQUAL "ok")
    message(FATAL_ERROR "${op} ${size}: output check: ${check}")
  endif()
  foreach(i 7 8 9 19 20)  # chapoly_ns default_ns ratio base_ns ratio_base
    list(GET f ${i} v)
    list(GET columns ${i} name)
    if(NOT v MATCHES "^[0-9]+\\.[0-9]+$" OR v EQUAL 0)
      message(FATAL_ERROR "${op} ${size}: ${name} is '${v}'")
    endif()
  endforeach()
  list(GET f 22 layout)
  if(NOT layout STREQUAL "1")
    message(FATAL_ERROR "${op} ${size}: layout '${layout}' in a --this-process run")
  endif()
  list(GET f 15 floor)
  if(op IN_LIST floor_ops AND NOT floor MATCHES "^[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "${op} ${size}: no floor_ns ('${floor}')")
  endif()
  list(APPEND seen "${op}:${size}")
endforeach()

foreach(op IN LISTS ops)
  set(want ${sizes})
  if(DEFINED expect_${op})
    set(want ${expect_${op}})
  endif()
  foreach(size IN LISTS want)
    if(NOT "${op}:${size}" IN_LIST seen)
      message(FATAL_ERROR "no row for ${op} ${size}")
    endif()
  endforeach()
endforeach()
list(LENGTH seen nrows)
message(STATUS "sweep smoke: ${nrows} rows, columns and output checks as expected")

# bench_evp with --base: a 'vs base' column, base rows in the CSV, checked
file(REMOVE "${OUT}/evp-smoke.csv")
execute_process(
  COMMAND ${emu} "${PROG}" --module "${MODULE}" --base "${base_dir}/chapoly.so" --ops seal,open,tls13
          --sizes 64 --reps 5 --time 0.2 --csv "${OUT}/evp-smoke.csv"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench_evp --base exited with ${rc} (2: an output check failed)")
endif()
if(NOT out MATCHES "vs base\n")
  message(FATAL_ERROR "bench_evp --base: no 'vs base' column")
endif()
file(STRINGS "${OUT}/evp-smoke.csv" lines)
list(POP_FRONT lines header)
string(REPLACE "," ";" header "${header}")
list(FIND header ratio_vs_base rcol)
if(rcol LESS 0)
  message(FATAL_ERROR "bench_evp CSV: no ratio_vs_base column")
endif()
set(nbase 0)
foreach(line IN LISTS lines)
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE "," ";" f "${line}")
  list(GET f 0 op)
  list(GET f 2 impl)
  list(GET f 3 status)
  list(GET f ${rcol} ratio)
  if(impl STREQUAL "base")
    math(EXPR nbase "${nbase} + 1")
    if(NOT status STREQUAL "ok")
      message(FATAL_ERROR "bench_evp --base: ${op} base row: ${status}")
    endif()
  elseif(impl STREQUAL "chapoly" AND NOT ratio MATCHES "^[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "bench_evp --base: ${op} chapoly row has ratio_vs_base '${ratio}'")
  endif()
endforeach()
if(NOT nbase EQUAL 3)
  message(FATAL_ERROR "bench_evp --base: ${nbase} base rows, not 3 (seal, open, tls13)")
endif()
message(STATUS "bench_evp --base: 'vs base' column, 3 base rows checked ok")

# Address layouts (--layouts): a level's child, then a fresh process for the
# cells below --layouts-below (forced here: 100), each appending its rows;
# the report takes the median. The children run this program again through
# /proc/self/exe, which an emulator may not provide: only without one.
if(NOT EMU)
  # the level the test's environment names (portable in a build without SIMD kernels)
  set(level auto)
  if("$ENV{CHAPOLY_KERNEL}" STREQUAL "portable")
    set(level portable)
  endif()
  file(REMOVE "${OUT}/sweep-layouts.csv")
  execute_process(
    COMMAND "${PROG}" sweep --module "${MODULE}" --levels ${level} --ops seal --sizes 64
            --reps 3 --rereps 3 --burst 0.05 --near 100 --spread 1 --layouts 2
            --layouts-below 100 --no-boringssl --csv "${OUT}/sweep-layouts.csv"
            --png "${OUT}/sweep-layouts.png"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bench_evp sweep --layouts 2 exited with ${rc}")
  endif()
  if(NOT out MATCHES "== level ${level} again, process 2 of 2")
    message(FATAL_ERROR "sweep --layouts 2: no second process for the level")
  endif()
  if(NOT out MATCHES "${level} +1 cell in 2 processes: [01] below 1.0 in the median")
    message(FATAL_ERROR "sweep --layouts 2: no report of the cell measured in two processes")
  endif()
  file(STRINGS "${OUT}/sweep-layouts.csv" lines)
  list(POP_FRONT lines header)
  set(layouts "")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "^${level},[^,]*,[^,]*,seal,64,.*,([0-9]+),[0-9]+$" m "${line}")
    if(m)
      list(APPEND layouts "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(NOT layouts STREQUAL "1;2")
    message(FATAL_ERROR "sweep --layouts 2: seal 64 rows of layouts '${layouts}', not 1;2")
  endif()
  message(STATUS "sweep --layouts: the cell measured again in a fresh process, rows 1 and 2")
endif()
