# Sourced by bench/fleet_js.sh and bench/fleet_memory.sh, with W (work dir)
# and N (runs) set: builds the release binary (B), makes the N x 20 KB
# store (S), starts a nats-server of its own on a free port with a
# temporary store (PID, stopped on exit; its monitoring port MPORT) and
# copies S into stream FLEET.
mkdir -p "$W"
cargo build --release --locked -q
B=${CARGO_TARGET_DIR:-$PWD/target}/release/fisk-admin
S="$W/ls$N"
[ -d "$S" ] || python3 bench/gen_store.py "$S" --runs "$N" --bytes 20000
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
# The monitoring port (MPORT): /varz counts the messages in and out.
MPORT=$(free_port)
JS=$(mktemp -d)
nats-server -a 127.0.0.1 -p "$PORT" -m "$MPORT" -js -sd "$JS" >"$JS/log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; rm -rf "$JS"' EXIT
for _ in $(seq 50); do nc -z 127.0.0.1 "$PORT" 2>/dev/null && break; sleep 0.1; done
export NATS_URL="nats://127.0.0.1:$PORT"
"$B" stream create FLEET --subject 'fleet.>' >/dev/null
start=$(date +%s.%N)
"$B" migrate --from "file:$S" --to jetstream:FLEET --all --format json >/dev/null
end=$(date +%s.%N)
python3 -c "print(f'migrate $N runs into the stream: {($end-$start):.1f} s')"
