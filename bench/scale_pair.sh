#!/usr/bin/env bash
# Issue 40, item 2: one command's cost per run at two store sizes, measured
# in the same rounds (each round runs it on the small store, then on the
# large one, on each stream), so the machine's noise falls on both sides.
#
#   [CMD="inbox --format json"] [B=fisk-admin] [STREAMS="ORD SHUF"] bench/scale_pair.sh WORKDIR SMALL LARGE [ROUNDS]
#
# WORKDIR holds the nats-server stores bench/fleet_scale.sh made
# (WORKDIR/js<SMALL>, WORKDIR/js<LARGE>, each with streams ORD and SHUF).
# Both servers run at once, each on a free port; every command is run once
# on each stream before the rounds (the first ones after a server starts
# cost it more). Prints, per round, stream and size: client and server CPU
# (s; the server's utime+stime from /proc) and both per run (us), then the
# ratio of the large store's cost per run to the small one's in that round.
set -euo pipefail
cd "$(dirname "$0")/.."
W=$1
SMALL=$2
LARGE=$3
ROUNDS=${4:-5}
B=${B:-target/release/fisk-admin}
read -r -a C <<<"${CMD:-inbox --format json}"
read -r -a S <<<"${STREAMS:-ORD SHUF}"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A PORT PID
for n in "$SMALL" "$LARGE"; do
  PORT[$n]=$(free_port)
  nats-server -a 127.0.0.1 -p "${PORT[$n]}" -js -sd "$W/js$n" >"$W/pair-nats$n.log" 2>&1 &
  PID[$n]=$!
done
trap 'kill "${PID[@]}" 2>/dev/null; wait 2>/dev/null || true' EXIT
for n in "$SMALL" "$LARGE"; do
  for _ in $(seq 1200); do grep -q "Server is ready" "$W/pair-nats$n.log" && break; sleep 0.2; done
done
cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$1/stat"; }
run() { # run SIZE STREAM: "client_s server_s"
  local n=$1 s=$2 c0 c1
  c0=$(cpu "${PID[$n]}")
  NATS_URL="nats://127.0.0.1:${PORT[$n]}" /usr/bin/time -o "$W/pair-time" -f "%U %S" \
    "$B" --store "jetstream:$s" "${C[@]}" >/dev/null 2>"$W/pair-err"
  c1=$(cpu "${PID[$n]}")
  read -r u sy <"$W/pair-time"
  python3 -c "print(f'{$u+$sy:.2f} {$c1-$c0:.2f}')"
}
for n in "$SMALL" "$LARGE"; do for s in "${S[@]}"; do run "$n" "$s" >/dev/null; done; done
echo "nats-server $(nats-server --version 2>&1 | head -1), $(nproc) cores, ${C[*]}"
echo "round | stream | client s ($SMALL / $LARGE) | server s ($SMALL / $LARGE) | us/run ($SMALL / $LARGE) | ratio"
for r in $(seq "$ROUNDS"); do
  for s in "${S[@]}"; do
    read -r cs ss < <(run "$SMALL" "$s")
    read -r cl sl < <(run "$LARGE" "$s")
    python3 -c "
a=($cs+$ss)/$SMALL*1e6; b=($cl+$sl)/$LARGE*1e6
print(f'$r | $s | $cs / $cl | $ss / $sl | {a:.1f} / {b:.1f} | {b/a:.2f}x')"
  done
done
