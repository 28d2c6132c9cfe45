# Sourced by bench scripts: start_nats DIR starts a nats-server (from PATH)
# with JetStream on a free 127.0.0.1 port, its store in DIR/nats and its log
# in DIR/nats.log, waits until it takes connections, stops it when the
# script exits, and sets S to the `--server URL` flag for fisk-admin.
start_nats() {
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  nats-server -js -a 127.0.0.1 -p "$port" -sd "$1/nats" >"$1/nats.log" 2>&1 &
  NATS_PID=$!
  trap 'kill $NATS_PID 2>/dev/null; wait $NATS_PID 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  S="--server nats://127.0.0.1:$port"
}
