#!/usr/bin/env bash
# Fuzz each cargo-fuzz target for a bounded time:   bench/fuzz.sh [SECONDS]
# (default 60 per target). Needs a nightly toolchain and cargo-fuzz
# (`cargo install cargo-fuzz`); CI does not run this (the corpus is replayed
# on stable by journal/tests/fuzz_corpus.rs). New inputs libFuzzer finds
# interesting go into fuzz/corpus/<target>/ (keep what you commit small:
# `cargo +nightly fuzz cmin <target>`); a crash is written to
# fuzz/artifacts/<target>/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-60}
targets=(record_decode lines_decode verify_bytes)
# Release with debug assertions and overflow checks (cargo-fuzz's default).
cargo +nightly fuzz build
status=0
for t in "${targets[@]}"; do
  log=$(mktemp)
  before=$(ls "corpus/$t" | wc -l)
  if cargo +nightly fuzz run "$t" -- -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result=CRASH
    status=1
  fi
  after=$(ls "corpus/$t" | wc -l)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  echo "$t: ${secs}s, $runs execs, $rate exec/s, $cov, corpus $before -> $after, $result"
  if [ "$result" = CRASH ]; then
    grep -A30 -m1 -E 'panicked|ERROR: libFuzzer|SUMMARY' "$log" || tail -40 "$log"
  fi
  rm -f "$log"
done
exit $status
