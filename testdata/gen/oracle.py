"""Independent reference model of the fisk journal rules (stdlib only).

Written from /work/shared/SPEC.md (sections 1, 1.1, 1.3, 2, 3, 9, 11, 12) and
the layout of /work/shared/agent-journals/expected, never from the Rust code:
it is the oracle the expected results in testdata/expected/ come from. It is
deliberately simple and literal; every place where the documents leave a
choice open is marked `DECISION:` and listed in testdata/README.md.

Two generations are read (SPEC 1.1): format version 1 (the agent as it ships
now: `time` on every record, `meta.agent`, `kind`/`dispatched`,
`terminal.summary`) and version 3 (the August 2026 agent: the same without
those). The fold treats them alike.

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
import json.decoder
import json.scanner
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
VERSIONS = (1, 3)            # SPEC 1.1: the two foldable generations
NEWEST = 3                   # above this: version-newer
TOOL_KINDS = ("application", "builtin", "remote", "custom", "mcp", "unknown")
ENVELOPE = ("seq", "protocol", "time", "optional")

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
    "version-3": "warning",
    "mixed-generation": "warning",
    "version-newer": "error",
    "version-older": "warning",
    "unknown-protocol": "error",
    "skipped-optional": "info",
    "unknown-field": "info",
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


def g(d, k, default):
    """A field as Go reads it: absent or null is the zero value."""
    v = d.get(k) if isinstance(d, dict) else None
    return default if v is None else v


# ---------------------------------------------------------------- times

class Escaped(str):
    """A JSON string whose raw bytes held a backslash escape."""


def _parse_string(s, end, strict=True):
    val, newend = json.decoder.scanstring(s, end, strict)
    if "\\" in s[end:newend - 1]:
        val = Escaped(val)
    return val, newend


_DECODER = json.JSONDecoder()
_DECODER.parse_string = _parse_string
_DECODER.parse_constant = lambda name: (_ for _ in ()).throw(ValueError(name))
_DECODER.scan_once = json.scanner.py_make_scanner(_DECODER)

TIME_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", re.ASCII)


def _leap(y):
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def _days_in(y, m):
    return (31, 29 if _leap(y) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]


def _days_from_civil(y, m, d):
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return y + (m <= 2), m, d


def parse_time(s):
    """An RFC 3339 time as the agent's Go time.Time.UnmarshalJSON accepts it,
    as (unix_ns, offset_seconds), or None when Go refuses it.
    DECISION: the rule is the lead's statement of Go's strict parser: the raw
    bytes match YYYY-MM-DDTHH:MM:SS(.digits)?(Z|+HH:MM|-HH:MM), uppercase T
    and Z, month 1-12, day valid for the month/year, hour 0-23, minute and
    second 0-59, offset hour 0-23, offset minute 0-59; any escape fails.
    (Go's lenient fallback for a few malformed shapes, e.g. a one-digit hour
    or a comma before the fraction, is not modelled; no journal uses them.)"""
    if not isinstance(s, str) or isinstance(s, Escaped):
        return None
    m = TIME_RE.fullmatch(s)
    if not m:
        return None
    y, mo, d, h, mi, se = (int(x) for x in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    if not (1 <= mo <= 12 and 1 <= d <= _days_in(y, mo) and h <= 23 and mi <= 59 and se <= 59):
        return None
    off = 0
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            return None
        off = (oh * 3600 + om * 60) * (1 if zone[0] == "+" else -1)
    ns = int((frac or "0")[:9].ljust(9, "0"))
    secs = _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off
    return secs * 10**9 + ns, off


ZERO_TIME_NS = _days_from_civil(1, 1, 1) * 86400 * 10**9


def time_is_zero(s):
    """Absent, null, or Go's zero instant (0001-01-01T00:00:00Z)."""
    if s is None:
        return True
    t = parse_time(s)
    return t is not None and t[0] == ZERO_TIME_NS


def go_time(s):
    """The string Go's time.Time.MarshalJSON prints for a parsed time: offset
    kept (a zero offset prints Z), fraction truncated to 9 digits and
    trimmed of trailing zeros. None for an absent or zero time."""
    if time_is_zero(s):
        return None
    ns, off = parse_time(s)
    local = ns // 10**9 + off
    frac = ns % 10**9
    days, rem = divmod(local, 86400)
    y, mo, d = _civil_from_days(days)
    out = f"{y:04d}-{mo:02d}-{d:02d}T{rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}"
    if frac:
        out += "." + f"{frac:09d}".rstrip("0")
    if off == 0:
        return out + "Z"
    sign = "+" if off > 0 else "-"
    return out + f"{sign}{abs(off) // 3600:02d}:{abs(off) // 60 % 60:02d}"


def time_instant(s):
    t = parse_time(s) if s is not None else None
    return None if t is None else t[0]


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
    """The JSON object on the line, or None when the line is not JSON."""
    try:
        text = raw.decode("utf-8")
        obj = _DECODER.decode(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


# ---------------------------------------------------------------- record types
#
# DECISION: types follow the agent's Go structs: a JSON null is accepted for
# every field (Go leaves the zero value), integers must be JSON integers in
# the Go type's range (seq uint64, counters and tokens int64, memory
# revisions uint64), times must parse as above.

I64 = (-(2**63), 2**63 - 1)
U64 = (0, 2**64 - 1)


def _int_in(lo, hi):
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


_is_i64 = _int_in(*I64)
_is_u64 = _int_in(*U64)


def _is_int(v):  # any integer a Go int/uint field may hold (used for seq display)
    return isinstance(v, int) and not isinstance(v, bool) and I64[0] <= v <= U64[1]


def _is_str(v):
    return isinstance(v, str)


def _is_bool(v):
    return isinstance(v, bool)


def _check_fields(obj, spec, path):
    """spec: {field: checker}; present, non-null fields must have the right
    JSON type. DECISION: an absent or null field reads as its zero value (Go
    decoding), so only present non-null fields are type-checked here."""
    if obj is None:
        return []
    if not isinstance(obj, dict):
        return [path]
    bad = []
    for k, check in spec.items():
        if k in obj and obj[k] is not None and not check(obj[k], f"{path}/{k}", bad):
            bad.append(f"{path}/{k}")
    return bad


def _t(pred):
    return lambda v, p, bad: pred(v)


def _any(v, p, bad):
    return True


def _time(v, p, bad):
    return parse_time(v) is not None


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


def _map_of(pred, key_pred=lambda k: True):
    def check(v, p, bad):
        if not isinstance(v, dict):
            return False
        for k, n in v.items():
            if not key_pred(k) or (n is not None and not pred(n)):
                bad.append(f"{p}/{k}")
        return True
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
    if not isinstance(v, list):
        return False
    for i, b in enumerate(v):
        if not _block(b, f"{p}/{i}", bad):
            bad.append(f"{p}/{i}")
    return True


def _kind_key(k):
    """tool_calls_by_kind in a summary is keyed by the agent's internal
    number. DECISION: any decimal int64 (Go's integer map keys)."""
    return bool(re.fullmatch(r"[+-]?\d+", k)) and I64[0] <= int(k) <= I64[1]


MESSAGE = {"role": _t(_is_str), "content": _content}
FINGERPRINT = {
    "provider": _t(_is_str), "model": _t(_is_str), "system_hash": _t(_is_str),
    "tools_hash": _t(_is_str), "thinking_mode": _t(_is_str),
    "reasoning_effort": _t(_is_str), "max_tokens": _t(_is_i64),
    "max_iterations": _t(_is_i64),
}
COUNTER_KEYS = ("llm_calls", "tool_calls", "remote_tool_calls", "mcp_tool_calls",
                "tool_calls_by_kind", "in_tokens", "out_tokens", "cache_read_tokens",
                "cache_create_tokens", "thinking_tokens")
COUNTERS = {k: _t(_is_i64) for k in COUNTER_KEYS}
COUNTERS["tool_calls_by_kind"] = _map_of(_is_i64, _kind_key)
SUMMARY = {"turns": _t(_is_i64), "context_tokens": _t(_is_i64), "counters": _obj(COUNTERS)}

PAYLOAD_SPECS = {
    "meta": {"version": _t(_is_i64), "run_id": _t(_is_str), "created": _time,
             "fingerprint": _obj(FINGERPRINT), "prompt": _t(_is_str),
             "interactive": _t(_is_bool), "conversation_token": _t(_is_str),
             "caller": _t(_is_str), "agent": _t(_is_str)},
    "assistant": {"iteration": _t(_is_i64), "message": _obj(MESSAGE),
                  "stop_reason": _t(_is_str), "in_tokens": _t(_is_i64),
                  "out_tokens": _t(_is_i64), "cache_read_tokens": _t(_is_i64),
                  "cache_create_tokens": _t(_is_i64), "thinking_tokens": _t(_is_i64)},
    "user": {"message": _obj(MESSAGE)},
    "tool_result": {"tool_use_id": _t(_is_str),
                    "result": _obj(BLOCK_SPECS["tool_result"]),
                    "remote": _t(_is_bool), "kind": _t(_is_str), "dispatched": _t(_is_bool)},
    "deferred": {"tool_use_id": _t(_is_str), "tool_name": _t(_is_str),
                 "note": _t(_is_str), "handle": _t(_is_str),
                 "kind": _t(_is_str), "dispatched": _t(_is_bool)},
    "decision": {"tool": _t(_is_str)},
    "call_approval": {"tool_use_id": _t(_is_str), "tool_name": _t(_is_str)},
    "memory_revisions": {"revisions": _map_of(_is_u64)},
    "terminal": {"reason": _t(_is_str), "message": _t(_is_str), "summary": _obj(SUMMARY)},
    "claim": {"by": _t(_is_str), "claimed": _time},
}

# SPEC 1: the names a payload (and the fingerprint, and a result) may hold.
KNOWN_FIELDS = {k: set(v) for k, v in PAYLOAD_SPECS.items()}
KNOWN_FINGERPRINT = set(FINGERPRINT)
KNOWN_RESULT = set(BLOCK_SPECS["tool_result"])


def type_errors(rec):
    """Instance paths whose JSON type is wrong for the format ([] when fine).
    Only envelope fields and payloads of known protocols are checked."""
    bad = []
    for key, ok in (("seq", _is_u64), ("protocol", _is_str), ("optional", _is_bool)):
        if rec.get(key) is not None and not ok(rec[key]):
            bad.append("/" + key)
    if rec.get("time") is not None and parse_time(rec["time"]) is None:
        bad.append("/time")
    kind = kind_of(rec)
    if kind is not None and rec.get(kind) is not None:
        bad.extend(_check_fields(rec[kind], PAYLOAD_SPECS[kind], "/" + kind))
    return bad


def kind_of(rec):
    """The known kind, or None for an unknown protocol."""
    p = rec.get("protocol")
    return PROTOCOLS.get(p) if isinstance(p, str) else None


def seq_of(rec):
    return g(rec, "seq", 0)


def unknown_fields(rec):
    """Payload fields SPEC 1 does not name (SPEC 1.3), as instance paths."""
    kind = kind_of(rec)
    p = rec.get(kind) if kind else None
    if not isinstance(p, dict):
        return []
    out = [f"{kind}.{k}" for k in p if k not in KNOWN_FIELDS[kind]]
    if kind == "meta" and isinstance(p.get("fingerprint"), dict):
        out += [f"meta.fingerprint.{k}" for k in p["fingerprint"] if k not in KNOWN_FINGERPRINT]
    if kind == "tool_result" and isinstance(p.get("result"), dict):
        out += [f"tool_result.result.{k}" for k in p["result"] if k not in KNOWN_RESULT]
    return out


def v1_fields(rec):
    """Version-1-only fields (SPEC 1.1) this record carries with a value.
    DECISION: a field counts when present and non-zero (a non-zero `time`, a
    non-empty `agent`/`kind`, `dispatched` true, a non-null `summary`): a zero
    value is what both generations read anyway."""
    out = []
    if not time_is_zero(rec.get("time")):
        out.append("time")
    kind = kind_of(rec)
    p = rec.get(kind) if kind else None
    if not isinstance(p, dict):
        return out
    if kind == "meta" and p.get("agent"):
        out.append("meta.agent")
    if kind in ("tool_result", "deferred"):
        if p.get("kind"):
            out.append(f"{kind}.kind")
        if p.get("dispatched"):
            out.append(f"{kind}.dispatched")
    if kind == "terminal" and p.get("summary") is not None:
        out.append("terminal.summary")
    return out


# ---------------------------------------------------------------- fold (SPEC 3)

def _content_list(message):
    c = (message or {}).get("content")
    return list(c) if c is not None else []


def _norm_result(r):
    """A tool_result block as the fold prints it: the SPEC 1 fields only."""
    r = r or {}
    out = {"tool_use_id": g(r, "tool_use_id", ""), "content": g(r, "content", "")}
    if r.get("is_error"):
        out["is_error"] = True
    return out


def _norm_block(b):
    if isinstance(b, dict) and "tool_result" in b:
        return {"tool_result": _norm_result(b["tool_result"])}
    return b


def _norm_message(message):
    message = message or {}
    return {"role": g(message, "role", ""), "content": [_norm_block(b) for b in _content_list(message)]}


def _norm_deferred(d):
    """DECISION: a deferred record prints with all six SPEC 1 fields, as the
    agent's fold does: absent strings null, `dispatched` a bool."""
    return {"tool_use_id": g(d, "tool_use_id", ""), "tool_name": g(d, "tool_name", ""),
            "note": d.get("note") or None, "handle": d.get("handle") or None,
            "kind": d.get("kind") or None, "dispatched": bool(d.get("dispatched"))}


def _tool_use_ids(message):
    return [g(b["tool_use"], "id", "") for b in _content_list(message)
            if isinstance(b, dict) and isinstance(b.get("tool_use"), dict)]


def result_kind(p):
    """SPEC 3 rule 5b: (kind token, dispatched)."""
    k = p.get("kind") or ""
    if k:
        # DECISION: the agent's own fold parses the token into its kind enum
        # (toolkit.ParseKind): a token it does not know counts as `unknown`
        # (the reference corpus, g-all-counters, says so; SPEC 1's "count it
        # as written" loses to the agent's code).
        if k not in ("application", "builtin", "remote", "custom", "mcp", "unknown"):
            k = "unknown"
        return k, bool(p.get("dispatched"))
    if p.get("remote"):
        return "remote", True
    return "unknown", False


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
    version = g(meta, "version", 0)
    if version not in VERSIONS and not any_version:
        raise FoldError(f"version {version} is not one of {VERSIONS}")

    st = {
        "meta": meta,
        "messages": [{"role": "user", "content": [{"text": {"text": g(meta, "prompt", "")}}]}],
        "counters": {"llm_calls": 0, "tool_calls": 0, "remote_tool_calls": 0,
                     "mcp_tool_calls": 0, "tool_calls_by_kind": {},
                     "in_tokens": 0, "out_tokens": 0, "cache_read_tokens": 0,
                     "cache_create_tokens": 0, "thinking_tokens": 0},
        "turns": 1,
        "context_tokens": 0,
        "last_iteration": None,
        "last_stop_reason": "",
        "pending": None,
        "approvals": [],
        "call_approvals": [],
        "memory_revisions": None,
        "terminal": None,
        "terminal_time": None,
        "reopened": False,
        "last_time": first.get("time"),
    }
    turn = None
    prev = seq_of(first)

    def commit(t):
        st["messages"].append(_norm_message(t["message"]))
        if t["results"]:
            st["messages"].append({"role": "user",
                                   "content": [{"tool_result": _norm_result(r)} for r in t["results"]]})

    for r in records[1:]:
        seq = seq_of(r)
        if seq <= prev:
            raise FoldError(f"seq {seq} does not increase (previous {prev})")
        prev = seq
        st["last_time"] = r.get("time")
        # SPEC 3 rule 13: any record after the last terminal reopens the run.
        if st["terminal"] is not None:
            st["reopened"] = True
        kind = kind_of(r)
        if kind is None:
            if r.get("optional") is True:
                continue
            raise FoldError(f"seq {seq}: unknown protocol {r.get('protocol')!r}")
        p = r.get(kind)
        if p is None:
            raise FoldError(f"seq {seq}: {kind} without payload")
        c = st["counters"]
        if kind == "meta":
            raise FoldError(f"seq {seq}: second meta record")
        elif kind == "assistant":
            if turn is not None:
                commit(turn)
            turn = {"message": g(p, "message", {}), "iteration": g(p, "iteration", 0),
                    "stop_reason": g(p, "stop_reason", ""), "results": [],
                    "answered": set(), "deferred": {}}
            c["llm_calls"] += 1
            for k in ("in_tokens", "out_tokens", "cache_read_tokens",
                      "cache_create_tokens", "thinking_tokens"):
                c[k] += g(p, k, 0)
            st["context_tokens"] = (g(p, "in_tokens", 0) + g(p, "cache_read_tokens", 0)
                                    + g(p, "cache_create_tokens", 0))
            st["last_iteration"] = g(p, "iteration", 0)
            st["last_stop_reason"] = g(p, "stop_reason", "")
        elif kind == "tool_result":
            if turn is None:
                raise FoldError(f"seq {seq}: tool_result outside a turn")
            turn["results"].append(g(p, "result", {}))
            turn["answered"].add(g(p, "tool_use_id", ""))
            c["tool_calls"] += 1
            k, dispatched = result_kind(p)
            c["tool_calls_by_kind"][k] = c["tool_calls_by_kind"].get(k, 0) + 1
            if dispatched and k == "remote":
                c["remote_tool_calls"] += 1
            if dispatched and k == "mcp":
                c["mcp_tool_calls"] += 1
        elif kind == "deferred":
            if turn is None:
                raise FoldError(f"seq {seq}: deferred outside a turn")
            # DECISION: deferrals are keyed by tool_use id; a repeat replaces
            # the earlier record (the agent keeps a map).
            turn["deferred"][g(p, "tool_use_id", "")] = p
        elif kind == "user":
            st["turns"] += 1
            if turn is not None:
                commit(turn)
                turn = None
            m = g(p, "message", {})
            blocks = [_norm_block(b) for b in _content_list(m)]
            if st["messages"][-1]["role"] == "user":
                st["messages"][-1]["content"].extend(blocks)
            else:
                st["messages"].append({"role": g(m, "role", ""), "content": blocks})
        elif kind == "decision":
            st["approvals"].append(g(p, "tool", ""))
        elif kind == "call_approval":
            st["call_approvals"].append({"tool_use_id": g(p, "tool_use_id", ""),
                                         "tool_name": g(p, "tool_name", "")})
        elif kind == "memory_revisions":
            rv = p.get("revisions")
            st["memory_revisions"] = None if rv is None else {k: rv[k] or 0 for k in sorted(rv)}
        elif kind == "terminal":
            st["terminal"] = p
            st["terminal_time"] = r.get("time")
            st["reopened"] = False
            st["call_approvals"] = []
        elif kind == "claim":
            pass

    if turn is not None:
        if all(i in turn["answered"] for i in _tool_use_ids(turn["message"])):
            commit(turn)
        else:
            deferred = [_norm_deferred(turn["deferred"][k]) for k in sorted(turn["deferred"])]
            st["pending"] = {
                "assistant": _norm_message(turn["message"]),
                "iteration": turn["iteration"],
                "stop_reason": turn["stop_reason"] or None,
                "results": [_norm_result(x) for x in turn["results"]],
                "answered": sorted(turn["answered"]),
                "deferred": deferred,
                "open_deferrals": [d for d in deferred
                                   if d["tool_use_id"] not in turn["answered"]],
            }
    return st


def open_deferrals(st):
    return st["pending"]["open_deferrals"] if st["pending"] else []


def status(st):
    """SPEC 9 without `live`: the last terminal's reason when no record at
    all follows it; otherwise open."""
    if st["terminal"] is not None and not st["reopened"]:
        return g(st["terminal"], "reason", "")
    return "open"


def ended(st):
    """SPEC 3 rule 13: the last terminal record's time; null when reopened or
    undated (DECISION: a zero time counts as undated)."""
    if st["terminal"] is None or st["reopened"]:
        return None
    return go_time(st["terminal_time"])


def fold_json(st):
    m = st["meta"]
    fp = g(m, "fingerprint", {})
    t = st["terminal"]
    c = dict(st["counters"])
    c["tool_calls_by_kind"] = {k: c["tool_calls_by_kind"][k] for k in sorted(c["tool_calls_by_kind"])}
    return {
        "version": g(m, "version", 0),
        "run_id": g(m, "run_id", ""),
        "agent": m.get("agent") or None,
        "fingerprint": {
            "provider": g(fp, "provider", ""),
            "model": g(fp, "model", ""),
            "system_hash": g(fp, "system_hash", ""),
            "tools_hash": g(fp, "tools_hash", ""),
            "thinking_mode": g(fp, "thinking_mode", ""),
            "reasoning_effort": g(fp, "reasoning_effort", ""),
            "max_tokens": g(fp, "max_tokens", 0),
            "max_iterations": g(fp, "max_iterations", 0),
        },
        "prompt": g(m, "prompt", ""),
        "interactive": bool(m.get("interactive", False)),
        "conversation_token": m.get("conversation_token") or None,
        "caller": m.get("caller") or None,
        "messages": st["messages"],
        "counters": c,
        "turns": st["turns"],
        "context_tokens": st["context_tokens"],
        "next_iteration": (st["last_iteration"] + 1) if st["last_iteration"] is not None else 0,
        "last_stop_reason": st["last_stop_reason"] or None,
        "pending": st["pending"],
        "approvals": st["approvals"],
        "call_approvals": st["call_approvals"],
        "memory_revisions": st["memory_revisions"],
        "terminal": None if t is None else {"reason": g(t, "reason", ""),
                                           "message": t.get("message") or None},
        "ended": ended(st),
        "completed": t is not None and t.get("reason") == "completed",
        "status": status(st),
        "waiting": bool(open_deferrals(st)),
        "open_deferrals": len(open_deferrals(st)),
    }


def tail_view(records):
    """SPEC 9 as `ls` computes it: meta plus records from the tail back to the
    last assistant record. (status, waiting, open_deferrals); used to
    cross-check the fold."""
    last = records[-1]
    st = "open"
    if len(records) > 1 and kind_of(last) == "terminal":
        st = g(last["terminal"], "reason", "")
    last_asst = None
    for i in range(len(records) - 1, 0, -1):
        if kind_of(records[i]) == "assistant":
            last_asst = i
            break
    n_open = 0
    if last_asst is not None:
        open_turn = True
        answered, deferred = set(), set()
        for r in records[last_asst + 1:]:
            k = kind_of(r)
            if k == "user":
                open_turn = False
            elif k == "tool_result":
                answered.add(g(r["tool_result"], "tool_use_id", ""))
            elif k == "deferred":
                deferred.add(g(r["deferred"], "tool_use_id", ""))
        ids = _tool_use_ids(g(records[last_asst]["assistant"], "message", {}))
        pending = open_turn and not all(i in answered for i in ids)
        if pending:
            n_open = len(deferred - answered)
    return st, n_open > 0, n_open


# ---------------------------------------------------------------- reading

def decode_line(raw):
    """A line "parses" when Go's json.Unmarshal into the record type would
    succeed: valid JSON *and* every present field of the right JSON type,
    times included (DECISION, lead: a wrong-typed field or a bad time makes
    the line unparsable, exactly as for the agent; so a final such line is a
    torn tail or garbage final line and an interior one is
    interior-corruption)."""
    obj = parse_line(raw)
    if obj is not None and type_errors(obj):
        return None
    return obj


def read_records(data):
    """What a reader (load, fold) sees: (records, corrupt) where corrupt says
    an interior line did not parse. An unparsable final line is dropped."""
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
    """Content-level findings for one journal (SPEC 11)."""
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

    # The journal's generation comes from its first record's meta.
    first = records[0][1]
    version = None
    if kind_of(first) == "meta" and isinstance(first.get("meta"), dict):
        version = g(first["meta"], "version", 0)

    prev = None
    turn = None          # {"ids": set, "results": set} or None
    seen_unknown_field = seen_mixed = False
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
            if any(k not in ENVELOPE and k != kind for k in rec):
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

        # generations and forward compatibility (SPEC 1.1, 1.3)
        if version == 3 and not seen_mixed and v1_fields(rec):
            seen_mixed = True
            out.append(finding("mixed-generation", no, s))
        if not seen_unknown_field and unknown_fields(rec):
            seen_unknown_field = True
            out.append(finding("unknown-field", no, s))

        if not has_payload:
            continue
        p = rec[kind]
        if kind == "meta" and i == 0:
            # DECISION: version and run-id findings judge the journal's own
            # meta (the first record); a duplicate meta is only duplicate-meta.
            v = g(p, "version", 0)
            if v == 3:
                out.append(finding("version-3", no, s))
            elif _is_int(v) and v > NEWEST:
                out.append(finding("version-newer", no, s))
            elif _is_int(v) and (v == 2 or v < 1):
                out.append(finding("version-older", no, s))
            if g(p, "run_id", "") != stored_id:
                out.append(finding("run-id-mismatch", no, s))
        elif kind == "assistant":
            msg = p.get("message") if isinstance(p.get("message"), dict) else {}
            turn = {"ids": set(_tool_use_ids(msg)), "results": set()}
        elif kind == "user":
            turn = None
        elif kind in ("tool_result", "deferred"):
            tid = g(p, "tool_use_id", "")
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
            # DECISION: a journal under an invalid id is reported as such and
            # not read further: the agent cannot see it, and its name cannot
            # be passed to any command until it is renamed.
            if valid_id(stem):
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
    waiting = bool(open_deferrals(st))
    n_open = len(open_deferrals(st))
    assert (s, waiting, n_open) == tail_view(recs), (stored_id, s, waiting, n_open, tail_view(recs))
    meta = st["meta"]
    return {
        "run_id": stored_id,
        "status": s,
        "waiting": waiting,
        "open_deferrals": n_open,
        "version": g(meta, "version", 0),
        "agent": meta.get("agent") or None,
        "model": g(meta, "fingerprint", {}).get("model"),
        "records": seq_of(recs[-1]),
        # SPEC 9: the last record's time; null here means "the file's mtime".
        "updated": go_time(recs[-1].get("time")),
        "prompt": strip_controls(g(meta, "prompt", "")),
    }
