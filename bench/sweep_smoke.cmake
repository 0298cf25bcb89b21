# SPDX-License-Identifier: Apache-2.0
# CTest smoke test of bench_evp (label bench); no ratio is judged (timings are
# not pass/fail on a shared machine):
#  1. "bench_evp sweep" at one level in this process, a few cells, with a copy
#     of chapoly.so as --base (an A/A run): the CSV's columns, a row per cell
#     asked for, every output check passed (chapoly's, the base's and the
#     floor's), numbers in the timing columns, the header naming the copy as
#     the file the base runs from. XChaCha rows: against libsodium when the
#     build has it (SODIUM=ON), else against BoringSSL when it is installed,
#     else absent with the reason printed.
#  2. "sweep --report" on that CSV; the sweep with a child process per level
#     (not under an emulator: /proc/self/exe would be the emulator).
#  3. bench_evp --base: a 'vs base' column, base rows that passed the check;
#     and --loop.
#   cmake -DPROG=bench_evp -DEMU="emulator|args" -DMODULE=chapoly.so -DOUT=dir -DSODIUM=ON|OFF
#         -P sweep_smoke.cmake
cmake_minimum_required(VERSION 3.21)

set(ops seal open chacha20 quic-hp poly1305 xseal tls13 quic-open stream16 seal-newctx)
set(sizes 16 64 65)
# what each operation keeps of those sizes (bench_sweep.c, op_sizes)
set(expect_quic-open 64 65)
set(expect_stream16 64 65)
set(expect_quic-hp 16 64)
set(floor_ops seal open chacha20 quic-hp poly1305)
set(columns level kernel default_limit op size baseline check chapoly_ns default_ns ratio reps
    spread remeasured ratio_first floor_ns chapoly_above_floor_ns default_above_floor_ns
    boringssl_ns base_ns ratio_base placement heap_shift)

string(REPLACE "|" ";" emu "${EMU}")
list(JOIN ops "," ops_arg)
list(JOIN sizes "," sizes_arg)
function(run what)
  execute_process(COMMAND ${emu} "${PROG}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} exited with ${rc} (2: an output check failed)")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
function(need what regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no '${regex}' in the output")
  endif()
endfunction()

# the base: a copy of the module, so dlopen maps a second copy of its code
set(base_dir "${OUT}/sweep-smoke-base")
file(REMOVE_RECURSE "${base_dir}")
file(MAKE_DIRECTORY "${base_dir}")
file(COPY_FILE "${MODULE}" "${base_dir}/chapoly.so")
file(REAL_PATH "${base_dir}/chapoly.so" base_file)
set(csv "${OUT}/sweep-smoke.csv")
file(REMOVE "${csv}")
run("bench_evp sweep" sweep --this-process --module "${MODULE}" --base "${base_dir}"
    --ops ${ops_arg} --sizes ${sizes_arg} --reps 3 --rereps 3 --burst 0.05 --near 100
    --spread 1 --csv "${csv}" --png "${OUT}/sweep-smoke.png")
string(FIND "${out}" "runs from ${base_file}: chapoly " at)
if(at LESS 0)
  message(FATAL_ERROR "the sweep's header does not say the base runs from ${base_file}")
endif()
need("sweep" "worst vs base: min ratio [0-9.]+ at ")
need("sweep" "headline: min ratio [0-9.]+ at ")
# the re-measure (every cell: --near 100) spreads its repetitions over --spread seconds
need("sweep" "pass 2 +[1-9][0-9]* s: [0-9]+ cells again, 3 repetitions x [0-9]+ bursts of [0-9.]+ ms over 1 s")

# XChaCha's baseline: libsodium where built in, else BoringSSL if installed, else none
if(NOT out MATCHES "baselines  default provider; xseal/xopen: ([A-Za-z]+)")
  message(FATAL_ERROR "no baselines line")
endif()
set(xbase "${CMAKE_MATCH_1}")
if(SODIUM AND NOT xbase STREQUAL "libsodium")
  message(FATAL_ERROR "built with libsodium, but XChaCha is compared with ${xbase}")
elseif(NOT SODIUM AND xbase STREQUAL "libsodium")
  message(FATAL_ERROR "built without libsodium, but XChaCha is compared with it")
elseif(xbase STREQUAL "none")
  need("sweep without a baseline for XChaCha" "skipping xseal: nothing to compare it with")
  list(REMOVE_ITEM ops xseal)
elseif(xbase STREQUAL "BoringSSL")
  set(xbase boringssl)
endif()

file(STRINGS "${csv}" lines)
list(POP_FRONT lines header)
string(REPLACE "," ";" header "${header}")
if(NOT header STREQUAL columns)
  message(FATAL_ERROR "CSV columns are\n  ${header}\nexpected\n  ${columns}")
endif()
list(LENGTH columns ncol)
set(seen "")
foreach(line IN LISTS lines)
  # empty fields must stay fields: pad them before splitting
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE "," ";" f "${line}")
  list(LENGTH f n)
  list(GET f 3 op)
  list(GET f 4 size)
  list(GET f 5 baseline)
  list(GET f 6 check)
  list(GET f 14 floor)
  if(NOT n EQUAL ncol OR NOT check STREQUAL "ok")
    message(FATAL_ERROR "${op} ${size}: ${n} fields, output check: ${check}")
  endif()
  if(op STREQUAL "xseal" AND NOT baseline STREQUAL xbase)
    message(FATAL_ERROR "xseal ${size}: baseline ${baseline}, expected ${xbase}")
  endif()
  foreach(i 7 8 9 18 19)  # chapoly_ns default_ns ratio base_ns ratio_base
    list(GET f ${i} v)
    list(GET columns ${i} name)
    if(NOT v MATCHES "^[0-9]+\\.[0-9]+$" OR v EQUAL 0)
      message(FATAL_ERROR "${op} ${size}: ${name} is '${v}'")
    endif()
  endforeach()
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
if(NOT xbase STREQUAL "none" AND NOT "xseal:16" IN_LIST seen)
  message(FATAL_ERROR "no XChaCha rows although ${xbase} is there")
endif()
message(STATUS "sweep smoke: ${nrows} rows, columns and output checks as expected (XChaCha: ${xbase})")

run("bench_evp sweep --report" sweep --report "${csv}" --png "${OUT}/sweep-report.png")
need("sweep --report" "headline: min ratio [0-9.]+ at ")
if(NOT EMU)
  # a child process per level; the level the test's environment names
  set(level auto)
  if("$ENV{CHAPOLY_KERNEL}" STREQUAL "portable")
    set(level portable)
  endif()
  run("bench_evp sweep --levels ${level}" sweep --module "${MODULE}" --levels ${level} --ops seal
      --sizes 64 --reps 3 --rereps 3 --burst 0.05 --near 100 --spread 0 --no-boringssl
      --csv "${OUT}/sweep-levels.csv" --png "${OUT}/sweep-levels.png")
  need("sweep --levels ${level}" "== level ${level}: chapoly kernel")
  file(STRINGS "${OUT}/sweep-levels.csv" lines)
  if(NOT lines MATCHES ";${level},[^,]*,[^,]*,seal,64,default,ok,")
    message(FATAL_ERROR "sweep --levels ${level}: no checked row for seal 64")
  endif()
endif()

# bench_evp with --base: a 'vs base' column, base rows in the CSV, checked
file(REMOVE "${OUT}/evp-smoke.csv")
run("bench_evp --base" --module "${MODULE}" --base "${base_dir}/chapoly.so" --ops seal,open,tls13
    --sizes 64 --reps 3 --time 0.2 --csv "${OUT}/evp-smoke.csv")
need("bench_evp --base" "vs base  ns-floor\n")
file(STRINGS "${OUT}/evp-smoke.csv" lines)
list(POP_FRONT lines header)
string(REPLACE "," ";" header "${header}")
list(FIND header ratio_vs_base rcol)
set(nbase 0)
foreach(line IN LISTS lines)
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE ",," ",-," line "${line}")
  string(REPLACE "," ";" f "${line}")
  list(GET f 0 op)
  list(GET f 2 impl)
  list(GET f 3 status)
  list(GET f ${rcol} ratio)
  if(impl STREQUAL "base" AND status STREQUAL "ok")
    math(EXPR nbase "${nbase} + 1")
  elseif(impl STREQUAL "base" OR (impl STREQUAL "chapoly" AND NOT ratio MATCHES "^[0-9]+\\.[0-9]+$"))
    message(FATAL_ERROR "bench_evp --base: ${op} ${impl} row: ${status}, ratio_vs_base '${ratio}'")
  endif()
endforeach()
if(NOT nbase EQUAL 3)
  message(FATAL_ERROR "bench_evp --base: ${nbase} checked base rows, not 3 (seal, open, tls13)")
endif()
run("bench_evp --loop" --module "${MODULE}" --loop open:chapoly:64:1000)
need("bench_evp --loop" "open chapoly 64 bytes x 1000: ok")
message(STATUS "bench_evp: --base rows checked, --loop ran")
