#!/usr/bin/env python3
"""Baseline for `validate`: the Python jsonschema package validating every
record of a JSON-lines file against schemas/v1, offline (a local
referencing.Registry), with format checking on. Prints records/s.

    bench/validate_py.py FILE.jsonl
"""
import json, os, sys, time
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

here = os.path.dirname(os.path.abspath(__file__))
v1 = os.path.join(here, "..", "schemas", "v1")
resources = []
schemas = {}
for name in os.listdir(v1):
    with open(os.path.join(v1, name)) as f:
        s = json.load(f)
    resources.append((s["$id"], Resource.from_contents(s)))
    if name != "session.common.json":
        schemas["io.choria.fisk-ai.v1.session." + name[len("session."):-len(".json")]] = s
registry = Registry().with_resources(resources)
validators = {p: Draft202012Validator(s, registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)
              for p, s in schemas.items()}

t0 = time.perf_counter()
n = bad = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        rec = json.loads(line)
        v = validators.get(rec.get("protocol"))
        if v is None or any(True for _ in v.iter_errors(rec)):
            bad += 1
        n += 1
dt = time.perf_counter() - t0
print(f"python-jsonschema: {n} records, {bad} invalid, {dt:.3f} s, {n/dt:,.0f} records/s")
