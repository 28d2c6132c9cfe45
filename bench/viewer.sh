#!/usr/bin/env bash
# Issue 15 figures for the transcript viewer and line mode:
#   bench/viewer.sh [WORKDIR]
# Needs tmux, hyperfine, python3, /usr/bin/time. For a 4 MB and a 100 MB
# journal (bench/gen_store.py, version 1) it measures:
#  - time to first screen: from starting the viewer in a detached 200x50
#    tmux pane until capture-pane shows its first block; baseline: `less`
#    on the same file in the same harness (same polling, same tmux);
#  - peak memory (RSS) of the viewer after `G` (every block indexed, the
#    end on screen) and `q`, against the journal's size;
#  - line mode (`show --transcript --no-tui`) against `fold --format json`
#    on the same journal, both to /dev/null (hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench-viewer}
mkdir -p "$W"
cargo build --release --locked -q
B=${CARGO_TARGET_DIR:-$PWD/target}/release/fisk-admin
SOCK=fisk-bench-viewer-$$
trap 'tmux -L $SOCK kill-server 2>/dev/null || true' EXIT

gen() { [ -d "$W/$1" ] || python3 bench/gen_store.py "$W/$1" --runs 1 --bytes "$2" --format-version 1; }
gen j4 4000000
gen j100 100000000

now() { date +%s.%N; }

# first_screen LABEL COMMAND PATTERN: seconds until the pane shows PATTERN.
first_screen() {
  local cmd=$2 pat=$3 start end
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  start=$(now)
  tmux -L "$SOCK" -f /dev/null new-session -d -s b -x 200 -y 50 "$cmd; sleep 600"
  until tmux -L "$SOCK" capture-pane -p -t b 2>/dev/null | grep -q -- "$pat"; do sleep 0.005; done
  end=$(now)
  tmux -L "$SOCK" kill-server
  python3 -c "print(f'{$end-$start:.3f}')"
}

for j in j4 j100; do
  f=$(ls "$W/$j"/*.json | head -1)
  run=$(basename "$f" .json)
  bytes=$(stat -c %s "$f")
  echo "## $j: $run, $bytes bytes"

  v=() ; l=()
  for i in 1 2 3; do
    v+=("$(first_screen viewer "NO_COLOR=1 $B --state-dir $W/$j show $run --transcript" "$run · block")")
    l+=("$(first_screen less "less -R $f" 'seq')")
  done
  python3 - "${v[@]}" "${l[@]}" <<'PY'
import sys, statistics as st
a = [float(x) for x in sys.argv[1:4]]; b = [float(x) for x in sys.argv[4:7]]
print(f"first screen: viewer {st.median(a):.3f} s, less {st.median(b):.3f} s (median of 3), ratio {st.median(a)/st.median(b):.2f}x")
PY

  # Peak RSS of the viewer after indexing everything (G), then q.
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  tmux -L "$SOCK" -f /dev/null new-session -d -s b -x 200 -y 50 \
    "NO_COLOR=1 /usr/bin/time -f %M -o $W/rss $B --state-dir $W/$j show $run --transcript; sleep 600"
  until tmux -L "$SOCK" capture-pane -p -t b | grep -q "$run · block"; do sleep 0.01; done
  tmux -L "$SOCK" send-keys -t b G
  until tmux -L "$SOCK" capture-pane -p -t b | grep -q "the end"; do sleep 0.02; done
  tmux -L "$SOCK" send-keys -t b q
  until [ -s "$W/rss" ]; do sleep 0.02; done
  tmux -L "$SOCK" kill-server
  rss=$(cat "$W/rss"); rm -f "$W/rss"
  python3 -c "print(f'viewer peak RSS after G: {$rss} KB = {$rss*1024/$bytes:.2f}x the journal')"

  hyperfine -N --warmup 1 --runs 5 --export-json "$W/$j.json" \
    "$B --state-dir $W/$j show $run --transcript --no-tui --no-pager" \
    "$B --state-dir $W/$j fold $run --format json" >/dev/null
  python3 - "$W/$j.json" "$bytes" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]; n = int(sys.argv[2])
line, fold = r[0]["mean"], r[1]["mean"]
print(f"line mode {line:.3f} s ({n/line/1e6:.0f} MB/s), fold --format json {fold:.3f} s, ratio {line/fold:.2f}x")
PY
  /usr/bin/time -f "line mode peak RSS: %M KB" "$B" --state-dir "$W/$j" show "$run" --transcript --no-tui >/dev/null
done
