#!/usr/bin/env bash
# Issue 26 figures (bench/RESULTS.md, "issue 26: inbox"):   bench/inbox.sh [WORKDIR]
# inbox against ls on 10,000 x 20 KB runs, with every third run waiting
# (gen_store.py's default) and with one in twenty (--waiting-every 20):
# inbox reads ls's summaries, then reads and folds only the waiting runs.
# Needs hyperfine and python3. Wall-clock: run on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench}
mkdir -p "$W"
cargo build --release --locked -q
B=$PWD/target/release/fisk-admin
gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs 10000 --bytes 20000 "${@:2}"; }
gen ls10k
gen inbox10k-every20 --waiting-every 20
for store in ls10k inbox10k-every20; do
  echo "## 10,000 x 20 KB runs ($store): inbox against ls"
  hyperfine -N --warmup 1 --runs 10 \
    "$B --state-dir $W/$store ls --format json" \
    "$B --state-dir $W/$store inbox --format json"
done
