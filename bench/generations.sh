#!/usr/bin/env bash
# Issue 13, speed: what reading version-1 journals (time, agent, kind,
# dispatched, summary) costs, against the binary from before the issue.
#
#   bench/generations.sh [WORKDIR]          # default /tmp/fisk-gen
#
# Needs: git, cargo, python3, hyperfine (apt-get install -y hyperfine).
# Builds two release binaries, each in its own git worktree so uncommitted
# edits in this checkout never reach them:
#   OLD_REV (default 2ba1ec5, main before issue 13) -> /tmp/fisk-old-target
#   NEW_REV (default HEAD)                          -> /tmp/fisk-new-target
# (the target dirs are kept, so a second run only relinks). Set OLD_BIN and
# NEW_BIN to existing binaries to skip the builds.
#
# Writes the stores of bench/run.sh (ls10k 10,000 x 20 KB, big 100 x 4 MB,
# small 100 x 20 KB) twice with bench/gen_store.py: $W/v3 (--format-version
# 3, the stores of run.sh) and $W/v1 (--format-version 1: the same records
# with the version-1 fields). Then, ROUNDS times (default 2; odd rounds list
# the commands in the reverse order, so drift over a round hits each side
# alike), one hyperfine invocation per figure, the commands side by side:
#   ls       old v3, new v3, new v1: ls --format json on ls10k
#   verify   the same three for verify --no-schema and for verify on big,
#            and python3 bench/json_loads.py on big v3 and v1 (the 3x
#            baseline): one invocation, so the 3x and 2x ratios are side
#            by side too
#   validate the same three for validate --file of small's records
# The old binary is not run on v1 stores: it does not know version 1.
# Prints each round's means and the ratios; hyperfine's JSON goes to
# $W/round-N-*.json. Wall-clock: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
W=${1:-/tmp/fisk-gen}
ROUNDS=${ROUNDS:-2}
OLD_REV=${OLD_REV:-2ba1ec5}
NEW_REV=${NEW_REV:-HEAD}
mkdir -p "$W"

build() { # build REV NAME -> prints the binary's path
  local rev=$1 name=$2 wt=/tmp/fisk-$2-wt.$$
  git -C "$REPO" worktree add -q --detach "$wt" "$rev" >&2
  (cd "$wt" && CARGO_TARGET_DIR=/tmp/fisk-$name-target cargo build --release --locked -q) >&2
  git -C "$REPO" worktree remove --force "$wt" >&2
  echo "/tmp/fisk-$name-target/release/fisk-admin"
}
OLD=${OLD_BIN:-$(build "$OLD_REV" old)}
NEW=${NEW_BIN:-$(build "$NEW_REV" new)}
echo "old: $OLD ($OLD_REV)"
echo "new: $NEW ($NEW_REV)"

gen() { # gen VERSION NAME RUNS BYTES
  [ -d "$W/v$1/$2" ] || python3 bench/gen_store.py "$W/v$1/$2" --runs "$3" --bytes "$4" --format-version "$1"
}
for v in 3 1; do
  gen $v ls10k 10000 20000
  gen $v big 100 4000000
  gen $v small 100 20000
  [ -f "$W/v$v/records.jsonl" ] || cat "$W/v$v"/small/*.json > "$W/v$v/records.jsonl"
  echo "v$v: big $(du -sb "$W/v$v/big" | cut -f1) bytes, $(cat "$W/v$v"/big/*.json | wc -l) records;" \
       "ls10k $(du -sb "$W/v$v/ls10k" | cut -f1) bytes; records.jsonl $(wc -l < "$W/v$v/records.jsonl") records"
done

# The new binary must read both stores cleanly, or the figures mean nothing.
for v in 3 1; do
  "$NEW" --state-dir "$W/v$v/big" verify >/dev/null 2>&1
  "$NEW" validate --file "$W/v$v/records.jsonl" >/dev/null 2>&1
done
"$OLD" --state-dir "$W/v3/big" verify >/dev/null 2>&1

# hf ROUND NAME WARMUP RUNS LABEL CMD [LABEL CMD]... : one hyperfine
# invocation; the commands' order reversed on odd rounds.
hf() {
  local round=$1 name=$2 warm=$3 runs=$4; shift 4
  local args=()
  while [ $# -gt 0 ]; do
    if [ $((round % 2)) -eq 1 ]; then args=(-n "$1" "$2" "${args[@]}"); else args+=(-n "$1" "$2"); fi
    shift 2
  done
  hyperfine -N --style basic --warmup "$warm" --runs "$runs" \
    --export-json "$W/round-$round-$name.json" "${args[@]}" >"$W/round-$round-$name.txt"
}

for ((r=0; r<ROUNDS; r++)); do
  echo "## round $((r+1)) of $ROUNDS"
  hf $r ls 2 20 \
    "old v3" "$OLD --state-dir $W/v3/ls10k ls --format json" \
    "new v3" "$NEW --state-dir $W/v3/ls10k ls --format json" \
    "new v1" "$NEW --state-dir $W/v1/ls10k ls --format json"
  hf $r verify 1 8 \
    "no-schema old v3" "$OLD --state-dir $W/v3/big verify --no-schema" \
    "no-schema new v3" "$NEW --state-dir $W/v3/big verify --no-schema" \
    "no-schema new v1" "$NEW --state-dir $W/v1/big verify --no-schema" \
    "schema old v3" "$OLD --state-dir $W/v3/big verify" \
    "schema new v3" "$NEW --state-dir $W/v3/big verify" \
    "schema new v1" "$NEW --state-dir $W/v1/big verify" \
    "json.loads v3" "python3 bench/json_loads.py $W/v3/big" \
    "json.loads v1" "python3 bench/json_loads.py $W/v1/big"
  hf $r validate 5 60 \
    "old v3" "$OLD validate --file $W/v3/records.jsonl" \
    "new v3" "$NEW validate --file $W/v3/records.jsonl" \
    "new v1" "$NEW validate --file $W/v1/records.jsonl"

  python3 - "$W" "$r" <<'EOF'
import json, math, sys
w, r = sys.argv[1], sys.argv[2]
def load(name):
    res = json.load(open(f"{w}/round-{r}-{name}.json"))["results"]
    return {x["command"]: (x["mean"], x["stddev"] or 0.0, x["median"], x["user"] + x["system"]) for x in res}
def fmt(m):
    # mean +- stddev (median; user+system CPU), milliseconds
    return f"{m[0]*1000:.1f} +- {m[1]*1000:.1f} ({m[2]*1000:.1f}; cpu {m[3]*1000:.0f})"
def med(a, b):
    return f"{a[2] / b[2]:.3f}"
def cpu(a, b):
    return f"{a[3] / b[3]:.3f}"
def ratio(a, b):
    q = a[0] / b[0]
    return f"{q:.3f} +- {q * math.hypot(a[1]/a[0], b[1]/b[0]):.3f}"
def table(name, prefix=""):
    t = load(name)
    o, n3, n1 = t[prefix + "old v3"], t[prefix + "new v3"], t[prefix + "new v1"]
    label = f"{name} {prefix.strip()}".strip()
    print(f"| {label} | {fmt(o)} | {fmt(n3)} | {fmt(n1)} | {ratio(n3, o)} ({med(n3, o)}; cpu {cpu(n3, o)}) "
          f"| {ratio(n1, o)} ({med(n1, o)}; cpu {cpu(n1, o)}) |")
    return t
print("ms: mean +- stddev (median; user+system CPU); ratios: of means +- propagated stddev (of medians; of CPU)")
print()
print("| figure | old v3 | new v3 | new v1 | new/old v3 | new v1/old v3 |")
print("|---|---|---|---|---|---|")
table("ls")
table("verify", "no-schema ")
t = table("verify", "schema ")
table("validate")
print()
def row(label, a, b):
    cells = [f"{ratio(t[a + x], t[b + x])} ({med(t[a + x], t[b + x])})" for x in (" old v3", " new v3", " new v1") if a + x in t]
    print(f"| {label} | " + " | ".join(cells) + " |")
print("| ratio (of means; of medians) | old v3 | new v3 | new v1 |")
print("|---|---|---|---|")
t["json.loads old v3"] = t["json.loads new v3"] = t["json.loads v3"]
t["json.loads new v1"] = t["json.loads v1"]
row("json.loads / verify --no-schema (>= 3)", "json.loads", "no-schema")
row("verify / verify --no-schema (<= 2)", "schema", "no-schema")
print(f"json.loads: v3 {fmt(t['json.loads v3'])}, v1 {fmt(t['json.loads v1'])}")
EOF
done
