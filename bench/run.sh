#!/usr/bin/env bash
# Reproduce every figure in bench/RESULTS.md:   bench/run.sh [WORKDIR]
# Needs: hyperfine (apt-get install hyperfine), python3; the validate
# baselines pip-install jsonschema and check-jsonschema on first use.
# Run on a quiet machine: the figures are wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
mkdir -p "$W"
cargo build --release --locked -q
B=$PWD/target/release/fisk-admin

gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs "$2" --bytes "$3"; }
gen ls10k 10000 20000
gen big 100 4000000
gen small 100 20000

echo "## ls"
hyperfine -N --warmup 2 --runs 10 \
  "$B --state-dir $W/ls10k ls --format json" \
  "$B --state-dir $W/big ls --format json" \
  "$B --state-dir $W/small ls --format json"

echo "## verify"
bytes=$(du -sb "$W/big" | cut -f1)
echo "store: $bytes bytes"
hyperfine -N --warmup 1 --runs 5 \
  "$B --state-dir $W/big verify --no-schema" \
  "$B --state-dir $W/big verify" \
  "python3 bench/json_loads.py $W/big"

echo "## verify peak memory (KB)"
mkdir -p "$W/one" && cp "$W/big/bench-000000.json" "$W/one/" && chmod 700 "$W/one"
/usr/bin/time -f "one 4 MB run: %M KB" "$B" --state-dir "$W/one" verify >/dev/null
/usr/bin/time -f "100 x 4 MB runs: %M KB" "$B" --state-dir "$W/big" verify >/dev/null
/usr/bin/time -f "10,000 x 20 KB runs: %M KB" "$B" --state-dir "$W/ls10k" verify >/dev/null

echo "## validate"
python3 -c 'import jsonschema, referencing' 2>/dev/null || python3 -m pip install -q jsonschema referencing rfc3339-validator
command -v check-jsonschema >/dev/null || python3 -m pip install -q check-jsonschema
cat "$W"/small/*.json > "$W/records.jsonl"
n=$(wc -l < "$W/records.jsonl")
echo "records: $n"
hyperfine -N --warmup 1 --runs 5 "$B validate --file $W/records.jsonl"
python3 bench/validate_py.py "$W/records.jsonl"
# check-jsonschema validates one document per file against one schema:
# give it the tool_result records, one file each.
rm -rf "$W/cj" && mkdir -p "$W/cj"
grep '"protocol":"io.choria.fisk-ai.v1.session.tool_result"' "$W/records.jsonl" | head -2000 \
  | awk -v d="$W/cj" '{ f = sprintf("%s/r%05d.json", d, NR); print > f; close(f) }'
m=$(ls "$W/cj" | wc -l)
start=$(date +%s.%N)
check-jsonschema --base-uri "file://$PWD/schemas/v1/" --schemafile schemas/v1/session.tool_result.json "$W"/cj/*.json >/dev/null
end=$(date +%s.%N)
python3 -c "print(f'check-jsonschema: $m records, {($end-$start):.3f} s, {$m/($end-$start):,.0f} records/s')"
