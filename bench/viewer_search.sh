#!/usr/bin/env bash
# Issue 27 section 6: the cost of the viewer's counted regex search.
#   bench/viewer_search.sh [WORKDIR] [PATTERN...]
# Needs tmux, python3, /usr/bin/time. On the 100 MB journal of
# bench/viewer.sh (bench/gen_store.py, version 1), in a detached 200x50
# tmux pane: `G` first (every block indexed), then `/PATTERN` Enter; it
# prints the seconds from Enter until the status bar shows the match count
# (every block decoded and matched once), then the same for `n` (a step in
# the list), and the viewer's peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/fisk-bench-viewer}
shift || true
[ $# -gt 0 ] || set -- 'toolu_9[0-9]{3}_0\b' 'stream'
mkdir -p "$W"
cargo build --release --locked -q
B=${CARGO_TARGET_DIR:-$PWD/target}/release/fisk-admin
S=fisk-bench-search-$$
trap 'tmux -L $S kill-server 2>/dev/null || true' EXIT
[ -d "$W/j100" ] || python3 bench/gen_store.py "$W/j100" --runs 1 --bytes 100000000 --format-version 1
f=$(ls "$W/j100"/*.json | head -1)
R=$(basename "$f" .json)

wait_for() { until tmux -L "$S" capture-pane -p -t b | tail -1 | grep -q -- "$1"; do sleep 0.01; done; }
for P in "$@"; do
  tmux -L "$S" kill-server 2>/dev/null || true
  rm -f "$W/rss"
  tmux -L "$S" -f /dev/null new-session -d -s b -x 200 -y 50 \
    "NO_COLOR=1 /usr/bin/time -f %M -o $W/rss $B --state-dir $W/j100 show $R --transcript; sleep 600"
  wait_for "$R · block"
  tmux -L "$S" send-keys -t b G
  until tmux -L "$S" capture-pane -p -t b | grep -q "run status"; do sleep 0.01; done
  tmux -L "$S" send-keys -t b g /
  tmux -L "$S" send-keys -t b -l "$P"
  start=$(date +%s.%N)
  tmux -L "$S" send-keys -t b Enter
  wait_for 'match [0-9]*/\|not found'
  end=$(date +%s.%N)
  count=$(tmux -L "$S" capture-pane -p -t b | tail -1 | grep -o 'match [0-9]*/[0-9]*\|not found.*')
  before=$(tmux -L "$S" capture-pane -p -t b | tail -1)
  start2=$(date +%s.%N)
  tmux -L "$S" send-keys -t b n
  until [ "$(tmux -L "$S" capture-pane -p -t b | tail -1)" != "$before" ]; do sleep 0.005; done
  end2=$(date +%s.%N)
  tmux -L "$S" send-keys -t b q
  until [ -s "$W/rss" ]; do sleep 0.05; done
  python3 -c 'import sys; p, c, a, b, x, y, rss = sys.argv[1:]; print(f"/{p}: {c}: first search {float(b)-float(a):.2f} s, n {float(y)-float(x):.3f} s, peak RSS {rss} KB")' \
    "$P" "$count" "$start" "$end" "$start2" "$end2" "$(cat "$W/rss")"
  rm -f "$W/rss"
done
