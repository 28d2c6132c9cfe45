#!/usr/bin/env python3
# The top frames of a Go CPU profile (pprof protobuf, gzipped), without
# the go tool: flat and cumulative share of the samples by function.
#   bench/pprof_top.py PROFILE
import collections, gzip, os, sys
def varint(b, i):
    r = s = 0
    while True:
        x = b[i]; i += 1
        r |= (x & 0x7f) << s; s += 7
        if x < 0x80: return r, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i); yield f, v
        elif t == 2:
            n, i = varint(b, i); yield f, b[i:i+n]; i += n
        elif t == 1: yield f, b[i:i+8]; i += 8
        elif t == 5: yield f, b[i:i+4]; i += 4
def packed(v):
    if isinstance(v, int): return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out
def load(path):
    """Total sampled nanoseconds, and flat and cumulative ones by function."""
    raw = open(path, 'rb').read()
    try: raw = gzip.decompress(raw)
    except OSError: pass
    strings, samples, locs, funcs = [], [], {}, {}
    for f, v in fields(raw):
        if f == 6: strings.append(v.decode('utf-8', 'replace'))
        elif f == 2:
            ids, vals = [], []
            for g, w in fields(v):
                if g == 1: ids += packed(w)
                elif g == 2: vals += packed(w)
            samples.append((ids, vals))
        elif f == 4:
            lid, fids = 0, []
            for g, w in fields(v):
                if g == 1: lid = w
                elif g == 4:
                    for h, x in fields(w):
                        if h == 1: fids.append(x)
            locs[lid] = fids
        elif f == 5:
            fid = name = 0
            for g, w in fields(v):
                if g == 1: fid = w
                elif g == 2: name = w
            funcs[fid] = name
    flat, cum = collections.Counter(), collections.Counter()
    total = 0
    for ids, vals in samples:
        v = vals[-1] if vals else 0
        total += v
        names = [strings[funcs[f]] for l in ids for f in locs.get(l, [])]
        if names: flat[names[0]] += v
        for n in set(names): cum[n] += v
    return total, flat, cum

if __name__ == "__main__":
    total, flat, cum = load(sys.argv[1])
    print(f"total {total/1e9:.2f} s of samples")
    print("flat:")
    for n, v in flat.most_common(15): print(f"  {100*v/total:5.1f}%  {n}")
    print("cum:")
    for n, v in cum.most_common(int(os.environ.get("TOP", "25"))): print(f"  {100*v/total:5.1f}%  {n}")
