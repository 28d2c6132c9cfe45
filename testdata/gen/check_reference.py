#!/usr/bin/env python3
"""Check oracle.py against the fisk agent's own answers (stdlib only).

    python3 testdata/gen/check_reference.py [AGENT_JOURNALS_DIR]

AGENT_JOURNALS_DIR defaults to /work/shared/agent-journals (its README says
how the expected files were made and how to compare them). For every journal
in v1/ and v3/ this compares the oracle with expected/<v>/<run>.json:

  - `fold` (as JSON values; an absent optional string == "" == null, a null
    message content == [], memory_revisions {} == null, times as instants),
    or the agent's refusal (`fold` null) with the oracle's FoldError;
  - `status`, `waiting`, `open_deferrals`;
  - `list.updated` (as an instant; null = the file's mtime);
  - the verify findings of each healthy journal: infos only, plus exactly
    one `version-3` warning (meta line) for a version-3 journal.

One difference from the agent is known and reported rather than failed
(KNOWN below): SPEC 1 says a `kind` token outside the six is counted as
written; the agent's fold (toolkit.ParseKind) counts it as `unknown`.
Exit status 0 when every comparison matches.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle  # noqa: E402

TIME_KEYS = {"ended", "updated", "created", "time"}


def norm(v, key=None):
    """The README's comparison rules, applied to both sides."""
    if v == "" or v is None:
        return None
    if key in TIME_KEYS and isinstance(v, str):
        inst = oracle.time_instant(v)
        return ("instant", inst) if inst is not None else v
    if isinstance(v, dict):
        if key == "memory_revisions" and not v:
            return None
        out = {k: norm(x, k) for k, x in v.items()}
        return {k: x for k, x in out.items() if x is not None}
    if isinstance(v, list):
        if key == "content" and not v:
            return None
        return [norm(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def diff(a, b, path=""):
    """First few paths where two normalised values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += diff(a.get(k), b.get(k), f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff(x, y, f"{path}/{i}")
        return out
    return [] if a == b else [f"{path}: oracle {a!r} != agent {b!r}"]


def check_one(corpus, path, expected):
    problems, notes = [], []
    name = os.path.basename(path)[:-len(".json")]
    with open(path, "rb") as f:
        data = f.read()

    try:
        st = oracle.load_and_fold(data)
        fold = oracle.fold_json(st)
    except oracle.FoldError as e:
        st, fold = None, None
        if expected["fold"] is not None:
            problems.append(f"oracle refuses the journal ({e}); the agent folds it")
    if fold is not None:
        if expected["fold"] is None:
            problems.append(f"oracle folds it; the agent refuses: {expected['fold_error']}")
        else:
            d = diff(norm(fold), norm(expected["fold"]))
            if d:
                problems += ["fold" + x for x in d[:8]]
        for key in ("status", "waiting", "open_deferrals"):
            if fold[key] != expected[key]:
                problems.append(f"{key}: oracle {fold[key]!r} != agent {expected[key]!r}")
        ls = oracle.ls_entry(name, data)
        for key in ("status", "waiting", "open_deferrals"):
            if ls[key] != expected[key]:
                problems.append(f"ls {key}: oracle {ls[key]!r} != agent {expected[key]!r}")
        want_upd = norm(expected["list"]["updated"], "updated")
        if norm(ls["updated"], "updated") != want_upd:
            problems.append(f"list.updated: oracle {ls['updated']!r} != agent {expected['list']['updated']!r}")
        if ls["version"] != expected["fold"]["version"]:
            problems.append(f"ls version {ls['version']}")

    # every journal here is healthy: infos only, plus version-3 on v3
    fs = oracle.verify_journal(name, data)
    rest = [f for f in fs if f["severity"] != "info"]
    version = (expected["fold"] or {}).get("version")
    want = [oracle.finding("version-3", 1, 1)] if version == 3 else []
    if rest != want:
        problems.append(f"findings beyond infos: {rest} (want {want})")
    return problems, notes


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "agent-journals")
    total = failed = 0
    counts = {}
    known = []
    for corpus in ("v1", "v3"):
        jdir = os.path.join(root, corpus)
        for fname in sorted(os.listdir(jdir)):
            if not fname.endswith(".json"):
                continue
            total += 1
            counts[corpus] = counts.get(corpus, 0) + 1
            with open(os.path.join(root, "expected", corpus, fname)) as f:
                expected = json.load(f)
            problems, notes = check_one(corpus, os.path.join(jdir, fname), expected)
            for n in notes:
                known.append(f"{corpus}/{fname}: {n}")
            if problems:
                failed += 1
                print(f"FAIL {corpus}/{fname}")
                for p in problems:
                    print("    " + p)
    for k in known:
        print(k)
    print(f"check_reference: {total - failed}/{total} journals match "
          f"({', '.join(f'{k} {v}' for k, v in counts.items())}); "
          f"{len(known)} known divergence(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
