"""Independent reference model of the fisk journal rules (stdlib only).

Written from /work/shared/SPEC.md (sections 1, 3, 9, 11) and docs/OUTPUT.md,
never from the Rust code: it is the oracle the expected results in
testdata/expected/ come from. It is deliberately simple and literal; every
place where the documents leave a choice open is marked `DECISION:` and listed
in testdata/README.md.

Entry points:
  verify_journal(stored_id, data) -> [finding]      content-level findings
  verify_dir(path)                -> {key: [finding]} adds file-level findings
  fold(records) -> RunState   (raises FoldError)
  fold_json(state) -> dict     the `fold --format json` object
  ls_entry(stored_id, data) -> dict  the `ls --format json` fields we pin
"""

import base64
import binascii
import json
import os
import re
import unicodedata

PREFIX = "io.choria.fisk-ai.v1.session."
KINDS = (
    "meta", "assistant", "user", "tool_result", "deferred", "decision",
    "call_approval", "memory_revisions", "terminal", "claim",
)
PROTOCOLS = {PREFIX + k: k for k in KINDS}
INERT = {"claim", "decision", "call_approval", "memory_revisions"}
REASONS = ("completed", "suspended", "error", "budget", "max_iterations")
ID_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_-]*$")
CURRENT_VERSION = 3

SEVERITY = {
    "torn-tail": "warning",
    "unterminated-final-record": "warning",
    "garbage-final-line": "warning",
    "interior-corruption": "error",
    "empty-journal": "error",
    "no-meta": "error",
    "meta-seq": "error",
    "duplicate-meta": "error",
    "seq-not-increasing": "error",
    "seq-gap": "error",
    "version-newer": "error",
    "version-older": "warning",
    "unknown-protocol": "error",
    "skipped-optional": "info",
    "missing-payload": "error",
    "extra-payload": "error",
    "orphan-result": "error",
    "unknown-tool-use": "warning",
    "duplicate-result": "warning",
    "schema": "error",
    "run-id-mismatch": "error",
    "invalid-id": "warning",
    "permissions": "warning",
    "symlink": "warning",
    "orphan-lock": "info",
    "live": "info",
    "open-deferrals": "info",
    "fold": "error",
}


class FoldError(Exception):
    pass


def valid_id(s):
    return bool(ID_RE.match(s)) and len(s.encode()) <= 128


def finding(code, line=None, seq=None):
    return {"code": code, "severity": SEVERITY[code], "line": line, "seq": seq}


# ---------------------------------------------------------------- framing

def split_lines(data):
    """[(line_no, offset, bytes, terminated)]; an empty final piece is no line."""
    out = []
    parts = data.split(b"\n")
    offset = 0
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and part == b"":
            break
        out.append((i + 1, offset, part, not last))
        offset += len(part) + 1
    return out


def parse_line(raw):
    """The JSON object on the line, or None when the line is unparsable."""
    try:
        text = raw.decode("utf-8")
        obj = json.loads(text, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def _reject_constant(name):  # NaN / Infinity are not JSON
    raise ValueError(name)


# ---------------------------------------------------------------- record types

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and -(2**63) <= v < 2**64


def _is_str(v):
    return isinstance(v, str)


def _is_bool(v):
    return isinstance(v, bool)


def _check_fields(obj, spec, path):
    """spec: {field: checker}; present fields must have the right JSON type.
    DECISION: an absent field reads as its zero value (Go decoding), so only
    present fields are type-checked here."""
    if not isinstance(obj, dict):
        return [path]
    bad = []
    for k, check in spec.items():
        if k in obj and not check(obj[k], f"{path}/{k}", bad):
            bad.append(f"{path}/{k}")
    return bad


def _t(pred):
    return lambda v, p, bad: pred(v)


def _nullable(check):
    return lambda v, p, bad: v is None or check(v, p, bad)


def _any(v, p, bad):
    return True


def _base64(v, p, bad):
    if not isinstance(v, str):
        return False
    try:
        base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _obj(spec):
    def check(v, p, bad):
        sub = _check_fields(v, spec, p)
        bad.extend(s for s in sub if s != p)
        return isinstance(v, dict)
    return check


BLOCK_SPECS = {
    "text": {"text": _t(_is_str)},
    "thinking": {"text": _t(_is_str), "signature": _base64},
    "tool_use": {"id": _t(_is_str), "name": _t(_is_str), "input": _any},
    "tool_result": {"tool_use_id": _t(_is_str), "content": _t(_is_str),
                    "is_error": _t(_is_bool)},
    "provider": {"kind": _t(_is_str), "raw": _any},
}


def _block(v, p, bad):
    if not isinstance(v, dict) or len(v) != 1:
        return False
    (k, inner), = v.items()
    if k not in BLOCK_SPECS:
        return False
    return _obj(BLOCK_SPECS[k])(inner, f"{p}/{k}", bad)


def _content(v, p, bad):
    if v is None:
        return True
    if not isinstance(v, list):
        return False
    for i, b in enumerate(v):
        if not _block(b, f"{p}/{i}", bad):
            bad.append(f"{p}/{i}")
    return True


MESSAGE = {"role": _t(_is_str), "content": _content}
FINGERPRINT = {
    "provider": _t(_is_str), "model": _t(_is_str), "system_hash": _t(_is_str),
    "tools_hash": _t(_is_str), "thinking_mode": _t(_is_str),
    "reasoning_effort": _t(_is_str), "max_tokens": _t(_is_int),
    "max_iterations": _t(_is_int),
}


def _revisions(v, p, bad):
    if v is None:
        return True
    if not isinstance(v, dict):
        return False
    for k, n in v.items():
        if not _is_int(n):
            bad.append(f"{p}/{k}")
    return True


PAYLOAD_SPECS = {
    "meta": {"version": _t(_is_int), "run_id": _t(_is_str), "created": _t(_is_str),
             "fingerprint": _obj(FINGERPRINT), "prompt": _t(_is_str),
             "interactive": _t(_is_bool), "conversation_token": _t(_is_str),
             "caller": _t(_is_str)},
    "assistant": {"iteration": _t(_is_int), "message": _obj(MESSAGE),
                  "stop_reason": _t(_is_str), "in_tokens": _t(_is_int),
                  "out_tokens": _t(_is_int), "cache_read_tokens": _t(_is_int),
                  "cache_create_tokens": _t(_is_int), "thinking_tokens": _t(_is_int)},
    "user": {"message": _obj(MESSAGE)},
    "tool_result": {"tool_use_id": _t(_is_str),
                    "result": _obj(BLOCK_SPECS["tool_result"]),
                    "remote": _t(_is_bool)},
    "deferred": {"tool_use_id": _t(_is_str), "tool_name": _t(_is_str),
                 "note": _t(_is_str), "handle": _t(_is_str)},
    "decision": {"tool": _t(_is_str)},
    "call_approval": {"tool_use_id": _t(_is_str), "tool_name": _t(_is_str)},
    "memory_revisions": {"revisions": _revisions},
    "terminal": {"reason": _t(_is_str), "message": _t(_is_str)},
    "claim": {"by": _t(_is_str), "claimed": _t(_is_str)},
}


def type_errors(rec):
    """Instance paths whose JSON type is wrong for the format ([] when fine).
    Only envelope fields and payloads of known protocols are checked."""
    bad = []
    if "seq" in rec and not _is_int(rec["seq"]):
        bad.append("/seq")
    if "protocol" in rec and not _is_str(rec["protocol"]):
        bad.append("/protocol")
    if "optional" in rec and not _is_bool(rec["optional"]):
        bad.append("/optional")
    kind = PROTOCOLS.get(rec.get("protocol"))
    if kind is not None and rec.get(kind) is not None:
        bad.extend(_check_fields(rec[kind], PAYLOAD_SPECS[kind], "/" + kind))
    return bad


def kind_of(rec):
    """The known kind, or None for an unknown protocol."""
    p = rec.get("protocol")
    return PROTOCOLS.get(p) if isinstance(p, str) else None


# ---------------------------------------------------------------- fold (SPEC 3)

def _content_list(message):
    c = (message or {}).get("content")
    return list(c) if c is not None else []


def _norm_message(message):
    return {"role": message.get("role", ""), "content": _content_list(message)}


def _tool_use_ids(message):
    return [b["tool_use"].get("id", "") for b in _content_list(message)
            if isinstance(b, dict) and "tool_use" in b]


def fold(records, any_version=False):
    """records: parsed record objects in journal order. Raises FoldError."""
    if not records:
        raise FoldError("empty journal")
    for r in records:
        if type_errors(r):
            raise FoldError(f"seq {r.get('seq')}: wrong JSON type at {type_errors(r)}")
    first = records[0]
    if kind_of(first) != "meta" or first.get("meta") is None:
        raise FoldError("first record is not meta")
    meta = first["meta"]
    if meta.get("version", 0) != CURRENT_VERSION and not any_version:
        raise FoldError(f"version {meta.get('version', 0)} != {CURRENT_VERSION}")

    st = {
        "meta": meta,
        "messages": [{"role": "user", "content": [{"text": {"text": meta.get("prompt", "")}}]}],
        "counters": {k: 0 for k in ("llm_calls", "tool_calls", "remote_tool_calls",
                                    "in_tokens", "out_tokens", "cache_read_tokens",
                                    "cache_create_tokens", "thinking_tokens")},
        "last_iteration": None,
        "last_stop_reason": "",
        "pending": None,
        "approvals": [],
        "call_approvals": [],
        "memory_revisions": {},
        "terminal": None,
        "last_non_inert": "meta",
    }
    turn = None
    prev = first.get("seq", 0)

    def commit(t):
        st["messages"].append(_norm_message(t["message"]))
        if t["results"]:
            st["messages"].append({"role": "user",
                                   "content": [{"tool_result": r} for r in t["results"]]})

    for r in records[1:]:
        seq = r.get("seq", 0)
        if seq <= prev:
            raise FoldError(f"seq {seq} does not increase (previous {prev})")
        prev = seq
        kind = kind_of(r)
        if kind is None:
            if r.get("optional") is True:
                continue
            raise FoldError(f"seq {seq}: unknown protocol {r.get('protocol')!r}")
        p = r.get(kind)
        if p is None:
            raise FoldError(f"seq {seq}: {kind} without payload")
        if kind not in INERT:
            st["last_non_inert"] = kind
        c = st["counters"]
        if kind == "meta":
            raise FoldError(f"seq {seq}: second meta record")
        elif kind == "assistant":
            if turn is not None:
                commit(turn)
            turn = {"message": p.get("message") or {}, "iteration": p.get("iteration", 0),
                    "stop_reason": p.get("stop_reason", ""), "results": [],
                    "answered": set(), "deferred": []}
            c["llm_calls"] += 1
            for k in ("in_tokens", "out_tokens", "cache_read_tokens",
                      "cache_create_tokens", "thinking_tokens"):
                c[k] += p.get(k, 0)
            st["last_iteration"] = p.get("iteration", 0)
            st["last_stop_reason"] = p.get("stop_reason", "")
        elif kind == "tool_result":
            if turn is None:
                raise FoldError(f"seq {seq}: tool_result outside a turn")
            turn["results"].append(p.get("result") or {})
            turn["answered"].add(p.get("tool_use_id", ""))
            c["tool_calls"] += 1
            if p.get("remote"):
                c["remote_tool_calls"] += 1
        elif kind == "deferred":
            if turn is None:
                raise FoldError(f"seq {seq}: deferred outside a turn")
            turn["deferred"].append(p)
        elif kind == "user":
            if turn is not None:
                commit(turn)
                turn = None
            m = p.get("message") or {}
            blocks = _content_list(m)
            if st["messages"][-1]["role"] == "user":
                st["messages"][-1]["content"].extend(blocks)
            else:
                st["messages"].append({"role": m.get("role", "user"), "content": blocks})
        elif kind == "decision":
            st["approvals"].append(p.get("tool", ""))
        elif kind == "call_approval":
            st["call_approvals"].append({"tool_use_id": p.get("tool_use_id", ""),
                                         "tool_name": p.get("tool_name", "")})
        elif kind == "memory_revisions":
            st["memory_revisions"] = dict(p.get("revisions") or {})
        elif kind == "terminal":
            st["terminal"] = p
            st["call_approvals"] = []
        elif kind == "claim":
            pass

    if turn is not None:
        if all(i in turn["answered"] for i in _tool_use_ids(turn["message"])):
            commit(turn)
        else:
            deferred = sorted(turn["deferred"], key=lambda d: d.get("tool_use_id", ""))
            st["pending"] = {
                "assistant": _norm_message(turn["message"]),
                "iteration": turn["iteration"],
                "stop_reason": turn["stop_reason"] or None,
                "results": turn["results"],
                "answered": sorted(turn["answered"]),
                "deferred": deferred,
                "open_deferrals": [d for d in deferred
                                   if d.get("tool_use_id", "") not in turn["answered"]],
            }
    return st


def open_deferrals(st):
    return st["pending"]["open_deferrals"] if st["pending"] else []


def status(st):
    """SPEC 9 without `live`."""
    if open_deferrals(st):
        return "waiting"
    if st["last_non_inert"] == "terminal":
        return st["terminal"].get("reason", "")
    return "open"


def fold_json(st):
    m = st["meta"]
    fp = m.get("fingerprint") or {}
    t = st["terminal"]
    return {
        "version": m.get("version", 0),
        "run_id": m.get("run_id", ""),
        "fingerprint": {
            "provider": fp.get("provider", ""),
            "model": fp.get("model", ""),
            "system_hash": fp.get("system_hash", ""),
            "tools_hash": fp.get("tools_hash", ""),
            "thinking_mode": fp.get("thinking_mode", ""),
            "reasoning_effort": fp.get("reasoning_effort", ""),
            "max_tokens": fp.get("max_tokens", 0),
            "max_iterations": fp.get("max_iterations", 0),
        },
        "prompt": m.get("prompt", ""),
        "interactive": bool(m.get("interactive", False)),
        "conversation_token": m.get("conversation_token") or None,
        "caller": m.get("caller") or None,
        "messages": st["messages"],
        "counters": st["counters"],
        "next_iteration": (st["last_iteration"] + 1) if st["last_iteration"] is not None else 0,
        "last_stop_reason": st["last_stop_reason"] or None,
        "pending": st["pending"],
        "approvals": st["approvals"],
        "call_approvals": st["call_approvals"],
        "memory_revisions": st["memory_revisions"],
        "terminal": None if t is None else {"reason": t.get("reason", ""),
                                           "message": t.get("message") or None},
        "completed": t is not None and t.get("reason") == "completed",
        "status": status(st),
    }


def tail_status(records):
    """SPEC 9 as `ls` computes it: meta plus records from the tail back to the
    last assistant record. Used to cross-check `status(fold(...))`."""
    last_asst = None
    for i in range(len(records) - 1, 0, -1):
        if kind_of(records[i]) == "assistant":
            last_asst = i
            break
    if last_asst is not None:
        open_turn = True
        answered, deferred = set(), set()
        for r in records[last_asst + 1:]:
            k = kind_of(r)
            if k == "user":
                open_turn = False
            elif k == "tool_result":
                answered.add(r["tool_result"].get("tool_use_id"))
            elif k == "deferred":
                deferred.add(r["deferred"].get("tool_use_id"))
        ids = _tool_use_ids(records[last_asst]["assistant"].get("message"))
        pending = open_turn and not all(i in answered for i in ids)
        if pending and (deferred - answered):
            return "waiting"
    for r in reversed(records):
        k = kind_of(r)
        if k is None or k in INERT:
            continue
        return r["terminal"].get("reason") if k == "terminal" else "open"
    return "open"


# ---------------------------------------------------------------- reading

def decode_line(raw):
    """A line "parses" when Go's json.Unmarshal into the record type would
    succeed: valid JSON *and* every present field of the right JSON type
    (DECISION, lead: a wrong-typed field makes the line unparsable, exactly
    as for the agent; so a final such line is a torn tail and an interior
    one is interior-corruption)."""
    obj = parse_line(raw)
    if obj is not None and type_errors(obj):
        return None
    return obj


def read_records(data):
    """What a reader (load, fold) sees: (records, framing) where framing says
    whether the journal is loadable. An unparsable final line is dropped; an
    unparsable interior line makes the journal corrupt."""
    lines = split_lines(data)
    records, corrupt = [], False
    for idx, (no, off, raw, term) in enumerate(lines):
        obj = decode_line(raw)
        if obj is None:
            if idx != len(lines) - 1:
                corrupt = True
            continue
        records.append((no, obj))
    return records, corrupt


def load_and_fold(data, any_version=False):
    records, corrupt = read_records(data)
    if corrupt:
        raise FoldError("interior corruption")
    return fold([r for _, r in records], any_version=any_version)


# ---------------------------------------------------------------- verify

def verify_journal(stored_id, data):
    """Content-level findings for one journal, per docs/OUTPUT.md."""
    out = []
    lines = split_lines(data)
    records = []          # (line_no, obj, skip_gap_check)
    skip_gap = False
    for idx, (no, off, raw, term) in enumerate(lines):
        obj = decode_line(raw)
        final = idx == len(lines) - 1
        if final:
            if obj is None and not term:
                out.append(finding("torn-tail", no))
                continue
            if obj is None and term:
                out.append(finding("garbage-final-line", no))
                continue
            if not term:
                out.append(finding("unterminated-final-record", no,
                                   obj.get("seq") if _is_int(obj.get("seq")) else None))
        elif obj is None:
            out.append(finding("interior-corruption", no))
            skip_gap = True
            continue
        records.append((no, obj, skip_gap))
        skip_gap = False

    if not records:
        # DECISION: "nothing else about the content" leaves the framing
        # findings above (torn-tail etc.) in place.
        out.append(finding("empty-journal"))
        return out

    prev = None
    turn = None          # {"ids": set, "results": set} or None
    for i, (no, rec, skip) in enumerate(records):
        seq = rec.get("seq")
        seq_ok = _is_int(seq)
        s = seq if seq_ok else None
        kind = kind_of(rec)
        has_payload = False
        if kind is None:
            if rec.get("optional") is True:
                out.append(finding("skipped-optional", no, s))
            else:
                out.append(finding("unknown-protocol", no, s))
        else:
            if rec.get(kind) is None:
                out.append(finding("missing-payload", no, s))
            else:
                has_payload = True
            if any(k not in ("seq", "protocol", "optional", kind) for k in rec):
                out.append(finding("extra-payload", no, s))

        # sequence
        if i == 0 and kind != "meta":
            out.append(finding("no-meta", no, s))
        if kind == "meta":
            if seq != 1:
                out.append(finding("meta-seq", no, s))
            if i != 0:
                out.append(finding("duplicate-meta", no, s))
        # DECISION: the first record has no previous seq; only meta-seq
        # judges its value.
        if seq_ok and prev is not None:
            if seq <= prev:
                out.append(finding("seq-not-increasing", no, s))
            elif seq > prev + 1 and not skip:
                out.append(finding("seq-gap", no, s))
        if seq_ok:
            prev = seq

        if not has_payload:
            continue
        p = rec[kind]
        if kind == "meta":
            v = p.get("version", 0)
            if _is_int(v) and v > CURRENT_VERSION:
                out.append(finding("version-newer", no, s))
            elif _is_int(v) and v < CURRENT_VERSION:
                out.append(finding("version-older", no, s))
            if p.get("run_id", "") != stored_id:
                out.append(finding("run-id-mismatch", no, s))
        elif kind == "assistant":
            msg = p.get("message") if isinstance(p.get("message"), dict) else {}
            turn = {"ids": set(_tool_use_ids(msg)), "results": set()}
        elif kind == "user":
            turn = None
        elif kind in ("tool_result", "deferred"):
            tid = p.get("tool_use_id")
            if turn is None:
                out.append(finding("orphan-result", no, s))
            else:
                if tid not in turn["ids"]:
                    out.append(finding("unknown-tool-use", no, s))
                if kind == "tool_result":
                    if tid in turn["results"]:
                        out.append(finding("duplicate-result", no, s))
                    turn["results"].add(tid)

    has_error = any(f["severity"] == "error" for f in out)
    try:
        # DECISION (lead): verify folds any version; the version findings
        # already say it is not resumable, so an older journal is a warning.
        st = load_and_fold(data, any_version=True)
    except FoldError:
        if not has_error:
            out.append(finding("fold"))
        return out
    if open_deferrals(st):
        out.append(finding("open-deferrals"))
    return out


def verify_dir(path):
    """{key: findings} for a state dir: key is the run id, or the file stem
    when the name is not a valid id. Excludes `permissions` and `live`."""
    result = {}
    names = sorted(os.listdir(path))
    for name in names:
        full = os.path.join(path, name)
        if name.endswith(".json"):
            stem = name[:-len(".json")]
            fs = []
            if not valid_id(stem):
                fs.append(finding("invalid-id"))
            if os.path.islink(full):
                fs.append(finding("symlink"))
            with open(full, "rb") as f:
                fs.extend(verify_journal(stem, f.read()))
            result[stem] = fs
        elif name.endswith(".lock"):
            stem = name[:-len(".lock")]
            fs = []
            if os.path.islink(full):
                fs.append(finding("symlink"))
            if not os.path.exists(os.path.join(path, stem + ".json")):
                fs.append(finding("orphan-lock"))
            if fs:
                result.setdefault(stem, []).extend(fs)
    return result


# ---------------------------------------------------------------- ls

def strip_controls(s):
    """DECISION: "control characters removed" = drop Unicode category Cc
    (U+0000-U+001F, U+007F-U+009F), as Rust's char::is_control; everything
    else (including the printable rest of an escape sequence) stays."""
    return "".join(ch for ch in s if unicodedata.category(ch) != "Cc")


def ls_entry(stored_id, data):
    records, _ = read_records(data)
    recs = [r for _, r in records]
    st = fold(recs)
    s = status(st)
    assert s == tail_status(recs), (stored_id, s, tail_status(recs))
    meta = st["meta"]
    return {
        "run_id": stored_id,
        "status": s,
        "model": (meta.get("fingerprint") or {}).get("model"),
        "records": recs[-1]["seq"],
        "prompt": strip_controls(meta.get("prompt", "")),
    }
