#!/usr/bin/env python3
"""Check the JSON Schemas in schemas/ against the vectors in testdata/schema-cases/.

Needs: pip install jsonschema referencing rfc3339-validator

What it checks, exiting 1 when anything surprises it (it reports every surprise):

- every schema is valid draft 2020-12, has $schema, an absolute $id that matches its
  path, a title and a description; v1 schemas reference each other by relative URI;
  every $ref resolves inside the local registry (no network is ever used);
- every line of valid.jsonl validates against the schema its protocol names, is in
  the Go writer's canonical form (compact, SPEC key order, zero `?` fields omitted,
  <>& U+2028 U+2029 escaped, map keys sorted; a field SPEC 1 does not name may sit
  anywhere in an open body), and the file covers what it must (both generations'
  fields, and an unknown payload field for each of the ten protocols: bodies are open);
- every line of invalid.jsonl fails against the schema it names, and the file has the
  required cases for each of the ten protocols (a bad `time` among them), and no case
  is invalid only for an unknown payload field;
- every line of every journal the agent wrote (../shared/agent-journals/v1 and v3)
  validates and is in the canonical form above, v1 records all carry `time` and v3
  records none of the version-1 fields (records of a protocol with no schema must be
  optional; they are counted as skipped);
- the agent's own fold of each of those journals (agent-journals/expected/*/*.json,
  key `fold`) validates against output/fold.json;
- a block with one bad inner field reports exactly one error;
- a hand-written instance of each output schema validates (and a few broken ones don't).

Run from anywhere: python3 schemas/check_cases.py [-v] [--emit FILE]
(--emit writes every check as a JSON line {schema, instance, expect, label} so that
another validator, e.g. the Rust jsonschema crate, can be run over the same cases.)
"""

import json
import re
import sys
from pathlib import Path

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
CASES = ROOT / "testdata" / "schema-cases"
JOURNALS = ROOT.parent / "shared" / "agent-journals"
V1_BASE = "https://schemas.choria.io/fisk-ai/v1/"
OUT_BASE = "https://schemas.choria.io/fisk-admin/output/"
PREFIX = "io.choria.fisk-ai.v1.session."
PROTOCOLS = [
    "meta", "assistant", "user", "tool_result", "deferred",
    "decision", "call_approval", "memory_revisions", "terminal", "claim",
]
VERBOSE = "-v" in sys.argv[1:]
EMIT = sys.argv[sys.argv.index("--emit") + 1] if "--emit" in sys.argv[1:-1] else None
FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER
# Fields only the version-1 writer produces (SPEC 1.1).
V1_ONLY = {"envelope": {"time"}, "meta": {"agent"}, "tool_result": {"kind", "dispatched"},
           "deferred": {"kind", "dispatched"}, "terminal": {"summary"}}

failures = []
emitted = []


def emit(schema_id, instance, expect, label):
    """Remember a check for --emit (another validator runs the same cases)."""
    if EMIT:
        emitted.append({"schema": schema_id, "instance": instance, "expect": expect, "label": label})


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


# ---------------------------------------------------------------- schemas

def load_schemas():
    schemas = {}
    for sub, base in (("v1", V1_BASE), ("output", OUT_BASE)):
        for path in sorted((SCHEMAS / sub).glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            schemas[doc.get("$id", str(path))] = doc
            where = f"{sub}/{path.name}"
            if doc.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
                fail(f"{where}: $schema is not draft 2020-12")
            if doc.get("$id") != base + path.name:
                fail(f"{where}: $id {doc.get('$id')!r} is not {base + path.name!r}")
            if not doc.get("title") or not doc.get("description"):
                fail(f"{where}: needs a title and a description")
            try:
                Draft202012Validator.check_schema(doc)
            except Exception as e:  # noqa: BLE001 - report any metaschema failure
                fail(f"{where}: not a valid draft 2020-12 schema: {e}")
    expected_v1 = {V1_BASE + f"session.{p}.json" for p in PROTOCOLS} | {V1_BASE + "session.common.json"}
    got_v1 = {i for i in schemas if i.startswith(V1_BASE)}
    if got_v1 != expected_v1:
        fail(f"v1 schema set differs: missing {sorted(expected_v1 - got_v1)}, extra {sorted(got_v1 - expected_v1)}")
    expected_out = {OUT_BASE + n for n in ("fold.json", "ls.json", "verify.json", "validate.json", "migrate.json")}
    got_out = {i for i in schemas if i.startswith(OUT_BASE)}
    if got_out != expected_out:
        fail(f"output schema set differs: missing {sorted(expected_out - got_out)}, extra {sorted(got_out - expected_out)}")
    return schemas


def refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def build_registry(schemas):
    # No `retrieve` function: an unknown URI raises instead of going to the network.
    registry = Registry().with_resources(
        (sid, DRAFT202012.create_resource(doc)) for sid, doc in schemas.items()
    ).crawl()
    for sid, doc in schemas.items():
        resolver = registry.resolver(base_uri=sid)
        for ref in refs(doc):
            if sid.startswith(V1_BASE) and "://" in ref:
                fail(f"{sid}: v1 schemas must use relative refs, found {ref}")
            try:
                resolver.lookup(ref)
            except Exception as e:  # noqa: BLE001
                fail(f"{sid}: $ref {ref} does not resolve: {e}")
    return registry


def validator(schemas, registry, sid):
    return Draft202012Validator(schemas[sid], registry=registry, format_checker=FORMAT_CHECKER)


# ---------------------------------------------------------------- Go canonical form

# Key order of each fixed-shape object (SPEC 1), and which keys are `?` (omitted when zero).
ORDER = {
    "envelope": ["seq", "protocol", "time", "optional"],
    "meta": ["version", "run_id", "created", "fingerprint", "prompt", "interactive", "conversation_token",
             "caller", "agent"],
    "assistant": ["iteration", "message", "stop_reason", "in_tokens", "out_tokens",
                  "cache_read_tokens", "cache_create_tokens", "thinking_tokens"],
    "user": ["message"],
    "tool_result": ["tool_use_id", "result", "remote", "kind", "dispatched"],
    "deferred": ["tool_use_id", "tool_name", "note", "handle", "kind", "dispatched"],
    "decision": ["tool"],
    "call_approval": ["tool_use_id", "tool_name"],
    "memory_revisions": ["revisions"],
    "terminal": ["reason", "message", "summary"],
    "summary": ["turns", "context_tokens", "counters"],
    "counters": ["llm_calls", "tool_calls", "remote_tool_calls", "mcp_tool_calls", "tool_calls_by_kind",
                 "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens"],
    "claim": ["by", "claimed"],
    "fingerprint": ["provider", "model", "system_hash", "tools_hash", "thinking_mode",
                    "reasoning_effort", "max_tokens", "max_iterations"],
    "message": ["role", "content"],
    "result": ["tool_use_id", "content", "is_error"],
    "b.text": ["text"],
    "b.thinking": ["text", "signature"],
    "b.tool_use": ["id", "name", "input"],
    "b.tool_result": ["tool_use_id", "content", "is_error"],
    "b.provider": ["kind", "raw"],
}
# Open objects (SPEC 1.3): a key they do not name is allowed, anywhere.
OPEN = {"meta", "assistant", "user", "tool_result", "deferred", "decision", "call_approval",
        "memory_revisions", "terminal", "claim", "fingerprint", "summary", "counters",
        "result"}  # the tool_result record's result; the tool_result block ("b.tool_result") is closed
OMITEMPTY = {
    "envelope": {"time", "optional"},
    "meta": {"interactive", "conversation_token", "caller", "agent"},
    "assistant": {"stop_reason", "cache_read_tokens", "cache_create_tokens", "thinking_tokens"},
    "tool_result": {"remote", "kind", "dispatched"},
    "deferred": {"note", "handle", "kind", "dispatched"},
    "terminal": {"message", "summary"},
    "counters": set(ORDER["counters"]),
    "fingerprint": {"reasoning_effort"},
    "result": {"is_error"},
    "b.thinking": {"text", "signature"},
    "b.tool_result": {"is_error"},
}


class Verbatim(str):
    """A JSON number kept as written: Go copies tool_use.input and provider.raw
    (json.RawMessage) verbatim, so 1.50 or -0 stays 1.50 or -0."""


def go_string(text):
    s = json.dumps(text, ensure_ascii=False)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                     ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(raw, esc)
    return s


def go_encode(value):
    """Compact JSON as Go's encoding/json writes it (key order as given)."""
    if isinstance(value, Verbatim):
        return str(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(go_string(k) + ":" + go_encode(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_encode(v) for v in value) + "]"
    return json.dumps(value)


def decode_verbatim(line):
    """The record with every number kept as written, for comparing encodings."""
    return json.loads(line, parse_int=Verbatim, parse_float=Verbatim, parse_constant=Verbatim)


def check_shape(kind, obj, where, problems):
    if not isinstance(obj, dict):
        return
    keys = list(obj)
    order = ORDER.get(kind)
    if order is not None:
        if kind in OPEN or kind == "envelope":
            keys = [k for k in keys if k in order]  # an unknown field may sit anywhere
        ranks = [order.index(k) if k in order else -1 for k in keys]
        if -1 in ranks or ranks != sorted(ranks):
            problems.append(f"{where}: keys {keys} not in SPEC order {order}")
    for k in OMITEMPTY.get(kind, ()):
        if k in obj and obj[k] in ("", 0, False, None, {}, "0001-01-01T00:00:00Z"):
            problems.append(f"{where}.{k}: zero-valued ? field must be omitted")
    if kind == "fingerprint":
        return
    if kind == "message":
        for i, block in enumerate(obj.get("content") or []):
            if isinstance(block, dict) and len(block) == 1:
                (bk, bv), = block.items()
                check_shape("b." + bk, bv, f"{where}.content[{i}].{bk}", problems)
        return
    for k, v in obj.items():
        if k in ("fingerprint", "message", "result", "summary", "counters"):
            check_shape(k, v, f"{where}.{k}", problems)
    for mkind, mkey in (("memory_revisions", "revisions"), ("counters", "tool_calls_by_kind")):
        if kind == mkind and isinstance(obj.get(mkey), dict):
            keys = list(obj[mkey])
            if keys != sorted(keys):
                problems.append(f"{where}.{mkey}: map keys not sorted")


def canonical_problems(line, record):
    problems = []
    if go_encode(decode_verbatim(line)) != line:
        problems.append("not compact Go encoding (or <>& U+2028 U+2029 not escaped)")
    keys = list(record)
    payload = [k for k in keys if k not in ("seq", "protocol", "time", "optional")]
    if keys[:2] != ["seq", "protocol"] or len(payload) != 1 or keys[-1] != payload[0]:
        problems.append(f"envelope keys {keys} not seq, protocol, time?, optional?, payload")
    check_shape("envelope", record, "record", problems)
    for p in payload:
        check_shape(p, record[p], p, problems)
    return problems


# ---------------------------------------------------------------- cases

def read_jsonl(path):
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line == "":
            continue
        try:
            out.append((n, line, json.loads(line)))
        except json.JSONDecodeError as e:
            fail(f"{path.name}:{n}: not JSON: {e}")
    return out


def walk(node):
    yield node
    if isinstance(node, dict):
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def record_kind(record):
    proto = record.get("protocol", "") if isinstance(record, dict) else ""
    return proto[len(PREFIX):] if isinstance(proto, str) and proto.startswith(PREFIX) else None


def record_errors(schemas, registry, suffix, record, label):
    sid = V1_BASE + f"session.{suffix}.json"
    errors = list(validator(schemas, registry, sid).iter_errors(record))
    emit(sid, record, True, label)
    return errors


def features(record, suffix, seen):
    """Note which shapes a valid record exercises (for the coverage checks)."""
    payload = record[suffix]
    if record.get("optional") is True:
        seen.add("optional:true")
    if "time" in record:
        seen.add("time")
        if not str(record["time"]).endswith("Z"):
            seen.add("time with offset")
    known = set(ORDER.get(suffix, ()))
    if any(k not in known for k in payload):
        seen.add("unknown payload field:" + suffix)
    for key in ("agent", "kind", "dispatched", "summary"):
        if key in payload:
            seen.add(f"{suffix}.{key}")
    if suffix == "tool_result" and any(k not in ORDER["result"] for k in payload.get("result", {})):
        seen.add("unknown result field")
    if suffix == "meta" and any(k not in ORDER["fingerprint"] for k in payload.get("fingerprint", {})):
        seen.add("unknown fingerprint field")
    if suffix == "meta":
        seen.add(f"meta version {payload.get('version')}")
    if suffix == "terminal" and isinstance(payload.get("summary"), dict):
        summ = payload["summary"]
        if any(k not in ORDER["summary"] for k in summ):
            seen.add("unknown summary field")
        if isinstance(summ.get("counters"), dict) and summ["counters"].get("tool_calls_by_kind"):
            seen.add("summary tool_calls_by_kind")
    if suffix in ("tool_result", "deferred") and "kind" in payload and payload["kind"] not in (
            "application", "builtin", "remote", "custom", "mcp", "unknown"):
        seen.add("kind outside the six")
    if suffix == "memory_revisions" and isinstance(payload.get("revisions"), dict):
        values = payload["revisions"].values()
        if any(v == 18446744073709551615 for v in values):
            seen.add("revision u64 max")
        if any(9223372036854775807 < v < 18446744073709551615 for v in values):
            seen.add("revision above int64")
    for node in walk(record):
        if isinstance(node, dict):
            for kind in ("text", "thinking", "tool_use", "tool_result", "provider"):
                if list(node) == [kind] and isinstance(node[kind], dict):
                    seen.add("block:" + kind)
            for key in ("reasoning_effort", "thinking_tokens", "cache_read_tokens", "cache_create_tokens"):
                if key in node:
                    seen.add(key)
            if "content" in node and node["content"] is None and "role" in node:
                seen.add("null content")
            if "input" in node and node["input"] is None:
                seen.add("null input")
    if suffix == "memory_revisions" and payload.get("revisions") is None:
        seen.add("null revisions")
    for key in ("created", "claimed"):
        if re.search(r"\.[0-9]+[+-][0-9]{2}:[0-9]{2}$", str(payload.get(key, ""))):
            seen.add("offset+fraction timestamp")


def check_valid(schemas, registry):
    per_protocol = {p: 0 for p in PROTOCOLS}
    seen = set()
    for n, line, record in read_jsonl(CASES / "valid.jsonl"):
        where = f"valid.jsonl:{n}"
        suffix = record_kind(record)
        if suffix not in per_protocol:
            fail(f"{where}: protocol {record.get('protocol') if isinstance(record, dict) else None!r} "
                 "is not one of the ten")
            continue
        per_protocol[suffix] += 1
        for e in record_errors(schemas, registry, suffix, record, where):
            fail(f"{where}: valid case rejected at {e.json_path}: {e.message}")
        for p in canonical_problems(line, record):
            fail(f"{where}: {p}")
        features(record, suffix, seen)
    for p, count in per_protocol.items():
        if count < 3:
            fail(f"valid.jsonl: only {count} cases for {p} (need 3)")
    need = {"block:text", "block:thinking", "block:tool_use", "block:tool_result", "block:provider",
            "null content", "null input", "null revisions", "optional:true", "reasoning_effort",
            "thinking_tokens", "cache_read_tokens", "cache_create_tokens", "offset+fraction timestamp",
            "meta version 1", "meta version 3", "time", "time with offset", "meta.agent",
            "tool_result.kind", "tool_result.dispatched", "deferred.kind", "deferred.dispatched",
            "terminal.summary", "summary tool_calls_by_kind", "kind outside the six",
            "revision u64 max", "revision above int64", "unknown fingerprint field", "unknown summary field",
            "unknown result field"}
    need |= {"unknown payload field:" + p for p in PROTOCOLS}
    for missing in sorted(need - seen):
        fail(f"valid.jsonl: no case covers {missing}")
    return sum(per_protocol.values())


INVALID_CATEGORIES = ("missing required", "wrong type", "unknown key (top level)", "time not RFC 3339",
                      "wrong type: time")


def check_invalid(schemas, registry):
    cover = {p: set() for p in PROTOCOLS}
    whys = []
    count = 0
    for n, line, case in read_jsonl(CASES / "invalid.jsonl"):
        where = f"invalid.jsonl:{n}"
        if not isinstance(case, dict) or sorted(case) != ["record", "schema", "why"]:
            fail(f"{where}: a case is exactly {{why, schema, record}}")
            continue
        sid = V1_BASE + case["schema"]
        if sid not in schemas or case["schema"] == "session.common.json":
            fail(f"{where}: unknown record schema {case['schema']!r}")
            continue
        count += 1
        why = case["why"]
        if why.startswith("unknown key (payload)"):
            fail(f"{where}: payload bodies are open (SPEC 1.3): an unknown payload field is valid: {why}")
        emit(sid, case["record"], False, f"{where}: {why}")
        errors = list(validator(schemas, registry, sid).iter_errors(case["record"]))
        if not errors:
            fail(f"{where}: invalid case passed {case['schema']}: {why}")
        elif VERBOSE:
            for e in errors:
                print(f"  {where} [{why}] {e.json_path}: {e.message[:120]}")
        suffix = case["schema"][len("session."):-len(".json")]
        whys.append((suffix, why))
        for cat in INVALID_CATEGORIES:
            if why.startswith(cat):
                cover[suffix].add(cat)
    for p, cats in cover.items():
        for cat in INVALID_CATEGORIES:
            if cat not in cats:
                fail(f"invalid.jsonl: no '{cat}' case for {p}")
    specials = [
        ("terminal", "terminal reason outside the five"),
        ("memory_revisions", "memory revision 0"),
        ("memory_revisions", "memory revision negative"),
        ("memory_revisions", "memory revision above uint64"),
        ("meta", "meta whose seq is 2"),
        ("meta", "seq 0"),
        ("meta", "created not RFC 3339: 'yesterday'"),
        ("meta", "created not RFC 3339: '2026-13-01T00:00:00Z'"),
        ("meta", "wrong type: agent"),
        ("claim", "claimed not RFC 3339: 'yesterday'"),
        ("claim", "claimed not RFC 3339: '2026-13-01T00:00:00Z'"),
        ("deferred", "deferred must never carry optional: true"),
        ("tool_result", "wrong type: kind"),
        ("tool_result", "wrong type: dispatched"),
        ("deferred", "wrong type: kind"),
        ("deferred", "wrong type: dispatched"),
        ("terminal", "wrong type: summary"),
        ("terminal", "wrong type: summary.turns"),
        ("terminal", "wrong type: summary.counters"),
    ]
    for suffix, prefix in specials:
        if not any(s == suffix and w.startswith(prefix) for s, w in whys):
            fail(f"invalid.jsonl: no case '{prefix}' for {suffix}")
    return count


def check_journals(schemas, registry):
    """Every line the agent wrote validates, in canonical form, true to its generation."""
    counts = {"v1": [0, 0, 0], "v3": [0, 0, 0]}  # journals, records checked, records skipped
    for gen in ("v1", "v3"):
        paths = sorted((JOURNALS / gen).glob("*.json"))
        if not paths:
            fail(f"no journals in {JOURNALS / gen}")
        for path in paths:
            counts[gen][0] += 1
            for n, line, record in read_jsonl(path):
                where = f"agent-journals/{gen}/{path.name}:{n}"
                suffix = record_kind(record)
                if suffix not in PROTOCOLS:
                    counts[gen][2] += 1
                    if record.get("optional") is not True:
                        fail(f"{where}: protocol {record.get('protocol')!r} has no schema and is not optional")
                    continue
                counts[gen][1] += 1
                for e in record_errors(schemas, registry, suffix, record, where):
                    fail(f"{where}: agent's record rejected at {e.json_path}: {e.message}")
                for p in canonical_problems(line, record):
                    fail(f"{where}: agent's record not in the canonical form: {p}")
                version1 = {k for k in V1_ONLY["envelope"] if k in record}
                version1 |= {k for k in V1_ONLY.get(suffix, ()) if k in record[suffix]}
                if gen == "v1" and "time" not in record:
                    fail(f"{where}: a version-1 record without time")
                if gen == "v3" and version1:
                    fail(f"{where}: a version-3 record with version-1 fields {sorted(version1)}")
                if suffix == "meta" and record["meta"].get("version") != int(gen[1:]):
                    fail(f"{where}: meta version {record['meta'].get('version')} in the {gen} corpus")
    return counts


def check_expected_folds(schemas, registry):
    """The agent's own fold of each journal is a valid fold document."""
    sid = OUT_BASE + "fold.json"
    v = validator(schemas, registry, sid)
    checked = refused = 0
    for path in sorted(JOURNALS.glob("expected/*/*.json")):
        where = f"agent-journals/{path.parent.name}/{path.name}"
        doc = json.loads(path.read_text(encoding="utf-8"))
        fold = doc.get("fold")
        if fold is None:
            refused += 1
            continue
        checked += 1
        emit(sid, fold, True, where)
        for e in v.iter_errors(fold):
            fail(f"{where}: the agent's fold rejected by fold.json at {e.json_path}: {e.message[:200]}")
        for key in ("status", "waiting", "open_deferrals"):
            if doc.get(key) != fold.get(key):
                fail(f"{where}: {key} {doc.get(key)!r} differs from the fold's {fold.get(key)!r}")
    return checked, refused


def check_single_error(schemas, registry):
    """A block with one bad inner field must report one error, pointing at that field."""
    v = validator(schemas, registry, V1_BASE + "session.assistant.json")

    def record(block):
        return {"seq": 2, "protocol": PREFIX + "assistant", "assistant": {
            "iteration": 0, "message": {"role": "assistant", "content": [block]},
            "in_tokens": 1, "out_tokens": 1}}

    cases = [
        ({"text": {"text": 5}}, "/assistant/message/content/0/text/text"),
        ({"thinking": {"signature": "not base64!"}}, "/assistant/message/content/0/thinking/signature"),
        ({"tool_use": {"id": "t", "name": "exec"}}, "/assistant/message/content/0/tool_use"),
        ({"tool_result": {"tool_use_id": "t", "content": "x", "is_error": 1}},
         "/assistant/message/content/0/tool_result/is_error"),
        ({"provider": {"kind": "k", "raw": None, "extra": 1}}, "/assistant/message/content/0/provider"),
        ({"text": {"text": "a"}, "provider": {"kind": "k", "raw": None}}, "/assistant/message/content/0"),
    ]
    for block, path in cases:
        emit(V1_BASE + "session.assistant.json", record(block), False, f"one bad field in {json.dumps(block)}")
        errors = list(v.iter_errors(record(block)))
        pointer = ["/" + "/".join(str(p) for p in e.absolute_path) for e in errors]
        if len(errors) != 1 or pointer[0] != path:
            fail(f"block {json.dumps(block)}: expected one error at {path}, got "
                 + "; ".join(f"{p}: {e.message}" for p, e in zip(pointer, errors)))
        elif VERBOSE:
            print(f"  one error for {json.dumps(block)}: {pointer[0]}: {errors[0].message}")


# ---------------------------------------------------------------- output samples

FP = {"provider": "anthropic", "model": "claude-sonnet-4-5",
      "system_hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "tools_hash": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "thinking_mode": "off", "reasoning_effort": "", "max_tokens": 200000, "max_iterations": 20}
DEFERRAL = {"tool_use_id": "toolu_02", "tool_name": "defer", "note": "approval", "kind": "custom", "dispatched": True}
FOLD = {
    "version": 1, "run_id": "t-3f2a9c", "agent": "nats-ops", "fingerprint": FP, "prompt": "report on ORDERS",
    "interactive": False, "conversation_token": None, "caller": None,
    "messages": [
        {"role": "user", "content": [{"text": {"text": "report on ORDERS"}}]},
        {"role": "assistant", "content": [{"tool_use": {"id": "toolu_01", "name": "exec", "input": {"command": "ls"}}}]},
        {"role": "user", "content": [{"tool_result": {"tool_use_id": "toolu_01", "content": "a b"}}]},
        {"role": "assistant", "content": []},
    ],
    "counters": {"llm_calls": 3, "tool_calls": 2, "remote_tool_calls": 0, "mcp_tool_calls": 1,
                 "tool_calls_by_kind": {"application": 1, "mcp": 1}, "in_tokens": 3000,
                 "out_tokens": 200, "cache_read_tokens": 0, "cache_create_tokens": 0, "thinking_tokens": 0},
    "turns": 1, "context_tokens": 1100,
    "next_iteration": 3, "last_stop_reason": "tool_use",
    "pending": {
        "assistant": {"role": "assistant", "content": [
            {"tool_use": {"id": "toolu_02", "name": "defer", "input": None}},
            {"tool_use": {"id": "toolu_03", "name": "exec", "input": {"command": "date"}}}]},
        "iteration": 2, "stop_reason": "tool_use",
        "results": [{"tool_use_id": "toolu_03", "content": "Sun Mar  1"}],
        "answered": ["toolu_03"],
        "deferred": [DEFERRAL],
        "open_deferrals": [DEFERRAL],
    },
    "approvals": ["exec", "exec"], "call_approvals": [{"tool_use_id": "toolu_02", "tool_name": "defer"}],
    "memory_revisions": {"notes": 3, "u64max": 18446744073709551615},
    "terminal": {"reason": "suspended", "message": None}, "ended": "2026-12-01T08:25:39.322525022Z",
    "completed": False, "status": "suspended", "waiting": True, "open_deferrals": 1,
}
LS = [
    {"run_id": "t-3f2a9c", "status": "suspended", "waiting": True, "open_deferrals": 1, "live": False,
     "version": 1, "agent": "nats-ops", "model": "claude-sonnet-4-5", "caller": "ops@example.net", "records": 9,
     "bytes": 4211, "created": "2026-03-01T10:00:00.123+02:00", "updated": "2026-03-01T08:05:00.5Z",
     "prompt": "report on ORDERS", "problem": None},
    {"run_id": "aug-run", "status": "open", "waiting": False, "open_deferrals": 0, "live": False,
     "version": 3, "agent": None, "model": "claude-sonnet-4-5", "caller": None, "records": 4,
     "bytes": None, "created": "2026-08-01T10:00:00Z", "updated": "2026-08-01T10:05:00Z",
     "prompt": "", "problem": None},
    {"run_id": "broken", "status": "corrupt", "waiting": None, "open_deferrals": None, "live": True,
     "version": None, "agent": None, "model": None, "caller": None, "records": None, "bytes": 17,
     "created": None, "updated": "2026-03-01T08:05:00Z", "prompt": None,
     "problem": "broken.json line 1 (byte 0): not JSON"},
]
VERIFY_FINDING = {"run": "t-3f2a9c", "code": "torn-tail", "severity": "warning", "line": 10,
                  "offset": 4180, "seq": None, "message": "final line is unterminated and unparsable (31 bytes)"}
VERIFY_SUMMARY = {"summary": {"runs": 2, "records": 18, "bytes": 8400, "errors": 0, "warnings": 1,
                              "infos": 1, "seconds": 0.004}}
VALIDATE_VIOLATION = {"run": "t-3f2a9c", "file": None, "line": 4, "seq": 4,
                      "protocol": "io.choria.fisk-ai.v1.session.terminal", "instance_path": "/terminal/reason",
                      "schema": "session.terminal.json",
                      "keyword_location": "/properties/terminal/$ref/properties/reason/enum",
                      "message": "\"cancelled\" is not one of completed, suspended, error, budget, max_iterations"}
VALIDATE_SUMMARY = {"summary": {"records": 18, "valid": 17, "invalid": 1, "files": 2, "seconds": 0.01}}


def changed(obj, **kw):
    out = json.loads(json.dumps(obj))
    out.update(kw)
    return out


def without(obj, key):
    return {k: v for k, v in obj.items() if k != key}


MIGRATE_RUN = {"run": "t-3f2a9c", "result": "copied", "records": 9, "bytes": 4211, "already": 4, "appended": 5,
               "sha256": "716290aa11abc66cad671bcae8efef6c98ddcd2615cc89a1f9f79e9ab51ee156",
               "source_deleted": False, "partial": False, "notes": ["continued after seq 4 already there"]}
MIGRATE_SKIPPED = {"run": "broken", "result": "skipped-corrupt", "records": 0, "bytes": 0, "already": 0,
                   "appended": 0, "sha256": None, "source_deleted": False, "partial": False,
                   "notes": ["line 3 does not parse; --include-corrupt copies the readable prefix"]}
MIGRATE = {"from": "file:/var/lib/fisk-ai/runs", "to": "jetstream:SESSIONS", "dry_run": False,
           "runs": [MIGRATE_RUN, MIGRATE_SKIPPED],
           "summary": {"runs": 2, "ok": 1, "failed": 1, "appended": 5, "seconds": 0.09}}
MIGRATE_DRY = {"from": "file:runs", "to": "file:/srv/runs", "dry_run": True,
               "runs": [changed(MIGRATE_RUN, result="would-copy", appended=0, sha256=None,
                                notes=["would continue after seq 4"]),
                        changed(MIGRATE_RUN, run="done", result="complete", already=9, appended=0, sha256=None,
                                notes=[])],
               "summary": {"runs": 2, "ok": 2, "failed": 0, "appended": 0, "seconds": 0.01}}

FOLD_DONE = changed(FOLD, pending=None, status="completed", completed=True, waiting=False, open_deferrals=0,
                    terminal={"reason": "completed", "message": "done"})
FOLD_V3 = changed(FOLD_DONE, version=3, agent=None, ended=None,
                  fingerprint=changed(FP, reasoning_effort=None), memory_revisions=None)


def check_output(schemas, registry):
    good = [
        ("fold.json", FOLD),
        ("fold.json", FOLD_DONE),
        ("fold.json", FOLD_V3),
        ("fold.json", changed(FOLD_DONE, status="open", ended=None)),
        ("fold.json", changed(FOLD_DONE, terminal=None, completed=False, status="open", ended=None,
                              memory_revisions={})),
        ("fold.json", changed(FOLD, status="open", ended=None)),
        ("ls.json", LS),
        ("ls.json", []),
        ("verify.json", VERIFY_FINDING),
        ("verify.json", {"run": "t-3f2a9c", "code": "open-deferrals", "severity": "info", "line": None,
                         "offset": None, "seq": None, "message": "waiting on toolu_02 (defer)"}),
        ("verify.json", changed(VERIFY_FINDING, code="version-3", line=1, offset=0, seq=1,
                                message="a version-3 journal: the current agent will not read it")),
        ("verify.json", changed(VERIFY_FINDING, code="mixed-generation", line=3, offset=900, seq=3,
                                message="a version-3 journal with a version-1 field: time")),
        ("verify.json", changed(VERIFY_FINDING, code="unknown-field", severity="info",
                                message="fields this tool does not know: meta.labels")),
        ("verify.json", changed(VERIFY_FINDING, code="unreadable", severity="error", line=None, offset=None,
                                message="permission denied")),
        ("verify.json", VERIFY_SUMMARY),
        ("validate.json", VALIDATE_VIOLATION),
        ("validate.json", changed(VALIDATE_VIOLATION, run=None, file="-", line=None, seq=None, protocol=None,
                                  instance_path="", schema=None, keyword_location=None,
                                  message="not a JSON object")),
        ("validate.json", VALIDATE_SUMMARY),
        ("migrate.json", MIGRATE),
        ("migrate.json", MIGRATE_DRY),
        ("migrate.json", changed(MIGRATE, runs=[], summary={"runs": 0, "ok": 0, "failed": 0, "appended": 0,
                                                             "seconds": 0.001})),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, source_deleted=True,
                                                        notes=["source deleted after verification"])])),
    ]
    bad = [
        ("fold.json", changed(FOLD, status="live"), "status live in fold"),
        ("fold.json", changed(FOLD, status="waiting"), "status waiting (waiting is its own key now)"),
        ("fold.json", changed(FOLD, status="corrupt"), "status corrupt in fold (only ls has it)"),
        ("fold.json", changed(FOLD, completed=True), "completed without a completed terminal"),
        ("fold.json", changed(FOLD, waiting=False), "open deferrals but not waiting"),
        ("fold.json", changed(FOLD, open_deferrals=0), "open deferrals but a count of 0"),
        ("fold.json", changed(FOLD_DONE, waiting=True, open_deferrals=1), "waiting with no pending turn"),
        ("fold.json", changed(FOLD_DONE, status="suspended"), "status names another reason than the terminal"),
        ("fold.json", changed(FOLD_DONE, terminal=None, completed=False, ended=None), "a terminal reason without a terminal"),
        ("fold.json", changed(FOLD_DONE, status="open"), "reopened but ended"),
        ("fold.json", changed(FOLD, ended="yesterday"), "ended not RFC 3339"),
        ("fold.json", without(FOLD, "caller"), "a key missing"),
        ("fold.json", without(FOLD, "agent"), "agent missing"),
        ("fold.json", without(FOLD, "turns"), "turns missing"),
        ("fold.json", changed(FOLD, turns=0), "turns 0"),
        ("fold.json", changed(FOLD, messages=[{"role": "user", "content": "hi"}]), "content a string"),
        ("fold.json", changed(FOLD, fingerprint=without(FP, "reasoning_effort")), "reasoning_effort missing"),
        ("fold.json", changed(FOLD, fingerprint=changed(FP, temperature=1)), "a fingerprint key beyond the eight"),
        ("fold.json", changed(FOLD, counters=without(FOLD["counters"], "mcp_tool_calls")), "mcp_tool_calls missing"),
        ("fold.json", changed(FOLD, counters=changed(FOLD["counters"], tool_calls_by_kind={"mcp": 0})),
         "a kind with no calls printed"),
        ("fold.json", changed(FOLD, counters=changed(FOLD["counters"], tool_calls_by_kind=[])),
         "tool_calls_by_kind not an object"),
        ("fold.json", changed(FOLD, memory_revisions={"x": 18446744073709551616}), "revision above uint64"),
        ("ls.json", [changed(LS[0], model=None)], "null model on a readable run"),
        ("ls.json", [changed(LS[0], status="waiting")], "status waiting"),
        ("ls.json", [changed(LS[0], open_deferrals=0)], "waiting with no open deferral"),
        ("ls.json", [changed(LS[1], open_deferrals=2)], "open deferrals but not waiting"),
        ("ls.json", [changed(LS[0], version=None)], "null version on a readable run"),
        ("ls.json", [changed(LS[0], updated="2026-03-01 08:05")], "updated not RFC 3339"),
        ("ls.json", [without(LS[0], "agent")], "agent missing"),
        ("ls.json", LS[0], "not an array"),
        ("verify.json", changed(VERIFY_FINDING, severity="error"), "severity does not match the code"),
        ("verify.json", changed(VERIFY_FINDING, code="version-3", severity="error"), "version-3 is a warning"),
        ("verify.json", changed(VERIFY_FINDING, code="unknown-field", severity="error"), "unknown-field is info"),
        ("verify.json", changed(VERIFY_FINDING, code="bogus"), "unknown code"),
        ("verify.json", changed(VERIFY_FINDING, offset=None), "line without offset"),
        ("verify.json", {"summary": {"runs": 1}}, "short summary"),
        ("validate.json", changed(VALIDATE_VIOLATION, instance_path="terminal/reason"), "not a JSON pointer"),
        ("validate.json", changed(VALIDATE_VIOLATION, schema="terminal"), "schema not a file name"),
        ("validate.json", without(VALIDATE_VIOLATION, "seq"), "a key missing"),
        ("migrate.json", without(MIGRATE, "dry_run"), "a key missing"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, result="ok")]), "unknown result word"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, result="would_copy")]), "snake_case result"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, sha256="ABC")]), "sha256 not 64 lowercase hex"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, sha256=None)]), "copied but not verified"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, records=-1)]), "negative count"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, store_failed=True)]), "an extra key"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_SKIPPED, notes=[])]), "skipped without a note"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_SKIPPED, source_deleted=True)]),
         "source deleted without a verified copy"),
        ("migrate.json", changed(MIGRATE, runs=[changed(MIGRATE_RUN, result="would-copy", appended=0,
                                                        sha256=None)]), "would-copy outside a dry run"),
        ("migrate.json", changed(MIGRATE, dry_run=True), "a dry run that copied"),
        ("migrate.json", changed(MIGRATE, to="/srv/runs"), "a store that is not a URI"),
        ("migrate.json", changed(MIGRATE, summary={"runs": 2, "ok": 1}), "short summary"),
    ]
    for name, instance in good:
        emit(OUT_BASE + name, instance, True, f"output sample for {name}")
        for e in validator(schemas, registry, OUT_BASE + name).iter_errors(instance):
            fail(f"output sample for {name} rejected at {e.json_path}: {e.message}")
    for name, instance, why in bad:
        emit(OUT_BASE + name, instance, False, f"broken output sample for {name}: {why}")
        if validator(schemas, registry, OUT_BASE + name).is_valid(instance):
            fail(f"broken output sample for {name} passed: {why}")
    return len(good), len(bad)


def main():
    if "date-time" not in FORMAT_CHECKER.checkers:
        print("date-time format checking is unavailable: pip install rfc3339-validator", file=sys.stderr)
        return 2
    schemas = load_schemas()
    registry = build_registry(schemas)
    if failures:
        print(f"FAILED: {len(failures)} surprise(s) in the schemas themselves; cases not run")
        return 1
    n_valid = check_valid(schemas, registry)
    n_invalid = check_invalid(schemas, registry)
    check_single_error(schemas, registry)
    journals = check_journals(schemas, registry)
    n_folds, n_refused = check_expected_folds(schemas, registry)
    n_good, n_bad = check_output(schemas, registry)
    print(f"{len(schemas)} schemas; {n_valid} valid and {n_invalid} invalid record cases; "
          f"{n_good} good and {n_bad} broken output samples")
    for gen, (files, records, skipped) in journals.items():
        print(f"agent-journals/{gen}: {files} journals, {records} records valid and canonical, "
              f"{skipped} optional records of unknown protocols skipped")
    print(f"agent-journals/expected: {n_folds} agent folds valid against fold.json ({n_refused} refused journals)")
    if EMIT:
        with open(EMIT, "w", encoding="utf-8") as out:
            for check in emitted:
                out.write(json.dumps(check) + "\n")
        print(f"{len(emitted)} checks written to {EMIT}")
    if failures:
        print(f"FAILED: {len(failures)} surprise(s)")
        return 1
    print("all schema checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
