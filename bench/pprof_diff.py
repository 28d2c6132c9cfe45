#!/usr/bin/env python3
# Two nats-server CPU profiles of one command on stores of different
# sizes, per unit (per run): which frames grow. Cumulative microseconds a
# unit at each size, and their ratio, largest growth first.
#   bench/pprof_diff.py SMALL.pprof N_SMALL LARGE.pprof N_LARGE
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pprof_top import load

a_path, a_n, b_path, b_n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
a_total, a_flat, a_cum = load(a_path)
b_total, b_flat, b_cum = load(b_path)
us = lambda ns, n: ns / 1e3 / n
print(f"total: {us(a_total, a_n):.1f} us a unit at {a_n}, {us(b_total, b_n):.1f} at {b_n}: "
      f"{(b_total / b_n) / (a_total / a_n):.2f}x")
for name, a, b in (("cum", a_cum, b_cum), ("flat", a_flat, b_flat)):
    top = int(os.environ.get("TOP", "30"))
    # The frames that matter at the large size, then by growth a unit.
    keys = [k for k, _ in b.most_common(top)]
    rows = []
    for k in keys:
        x, y = us(a.get(k, 0), a_n), us(b[k], b_n)
        rows.append((y - x, k, x, y))
    rows.sort(reverse=True)
    print(f"{name} (us a unit: small, large, large - small):")
    for d, k, x, y in rows:
        print(f"  {x:7.2f} {y:7.2f} {d:+7.2f}  {k}")
