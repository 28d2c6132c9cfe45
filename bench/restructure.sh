#!/usr/bin/env bash
# Issue 25: the restructure keeps every figure within 10%. The figures of
# bench/RESULTS.md that the restructure touched, old binary against new,
# side by side in one hyperfine invocation each (the order reversed on the
# second round, so drift hits both alike), plus peak memory.
#
#   bench/restructure.sh OLD_BIN NEW_BIN [WORKDIR]     # default /tmp/fisk-restructure
#
# Needs hyperfine, python3, and NATS_SERVER_BIN for the JetStream figures
# (a server of its own on 127.0.0.1, a temporary store dir, stopped at the
# end). Build both binaries with `cargo build --release --locked`.
# Wall-clock: run it on a quiet machine; the user+system CPU is printed
# beside each mean, and is the steadier figure on a busy one.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?old binary} NEW=${2:?new binary}
W=${3:-/tmp/fisk-restructure}
mkdir -p "$W"
gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs "$2" --bytes "$3" --format-version 1; }
gen ls10k 10000 20000
gen big 100 4000000
gen m2k 2000 20000
cat "$W"/m2k/bench-00000*.json > "$W/records.jsonl"

hf() { # hf NAME WARMUP RUNS CMD-WITH-@B@ : old and new side by side, twice
  local name=$1 warm=$2 runs=$3 cmd=$4
  for round in 0 1; do
    local a=${cmd//@B@/$OLD} b=${cmd//@B@/$NEW}
    local first=(-n old "$a" -n new "$b")
    [ $round -eq 1 ] && first=(-n new "$b" -n old "$a")
    hyperfine -N --style none --warmup "$warm" --runs "$runs" \
      --export-json "$W/$name-$round.json" "${first[@]}" >/dev/null 2>&1 ||
      hyperfine --style none --warmup "$warm" --runs "$runs" \
        --export-json "$W/$name-$round.json" "${first[@]}" >/dev/null
  done
  python3 - "$W" "$name" <<'EOF'
import json, sys
w, name = sys.argv[1], sys.argv[2]
m = {"old": [], "new": []}
for r in (0, 1):
    for x in json.load(open(f"{w}/{name}-{r}.json"))["results"]:
        m[x["command"]].append((x["median"], x["user"] + x["system"]))
o = sorted(t for t, _ in m["old"])[0]; n = sorted(t for t, _ in m["new"])[0]
oc = min(c for _, c in m["old"]); nc = min(c for _, c in m["new"])
print(f"| {name} | {o*1000:.0f} ms (cpu {oc*1000:.0f}) | {n*1000:.0f} ms (cpu {nc*1000:.0f}) | {n/o:.3f} | {nc/oc:.3f} |")
EOF
}

echo "| figure | old (best median of 2 rounds) | new | new/old wall | new/old cpu |"
echo "|---|---|---|---|---|"
hf ls-10k 2 10 "@B@ --state-dir $W/ls10k ls --format json"
hf verify-big 1 5 "@B@ --state-dir $W/big verify"
hf verify-big-no-schema 1 5 "@B@ --state-dir $W/big verify --no-schema"
hf validate-jsonl 3 20 "@B@ validate --file $W/records.jsonl"
hf stats-all-10k 1 5 "@B@ --state-dir $W/ls10k stats --all --by model,tool --format json"
hf search-10k 1 5 "@B@ --state-dir $W/ls10k search --match NO-SUCH-WORD --in all --format json"
hf fold-4mb 2 10 "@B@ --state-dir $W/big fold bench-000000 --format json"
hf migrate-file-file 1 5 "bash -c 'rm -rf $W/dst && mkdir -m 700 $W/dst && @B@ migrate --from file:$W/m2k --to file:$W/dst --all --format json >/dev/null'"

if [ -n "${NATS_SERVER_BIN:-}" ]; then
  port=$((20000 + RANDOM % 20000))
  rm -rf "$W/js"
  "$NATS_SERVER_BIN" -a 127.0.0.1 -p "$port" -js -sd "$W/js" >"$W/nats.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null' EXIT
  sleep 1
  export NATS_URL=nats://127.0.0.1:$port
  "$OLD" stream create SRC --subject 'src.>' >/dev/null
  "$OLD" migrate --from "file:$W/m2k" --to jetstream:SRC --all >/dev/null
  hf migrate-file-js 1 3 "bash -c 's=D\$RANDOM\$RANDOM; @B@ stream create \$s --subject \$s.\\> >/dev/null && @B@ migrate --from file:$W/m2k --to jetstream:\$s --all >/dev/null'"
  hf migrate-js-file 1 3 "bash -c 'rm -rf $W/dst2 && mkdir -m 700 $W/dst2 && @B@ migrate --from jetstream:SRC --to file:$W/dst2 --all >/dev/null'"
  hf ls-js-2k 2 10 "@B@ --store jetstream:SRC --hold 0 ls --format json"
  hf stats-all-js-2k 1 5 "@B@ --store jetstream:SRC --hold 0 stats --all --format json"
fi

echo
echo "peak memory (KB), old then new:"
for b in "$OLD" "$NEW"; do
  /usr/bin/time -f "  ls 10k: %M" "$b" --state-dir "$W/ls10k" ls --format json >/dev/null
  /usr/bin/time -f "  verify big: %M" "$b" --state-dir "$W/big" verify >/dev/null
  rm -rf "$W/dst" && mkdir -m 700 "$W/dst"
  /usr/bin/time -f "  migrate 2k file->file --jobs 2: %M" "$b" migrate --from "file:$W/m2k" --to "file:$W/dst" --all --jobs 2 >/dev/null
done
