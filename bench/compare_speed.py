#!/usr/bin/env python3
"""Wall time of the file backend's main reads and migrate, two or more
builds side by side: medians of N interleaved runs (bench/RESULTS.md,
issue 25, "Memory, the cause").

    chrt -f 50 bench/compare_speed.py WORKDIR BASELINE_BIN OTHER_BIN...

N (default 7) rounds; ONLY=TEXT runs only the commands whose name holds
TEXT. Stores are made under WORKDIR by bench/gen_store.py when missing:
10,000 runs x 20 KB, 100 runs x 4 MB, 2,000 runs x 20 KB. Ratios are
against the first binary, measured in the same run.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
work, bins = sys.argv[1], sys.argv[2:]
N = int(os.environ.get("N", "7"))
only = os.environ.get("ONLY")


def store(name, runs, size):
    path = os.path.join(work, name)
    if not os.path.isdir(path):
        subprocess.run([sys.executable, os.path.join(here, "gen_store.py"), path,
                        "--runs", str(runs), "--bytes", str(size)],
                       check=True, stdout=subprocess.DEVNULL)
    return path


os.makedirs(work, exist_ok=True)
ls10k, big, r2k = store("ls10k", 10000, 20000), store("big", 100, 4000000), store("r2k", 2000, 20000)
cmds = [
    ("ls --format json, 10,000 runs", ["--state-dir", ls10k, "ls", "--format", "json"]),
    ("stats --all --format json, 10,000 runs", ["--state-dir", ls10k, "stats", "--all", "--format", "json"]),
    ("search --match NO-SUCH-WORD --in all, 10,000 runs",
     ["--state-dir", ls10k, "search", "--match", "NO-SUCH-WORD", "--in", "all"]),
    ("verify --no-schema, 100 x 4 MB", ["--state-dir", big, "verify", "--no-schema"]),
    ("verify, 100 x 4 MB", ["--state-dir", big, "verify"]),
    ("migrate file -> file, 2,000 runs", None),
]
print("| command | " + " | ".join(os.path.basename(b) for b in bins) + " | " +
      " | ".join(f"{os.path.basename(b)} / {os.path.basename(bins[0])}" for b in bins[1:]) + " |")
for name, args in cmds:
    if only and only not in name:
        continue
    times = {b: [] for b in bins}
    for _ in range(N):
        for b in bins:
            dest = None
            if args is None:
                dest = tempfile.mkdtemp(dir=work)
                a = ["migrate", "--from", "file:" + r2k, "--to", "file:" + dest, "--all"]
            else:
                a = args
            t = time.perf_counter()
            subprocess.run([b] + a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[b].append(time.perf_counter() - t)
            if dest:
                shutil.rmtree(dest)
    med = {b: statistics.median(v) for b, v in times.items()}
    print(f"| {name} | " +
          " | ".join(f"{med[b]:.3f} s ({min(times[b]):.3f}-{max(times[b]):.3f})" for b in bins) + " | " +
          " | ".join(f"{med[b] / med[bins[0]]:.2f}" for b in bins[1:]) + " |", flush=True)
