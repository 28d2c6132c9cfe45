#!/usr/bin/env python3
"""The baseline verify must beat by 3x: a Python loop that only calls
json.loads on every line of every journal in a directory.

    bench/json_loads.py DIR
"""
import json, os, sys

d = sys.argv[1]
n = 0
for name in sorted(os.listdir(d)):
    if name.endswith(".json"):
        with open(os.path.join(d, name), "rb") as f:
            for line in f:
                json.loads(line)
                n += 1
print(n, "records")
