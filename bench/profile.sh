#!/usr/bin/env bash
# Which release profile a user gets (issue 37): the binary's size, the cold
# build's time and a CPU-bound command's speed, for the release profile as
# it was (no debug info), with `strip`, and with `strip` and thin LTO. Each
# variant builds from nothing in a target dir of its own (cargo --timings
# writes its report there); the speeds are measured in one run, rounds
# interleaved, so a noisy machine moves them alike.
#
#   bench/profile.sh [WORKDIR]     (about 20 minutes on 2 cores)
#
# Prints one line per variant: size, cold build wall and CPU seconds, and
# the median of
# `verify --no-schema` and `ls -o json` over a 2,000-run store.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-$(mktemp -d)}
mkdir -p "$W"
ROUNDS=${ROUNDS:-7}

declare -A CONFIG=(
  [plain]=""
  [strip]="--config profile.release.strip=true"
  [strip_thin]="--config profile.release.strip=true --config profile.release.lto=\"thin\""
)
VARIANTS=(plain strip strip_thin)

for v in "${VARIANTS[@]}"; do
  t="$W/target-$v"
  rm -rf "$t"
  # Wall time moves with whatever else the machine runs; the CPU time
  # (user + system, every rustc of the build) much less.
  # shellcheck disable=SC2086
  eval /usr/bin/time -f "'$v %e %U %S'" -a -o "$W/build-seconds" \
    cargo build --release --locked --timings --bin fisk-admin --target-dir "$t" ${CONFIG[$v]} >/dev/null 2>"$W/build-$v.log"
  cp "$t/release/fisk-admin" "$W/fisk-admin-$v"
done

store="$W/store"
if [ ! -d "$store" ]; then
  python3 bench/gen_store.py "$store" --runs 2000 --bytes 20000 --format-version 1 >/dev/null
fi
export NO_COLOR=1
for r in $(seq "$ROUNDS"); do
  for v in "${VARIANTS[@]}"; do
    for cmd in "verify --no-schema" "ls -o json"; do
      s=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$W/fisk-admin-$v" --store "file:$store" $cmd >/dev/null 2>&1 || true
      e=$(date +%s.%N)
      echo "$v|$cmd|$(echo "$e - $s" | bc)" >>"$W/times"
    done
  done
done

python3 - "$W" "${VARIANTS[@]}" <<'EOF'
import os, statistics, sys
w, variants = sys.argv[1], sys.argv[2:]
build = {}
for l in open(os.path.join(w, "build-seconds")):
    v, wall, user, system = l.split()
    build[v] = (float(wall), float(user) + float(system))
times = {}
for l in open(os.path.join(w, "times")):
    v, cmd, t = l.strip().split("|")
    times.setdefault((v, cmd), []).append(float(t))
base = {cmd: statistics.median(ts) for (v, cmd), ts in times.items() if v == variants[0]}
print(f"{'variant':12} {'size MiB':>9} {'build wall s':>13} {'build CPU s':>12} {'verify s':>9} {'ratio':>6} {'ls s':>7} {'ratio':>6}")
for v in variants:
    size = os.path.getsize(os.path.join(w, f"fisk-admin-{v}")) / 2**20
    vm = statistics.median(times[(v, "verify --no-schema")])
    lm = statistics.median(times[(v, "ls -o json")])
    wall, cpu = build[v]
    print(f"{v:12} {size:9.1f} {wall:13.0f} {cpu:12.0f} {vm:9.3f} {vm / base['verify --no-schema']:6.2f} {lm:7.3f} {lm / base['ls -o json']:6.2f}")
EOF
