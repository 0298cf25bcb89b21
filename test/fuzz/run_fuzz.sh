#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run_fuzz.sh FUZZER SEED_DIR WORK_DIR DEFAULT_SECONDS
# One time-boxed libFuzzer run for CTest. New inputs go to WORK_DIR/corpus
# (kept between runs, so coverage accumulates), crashes to
# WORK_DIR/artifacts; the seed corpus in the source tree is only read.
# CHAPOLY_FUZZ_SECONDS in the environment overrides DEFAULT_SECONDS.
set -eu
fuzzer=$1
seeds=$2
work=$3
secs=${CHAPOLY_FUZZ_SECONDS:-$4}
mkdir -p "$work/corpus" "$work/artifacts"
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS
exec "$fuzzer" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds"
