#!/usr/bin/env bash
# Issue 16 figures (bench/RESULTS.md, "issue 16"):   bench/fleet.sh [WORKDIR]
# stats/query RUN against fold on the 4 MB journal, and stats --all /
# search --in all against verify --no-schema on the 10,000 x 20 KB store
# (they read as much), side by side in one hyperfine run each.
# Needs hyperfine and python3. Wall-clock: run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
mkdir -p "$W"
cargo build --release --locked -q
B=$PWD/target/release/fisk-admin
gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs "$2" --bytes "$3"; }
gen ls10k 10000 20000
gen big 100 4000000
RUN=bench-000000

echo "## one 4 MB run: stats and query against fold"
hyperfine -N --warmup 2 --runs 10 \
  "$B --state-dir $W/big fold $RUN --format json" \
  "$B --state-dir $W/big stats $RUN --format json" \
  "$B --state-dir $W/big query $RUN --format json"

echo "## 10,000 x 20 KB runs: stats --all and search --in all against verify --no-schema"
hyperfine -N --warmup 1 --runs 5 \
  "$B --state-dir $W/ls10k verify --no-schema" \
  "$B --state-dir $W/ls10k stats --all --by model,tool --format json" \
  "$B --state-dir $W/ls10k search --match NO-SUCH-WORD --in all --format json" \
  "$B --state-dir $W/ls10k ls --status completed,suspended --since 3650d --format json"

echo "## peak memory (KB)"
/usr/bin/time -f "stats --all, 10,000 runs: %M KB" "$B" --state-dir "$W/ls10k" stats --all --by model,day >/dev/null
/usr/bin/time -f "search --in all, 10,000 runs: %M KB" "$B" --state-dir "$W/ls10k" search --match NO-SUCH-WORD --in all >/dev/null
/usr/bin/time -f "ls, 10,000 runs: %M KB" "$B" --state-dir "$W/ls10k" ls --format json >/dev/null
