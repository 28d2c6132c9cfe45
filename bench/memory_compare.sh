#!/usr/bin/env bash
# Peak RSS of migrate, two or more builds side by side, rounds interleaved
# (bench/RESULTS.md, issue 25: "Memory, the cause"):
#
#   bench/memory_compare.sh file WORKDIR RUNS BIN...    file -> file, --jobs 1, JSON
#   bench/memory_compare.sh js WORKDIR BIN...           JetStream -> file, 1,000 x 100 KB, --jobs 8
#
# R (rounds, default 3), JOBS (default 1 for file, 8 for js). Each command
# runs under `chrt -f 50` when allowed (so other work on the two cores
# does not stretch it), peak RSS from /usr/bin/time. The js mode starts
# its own nats-server (on PATH) on a free 127.0.0.1 port, its store under
# WORKDIR, and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/nats_local.sh
mode=$1 W=$2
shift 2
mkdir -p "$W"
fifo() { if chrt -f 50 true 2>/dev/null; then chrt -f 50 "$@"; else "$@"; fi; }
measure() { # BIN ARGS...: "PEAK KB, WALL s, cpu USER SYS"
  { fifo /usr/bin/time -f "%M KB, %e s, cpu %U %S" "$@" >/dev/null; } 2>&1 | tail -1
}
case $mode in
file)
  runs=$1
  shift
  src="$W/r$runs"
  [ -d "$src" ] || python3 bench/gen_store.py "$src" --runs "$runs" --bytes 20000 >/dev/null
  for r in $(seq "${R:-3}"); do
    for B in "$@"; do
      d=$(mktemp -d "$W/dst.XXXX")
      echo "round $r $B: $(measure "$B" migrate --from "file:$src" --to "file:$d" --all \
        --jobs "${JOBS:-1}" --format json)"
      rm -rf "$d"
    done
  done
  ;;
js)
  src="$W/js1k"
  [ -d "$src" ] || python3 bench/gen_store.py "$src" --runs 1000 --bytes 100000 >/dev/null
  rm -rf "$W/nats"
  start_nats "$W"
  $1 $S stream create M --subject "m.>" >/dev/null
  $1 $S migrate --from "file:$src" --to jetstream:M --all --jobs 8 >/dev/null
  for r in $(seq "${R:-3}"); do
    for B in "$@"; do
      d=$(mktemp -d "$W/dst.XXXX")
      echo "round $r $B: $(measure "$B" $S migrate --from jetstream:M --to "file:$d" --all \
        --jobs "${JOBS:-8}")"
      rm -rf "$d"
    done
  done
  ;;
*)
  echo "usage: $0 file WORKDIR RUNS BIN... | $0 js WORKDIR BIN..." >&2
  exit 2
  ;;
esac
