#!/usr/bin/env bash
# Issue 40 item 3 on a cluster: the whole-store reads (ls, stats --all,
# inbox) with their direct gets spread over 1, 2 or 3 connections
# (FISK_ADMIN_READERS) against an R3 stream that allows direct gets (every
# replica answers them, a queue group), the file backend on the same runs
# in the same hyperfine call (bench/RESULTS.md, "Two connections on a
# cluster (item 3)"; bench/fleet_readers.sh is the one-server version).
#
#   bench/cluster_readers.sh BIN [STORE] [WORKDIR] [RUNS] [PROBES]
#     STORE    a file store (default /tmp/fisk-bench/ls10000, made with
#              `python3 bench/gen_store.py DIR --runs 10000 --bytes 20000`)
#     WORKDIR  default /tmp/fisk-clr/work
#     RUNS     hyperfine runs a command (default 10, one warm-up)
#     PROBES   single runs a (command, readers) whose server CPU and
#              connections are counted (default 3)
#     ROUNDS   (env) hyperfine calls a command, alternating (default 1); the
#              medians are over every round's runs
#
# Needs python3, hyperfine and NATS_SERVER_BIN. Starts three clustered
# nats-servers of its own on 127.0.0.1 (each with a store dir and a
# monitoring port under WORKDIR), stops them by pid on exit. All three share
# the machine's cores with the client: this shows which servers answer the
# direct gets and what the extra connections cost here, not a real
# cluster's speed-up. Build BIN with `cargo build --release --locked`.
#
# Per probe: each server's CPU seconds (utime + stime from /proc/PID/stat,
# after - before) and the client's connections the run opened, found among
# each server's closed connections (/connz?state=closed: the server it was
# on, the messages it sent and got), and the bytes each server sent the
# others over its routes (/routez: a server answering the direct gets of a
# client connected to another sends the answers there). Which server a
# connection goes to is the client library's choice (async-nats shuffles
# the URLs given); the last section gives the URLs in rotated orders, and
# one URL alone.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?binary} SRC=${2:-/tmp/fisk-bench/ls10000} W=${3:-/tmp/fisk-clr/work}
R=${4:-10} P=${5:-3} ROUNDS=${ROUNDS:-1}
: "${NATS_SERVER_BIN:?set NATS_SERVER_BIN}"
[ -d "$SRC" ] || { echo "no store at $SRC (bench/gen_store.py makes one)" >&2; exit 2; }
mkdir -p "$W"
STREAM=CLR

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done' EXIT
c=() r=() m=()
for i in 0 1 2; do c+=("$(free_port)"); r+=("$(free_port)"); m+=("$(free_port)"); done
routes=nats://127.0.0.1:${r[0]},nats://127.0.0.1:${r[1]},nats://127.0.0.1:${r[2]}
for i in 0 1 2; do
  rm -rf "$W/sd-n$i"
  "$NATS_SERVER_BIN" -js -a 127.0.0.1 -p "${c[$i]}" -m "${m[$i]}" -sd "$W/sd-n$i" --server_name "n$i" \
    --cluster_name fisk --cluster "nats://127.0.0.1:${r[$i]}" --routes "$routes" >"$W/n$i.log" 2>&1 &
  pids+=($!)
done
u() { echo "nats://127.0.0.1:${c[$1]}"; }
THREE=$(u 0),$(u 1),$(u 2)

# The helper: monitoring queries and the probes (python, written to WORKDIR).
cat >"$W/clr.py" <<'EOF'
import json, os, re, subprocess, sys, time, urllib.request
names = ["n0", "n1", "n2"]
pids = [int(p) for p in os.environ["CLR_PIDS"].split()]
mports = os.environ["CLR_MPORTS"].split()
stream = os.environ["CLR_STREAM"]

def get(i, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{mports[i]}{path}", timeout=5) as f:
        return json.load(f)

def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])  # utime, stime (fields 14 and 15)

def when(t):
    # Go's RFC 3339 with its fraction's trailing zeros cut: pad it to sort.
    m = re.match(r"(.*T[0-9:]+)(?:\.([0-9]+))?(.*)", t)
    return (m.group(1), (m.group(2) or "").ljust(9, "0"), m.group(3))

def routed():
    # Bytes each server sent the others over its routes.
    return [sum(r.get("out_bytes", 0) for r in get(i, "/routez").get("routes") or []) for i in range(3)]

def closed(i):
    z = get(i, "/connz?state=closed&limit=100000")
    return {c["cid"]: c for c in z.get("connections") or [] if c.get("name") == "fisk-admin"}

def detail(i):
    z = get(i, "/jsz?accounts=true&streams=true&config=true")
    for a in z.get("account_details") or []:
        for s in a.get("stream_detail") or []:
            if s["name"] == stream:
                return s
    return None

def stream_state():
    """(meta leader, stream leader, followers: name -> (current, lag),
    allow_direct, state), the followers as the leader sees them."""
    meta = get(0, "/jsz").get("meta_cluster", {}).get("leader", "")
    for i in range(3):
        s = detail(i)
        if s is None:
            continue
        leader = (s.get("cluster") or {}).get("leader", "")
        if leader in names:
            s = detail(names.index(leader)) or s
        cl = s.get("cluster") or {}
        reps = {x["name"]: (x.get("current"), x.get("lag", 0)) for x in cl.get("replicas") or []}
        return meta, leader, reps, (s.get("config") or {}).get("allow_direct"), s.get("state", {})
    return meta, "", {}, None, {}

mode = sys.argv[1]
if mode == "meta":
    # Until every server names the same meta leader.
    for _ in range(300):
        try:
            ls = {get(i, "/jsz").get("meta_cluster", {}).get("leader", "") for i in range(3)}
            if len(ls) == 1 and "" not in ls:
                print("meta leader:", ls.pop()); break
        except Exception:
            pass
        time.sleep(0.2)
    else:
        sys.exit("no meta leader")
elif mode == "state":
    # Until the stream's leader has two current followers, lag 0.
    for _ in range(600):
        meta, leader, reps, direct, st = stream_state()
        if leader and len(reps) == 2 and all(c and not lag for c, lag in reps.values()):
            break
        time.sleep(0.5)
    else:
        print("# the followers did not all become current within 300 s")
    print(f"meta leader {meta}; stream {stream} leader {leader}; followers "
          + ", ".join(f"{n} current={c} lag={l}" for n, (c, l) in sorted(reps.items()))
          + f"; allow_direct={direct}; messages={st.get('messages')} bytes={st.get('bytes')}")
elif mode == "probe":
    # probe LABEL READERS URLS ARGS...: one run, each server's CPU and the
    # connections it opened.
    label, readers, urls, args = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    leader = stream_state()[1]
    before_cpu = [ticks(p) for p in pids]
    before_conn = [set(closed(i)) for i in range(3)]
    before_routed = routed()
    env = dict(os.environ, FISK_ADMIN_READERS=readers)
    t0 = time.monotonic()
    out = subprocess.run([os.environ["CLR_BIN"], "--server", urls, "--store", f"jetstream:{stream}"] + args,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    time.sleep(0.5)  # the servers see the connections close
    after_cpu = [ticks(p) for p in pids]
    hz = os.sysconf("SC_CLK_TCK")
    cpu = [(a - b) / hz for a, b in zip(after_cpu, before_cpu)]
    route_mb = "/".join(f"{(a - b) / 1e6:.1f}" for a, b in zip(routed(), before_routed))
    conns = []  # in the order they were opened: the store's own first
    for i in range(3):
        for cid, cn in closed(i).items():
            if cid not in before_conn[i]:
                conns.append((when(cn["start"]), f"{names[i]}({cn['in_msgs']} / {cn['out_msgs']}, {cn['out_bytes']/1e6:.0f} MB)"))
    conns = [c for _, c in sorted(conns)]
    order = ",".join(names[[f":{p}" for p in os.environ["CLR_PORTS"].split()].index(x[x.rfind(":"):])] for x in urls.split(","))
    err = "" if out.returncode == 0 else f" EXIT {out.returncode}: {out.stderr.decode()[-300:]!r}"
    print(f"| {label} | {readers} | {order} | {wall:.2f} | "
          + " | ".join(f"{x:.2f}" + ("*" if names[i] == leader else "") for i, x in enumerate(cpu))
          + f" | {route_mb} | {len(conns)}: " + ", ".join(conns) + f" |{err}", flush=True)
EOF
export CLR_PIDS="${pids[*]}" CLR_MPORTS="${m[*]}" CLR_PORTS="${c[*]}" CLR_STREAM=$STREAM CLR_BIN=$BIN
py() { python3 "$W/clr.py" "$@"; }

echo "# $($NATS_SERVER_BIN --version); three servers n0-n2 on 127.0.0.1 (client ports ${c[*]}); $(nproc) cores shared by all"
py meta
for _ in $(seq 100); do
  "$BIN" --server "$THREE" stream create "$STREAM" --subject 'clr.>' --replicas 3 >"$W/create.out" 2>&1 && break
  sleep 0.3
done
cat "$W/create.out"
runs=$(find "$SRC" -maxdepth 1 -name '*.json' | wc -l)
echo "# store $SRC: $runs runs, $(du -sh "$SRC" | cut -f1)"
t0=$(date +%s.%N)
"$BIN" --server "$THREE" migrate --from "file:$SRC" --to "jetstream:$STREAM" --all --quiet
t1=$(date +%s.%N)
python3 -c "print(f'# migrate {$runs} runs into the R3 stream: {($t1-$t0):.1f} s')"
py state
"$BIN" --server "$THREE" stream check "$STREAM" || true

# Two listings before measuring (the servers' first ones cost more).
"$BIN" --server "$THREE" --store "jetstream:$STREAM" ls --format json >/dev/null
"$BIN" --server "$THREE" --store "jetstream:$STREAM" ls --format json >/dev/null

cmds=("ls --format json" "stats --all --format json" "inbox --format json")
echo
echo "## hyperfine: the file backend, then FISK_ADMIN_READERS=1, 2, 3 (URLs n0,n1,n2); $ROUNDS round(s) of $R runs"
for k in $(seq "$ROUNDS"); do
  for cmd in "${cmds[@]}"; do
    echo "# round $k, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    hyperfine -N --warmup 1 --runs "$R" --export-json "$W/hf-${cmd%% *}-$k.json" \
      "$BIN --state-dir $SRC $cmd" \
      "env FISK_ADMIN_READERS=1 $BIN --server $THREE --store jetstream:$STREAM $cmd" \
      "env FISK_ADMIN_READERS=2 $BIN --server $THREE --store jetstream:$STREAM $cmd" \
      "env FISK_ADMIN_READERS=3 $BIN --server $THREE --store jetstream:$STREAM $cmd" ||
      { echo "# FAILED: hyperfine of $cmd"; rm -f "$W/hf-${cmd%% *}-$k.json"; }
    echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
echo "## medians over every round's runs (± their standard deviation; x: to the file backend)"
echo "| command | file | readers 1 | readers 2 | readers 3 | runs each |"
echo "|---|---|---|---|---|---|"
for cmd in "${cmds[@]}"; do
  python3 - "$cmd" "$W"/hf-"${cmd%% *}"-*.json <<'EOF'
import json, statistics, sys
times = [[], [], [], []]
for path in sys.argv[2:]:
    for i, r in enumerate(json.load(open(path))["results"]):
        times[i] += r["times"]
if not times[0]:
    print(f"| `{sys.argv[1]}` | failed | | | | |"); sys.exit()
med = [statistics.median(t) for t in times]
sd = [statistics.stdev(t) if len(t) > 1 else 0 for t in times]
cell = lambda i: f"{med[i]:.3f} s ± {sd[i]:.3f}" + ("" if i == 0 else f" ({med[i]/med[0]:.2f}x)")
print(f"| `{sys.argv[1]}` | " + " | ".join(cell(i) for i in range(4)) + f" | {len(times[0])} |")
EOF
done

echo
echo "## probes: one run each, server CPU seconds (* the stream leader), the client's connections"
hdr() {
  echo "| command | readers | URL order | wall s | n0 CPU s | n1 CPU s | n2 CPU s | MB sent over routes n0/n1/n2 | connections, as opened: server (msgs in / out, MB out) |"
  echo "|---|---|---|---|---|---|---|---|---|"
}
hdr
for cmd in "${cmds[@]}"; do
  for n in 1 2 3; do
    # shellcheck disable=SC2086
    for _ in $(seq "$P"); do py probe "${cmd%% *}" "$n" "$THREE" $cmd; done
  done
done

echo
echo "## URL orders: ls, 3 connections, the URLs rotated, then one URL alone"
hdr
for order in "0 1 2" "1 2 0" "2 0 1" "0" "1" "2"; do
  urls=$(for i in $order; do u "$i"; done | paste -sd,)
  for _ in $(seq "$P"); do py probe ls 3 "$urls" ls --format json; done
done
echo
echo "## hyperfine: ls, 3 connections over three URLs against all three on one server (n0's URL alone)"
hyperfine -N --warmup 1 --runs "$R" \
  "env FISK_ADMIN_READERS=3 $BIN --server $THREE --store jetstream:$STREAM ls --format json" \
  "env FISK_ADMIN_READERS=3 $BIN --server $(u 0) --store jetstream:$STREAM ls --format json"
py state
