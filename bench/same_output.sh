#!/usr/bin/env bash
# Every reading command's output, old binary against new, over the shipped
# corpus: stdout, stderr and the exit status of each, in JSON and in text,
# per run and store-wide. A restructure keeps them byte-identical.
#
#   bench/same_output.sh OLD_BIN NEW_BIN [WORKDIR]
#
# Both binaries read the same copies (the store path is in some outputs), so
# any difference is the binaries'. With NATS_SERVER_BIN set, the corpus is
# also put on a JetStream stream (by the old binary) and read there.
# Prints each command that differs, with a diff, and exits 1 if any did.
set -uo pipefail
OLD=${1:?old binary} NEW=${2:?new binary}
W=${3:-$(mktemp -d)}
cd "$(dirname "$0")/.."
mkdir -p "$W"
export NO_COLOR=1 COLUMNS=200 NO_TUI=1 TZ=UTC
unset FISK_ADMIN_STORE NATS_URL NATS_CONTEXT
n=0 bad=0

same() { # same LABEL ARGS...: run both, compare
  local label=$1; shift
  n=$((n + 1))
  "$OLD" "$@" >"$W/o.out" 2>"$W/o.err" </dev/null; echo "exit $?" >>"$W/o.err"
  "$NEW" "$@" >"$W/n.out" 2>"$W/n.err" </dev/null; echo "exit $?" >>"$W/n.err"
  # The time a command took is the one figure allowed to differ.
  sed -i -E 's/"seconds":[0-9.e-]+/"seconds":T/g; s/, [0-9]+\.[0-9]+ s\b/, T s/g; s/ [0-9]+\.[0-9]{3} *$/ T/' \
    "$W/o.out" "$W/n.out" "$W/o.err" "$W/n.err"
  if ! cmp -s "$W/o.out" "$W/n.out" || ! cmp -s "$W/o.err" "$W/n.err"; then
    bad=$((bad + 1))
    echo "DIFFERS ($label): $*"
    diff "$W/o.out" "$W/n.out" | head -20
    diff "$W/o.err" "$W/n.err" | head -20
  fi
}

corpus() { # corpus STORE_ARGS... : every reading command over one store
  local ids
  ids=$("$OLD" "$@" ls --format json 2>/dev/null | python3 -c 'import json,sys; print(" ".join(r["run_id"] for r in json.load(sys.stdin)))' 2>/dev/null)
  for f in json text; do
    same ls "$@" --format $f ls
    same ls-waiting "$@" --format $f ls --waiting
    same verify "$@" --format $f verify
    same verify-details "$@" --format $f verify --details --strict
    same validate "$@" --format $f validate --all
    same search "$@" --format $f search --match 'a|e' --in all
    same stats-all "$@" --format $f stats --all --by model,agent,tool,day
    same info "$@" --format $f info
    for id in $ids; do
      same show "$@" --format $f show "$id"
      same transcript "$@" --format $f show "$id" --transcript --no-tui --thinking
      same fold "$@" --format $f fold "$id"
      same stats "$@" --format $f stats "$id"
      same query "$@" --format $f query "$id"
      same verify-run "$@" --format $f verify "$id"
      same validate-run "$@" --format $f validate "$id"
      same repair-dry "$@" --format $f repair "$id" --dry-run
      same upgrade-dry "$@" --format $f upgrade "$id" --dry-run
    done
  done
}

for d in testdata/runs testdata/runs-v1 testdata/damaged testdata/damaged-v1 \
  testdata/agent-journals/v1 testdata/agent-journals/v3; do
  s="$W/stores/${d//\//_}"
  rm -rf "$s" && mkdir -p "$s" && cp "$d"/*.json "$s"/ && chmod 700 "$s" && chmod 600 "$s"/*.json
  corpus --state-dir "$s"
done

if [ -n "${NATS_SERVER_BIN:-}" ]; then
  port=$((20000 + RANDOM % 20000))
  "$NATS_SERVER_BIN" -a 127.0.0.1 -p "$port" -js -sd "$W/js" >"$W/nats.log" 2>&1 &
  pid=$!
  sleep 1
  export NATS_URL=nats://127.0.0.1:$port
  "$OLD" stream create SAME --subject 'fisk.sessions.>' >/dev/null
  for d in runs runs-v1 agent-journals_v1 agent-journals_v3; do
    "$OLD" migrate --from "file:$W/stores/testdata_$d" --to jetstream:SAME --all >/dev/null 2>&1
  done
  corpus --store jetstream:SAME --hold 0
  kill "$pid"
fi

echo "$n commands, $bad differ"
[ "$bad" -eq 0 ]
