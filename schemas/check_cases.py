#!/usr/bin/env python3
"""Check the JSON Schemas in schemas/ against the vectors in testdata/schema-cases/.

Needs: pip install jsonschema referencing rfc3339-validator

What it checks, exiting 1 on the first kind of surprise it finds (it reports them all):

- every schema is valid draft 2020-12, has $schema, an absolute $id that matches its
  path, a title and a description; v1 schemas reference each other by relative URI;
  every $ref resolves inside the local registry (no network is ever used);
- every line of valid.jsonl validates against the schema its protocol names, is in
  the Go writer's canonical form (compact, SPEC key order, zero `?` fields omitted,
  <>& U+2028 U+2029 escaped, map keys sorted), and the file covers what it must;
- every line of invalid.jsonl fails against the schema it names, and the file has the
  required cases for each of the ten protocols;
- a block with one bad inner field reports exactly one error;
- a hand-written instance of each output schema validates (and a few broken ones don't).

Run from anywhere: python3 schemas/check_cases.py [-v]
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
V1_BASE = "https://schemas.choria.io/fisk-ai/v1/"
OUT_BASE = "https://schemas.choria.io/fisk-admin/output/"
PREFIX = "io.choria.fisk-ai.v1.session."
PROTOCOLS = [
    "meta", "assistant", "user", "tool_result", "deferred",
    "decision", "call_approval", "memory_revisions", "terminal", "claim",
]
VERBOSE = "-v" in sys.argv[1:]
FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER

failures = []


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
    "meta": ["version", "run_id", "created", "fingerprint", "prompt", "interactive", "conversation_token", "caller"],
    "assistant": ["iteration", "message", "stop_reason", "in_tokens", "out_tokens",
                  "cache_read_tokens", "cache_create_tokens", "thinking_tokens"],
    "user": ["message"],
    "tool_result": ["tool_use_id", "result", "remote"],
    "deferred": ["tool_use_id", "tool_name", "note", "handle"],
    "decision": ["tool"],
    "call_approval": ["tool_use_id", "tool_name"],
    "memory_revisions": ["revisions"],
    "terminal": ["reason", "message"],
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
OMITEMPTY = {
    "envelope": {"optional"},
    "meta": {"interactive", "conversation_token", "caller"},
    "assistant": {"stop_reason", "cache_read_tokens", "cache_create_tokens", "thinking_tokens"},
    "tool_result": {"remote"},
    "deferred": {"note", "handle"},
    "terminal": {"message"},
    "fingerprint": {"reasoning_effort"},
    "result": {"is_error"},
    "b.thinking": {"text", "signature"},
    "b.tool_result": {"is_error"},
}


def go_encode(value):
    """Compact JSON as Go's encoding/json writes it (key order as given)."""
    s = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                     ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(raw, esc)  # these characters can only occur inside strings
    return s


def check_shape(kind, obj, where, problems):
    if not isinstance(obj, dict):
        return
    keys = list(obj)
    order = ORDER.get(kind)
    if order is not None:
        ranks = [order.index(k) if k in order else -1 for k in keys]
        if -1 in ranks or ranks != sorted(ranks):
            problems.append(f"{where}: keys {keys} not in SPEC order {order}")
    for k in OMITEMPTY.get(kind, ()):
        if k in obj and obj[k] in ("", 0, False, None):
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
        if k in ("fingerprint", "message", "result"):
            check_shape(k, v, f"{where}.{k}", problems)
    if kind == "memory_revisions" and isinstance(obj.get("revisions"), dict):
        revs = list(obj["revisions"])
        if revs != sorted(revs):
            problems.append(f"{where}.revisions: map keys not sorted")


def canonical_problems(line, record):
    problems = []
    if go_encode(record) != line:
        problems.append("not compact Go encoding (or <>& U+2028 U+2029 not escaped)")
    keys = list(record)
    payload = [k for k in keys if k not in ("seq", "protocol", "optional")]
    if keys[:2] != ["seq", "protocol"] or len(payload) != 1 or keys[-1] != payload[0]:
        problems.append(f"envelope keys {keys} not seq, protocol, optional?, payload")
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


def check_valid(schemas, registry):
    per_protocol = {p: 0 for p in PROTOCOLS}
    seen = set()
    for n, line, record in read_jsonl(CASES / "valid.jsonl"):
        where = f"valid.jsonl:{n}"
        proto = record.get("protocol", "") if isinstance(record, dict) else ""
        suffix = proto[len(PREFIX):] if proto.startswith(PREFIX) else None
        if suffix not in per_protocol:
            fail(f"{where}: protocol {proto!r} is not one of the ten")
            continue
        per_protocol[suffix] += 1
        errors = list(validator(schemas, registry, V1_BASE + f"session.{suffix}.json").iter_errors(record))
        for e in errors:
            fail(f"{where}: valid case rejected at {e.json_path}: {e.message}")
        for p in canonical_problems(line, record):
            fail(f"{where}: {p}")
        payload = record[suffix]
        if record.get("optional") is True:
            seen.add("optional:true")
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
    for p, count in per_protocol.items():
        if count < 3:
            fail(f"valid.jsonl: only {count} cases for {p} (need 3)")
    need = {"block:text", "block:thinking", "block:tool_use", "block:tool_result", "block:provider",
            "null content", "null input", "null revisions", "optional:true", "reasoning_effort",
            "thinking_tokens", "cache_read_tokens", "cache_create_tokens", "offset+fraction timestamp"}
    for missing in sorted(need - seen):
        fail(f"valid.jsonl: no case covers {missing}")
    return sum(per_protocol.values())


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
        errors = list(validator(schemas, registry, sid).iter_errors(case["record"]))
        if not errors:
            fail(f"{where}: invalid case passed {case['schema']}: {case['why']}")
        elif VERBOSE:
            for e in errors:
                print(f"  {where} [{case['why']}] {e.json_path}: {e.message[:120]}")
        suffix = case["schema"][len("session."):-len(".json")]
        why = case["why"]
        whys.append((suffix, why))
        for cat in ("missing required", "wrong type", "unknown key (payload)", "unknown key (top level)"):
            if why.startswith(cat):
                cover[suffix].add(cat)
    for p, cats in cover.items():
        for cat in ("missing required", "wrong type", "unknown key (payload)", "unknown key (top level)"):
            if cat not in cats:
                fail(f"invalid.jsonl: no '{cat}' case for {p}")
    specials = [
        ("terminal", "terminal reason outside the five"),
        ("memory_revisions", "memory revision 0"),
        ("meta", "meta whose seq is 2"),
        ("meta", "seq 0"),
        ("meta", "created not RFC 3339: 'yesterday'"),
        ("meta", "created not RFC 3339: '2026-13-01T00:00:00Z'"),
        ("claim", "claimed not RFC 3339: 'yesterday'"),
        ("claim", "claimed not RFC 3339: '2026-13-01T00:00:00Z'"),
        ("deferred", "deferred must never carry optional: true"),
    ]
    for suffix, prefix in specials:
        if not any(s == suffix and w.startswith(prefix) for s, w in whys):
            fail(f"invalid.jsonl: no case '{prefix}' for {suffix}")
    return count


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
FOLD = {
    "version": 3, "run_id": "t-3f2a9c", "fingerprint": FP, "prompt": "report on ORDERS",
    "interactive": False, "conversation_token": None, "caller": None,
    "messages": [
        {"role": "user", "content": [{"text": {"text": "report on ORDERS"}}]},
        {"role": "assistant", "content": [{"tool_use": {"id": "toolu_01", "name": "exec", "input": {"command": "ls"}}}]},
        {"role": "user", "content": [{"tool_result": {"tool_use_id": "toolu_01", "content": "a b"}}]},
        {"role": "assistant", "content": []},
    ],
    "counters": {"llm_calls": 3, "tool_calls": 2, "remote_tool_calls": 0, "in_tokens": 3000,
                 "out_tokens": 200, "cache_read_tokens": 0, "cache_create_tokens": 0, "thinking_tokens": 0},
    "next_iteration": 3, "last_stop_reason": "tool_use",
    "pending": {
        "assistant": {"role": "assistant", "content": [
            {"tool_use": {"id": "toolu_02", "name": "defer", "input": None}},
            {"tool_use": {"id": "toolu_03", "name": "exec", "input": {"command": "date"}}}]},
        "iteration": 2, "stop_reason": "tool_use",
        "results": [{"tool_use_id": "toolu_03", "content": "Sun Mar  1"}],
        "answered": ["toolu_03"],
        "deferred": [{"tool_use_id": "toolu_02", "tool_name": "defer", "note": "approval"}],
        "open_deferrals": [{"tool_use_id": "toolu_02", "tool_name": "defer", "note": "approval"}],
    },
    "approvals": ["exec", "exec"], "call_approvals": [{"tool_use_id": "toolu_02", "tool_name": "defer"}],
    "memory_revisions": {"notes": 3},
    "terminal": {"reason": "suspended", "message": None}, "completed": False, "status": "waiting",
}
LS = [
    {"run_id": "t-3f2a9c", "status": "waiting", "live": False, "model": "claude-sonnet-4-5", "records": 9,
     "bytes": 4211, "created": "2026-03-01T10:00:00.123+02:00", "updated": "2026-03-01T08:05:00.5Z",
     "prompt": "report on ORDERS"},
    {"run_id": "broken", "status": "corrupt", "live": True, "model": None, "records": None, "bytes": 17,
     "created": None, "updated": "2026-03-01T08:05:00Z", "prompt": None},
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


MIGRATE_RUN = {"run": "t-3f2a9c", "result": "copied", "records": 9, "bytes": 4211, "already": 4, "appended": 5,
               "sha256": "716290aa11abc66cad671bcae8efef6c98ddcd2615cc89a1f9f79e9ab51ee156",
               "source_deleted": False, "notes": ["continued after seq 4 already there"]}
MIGRATE_SKIPPED = {"run": "broken", "result": "skipped-corrupt", "records": 0, "bytes": 0, "already": 0,
                   "appended": 0, "sha256": None, "source_deleted": False,
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


def check_output(schemas, registry):
    good = [
        ("fold.json", FOLD),
        ("fold.json", changed(FOLD, pending=None, status="completed", completed=True,
                              terminal={"reason": "completed", "message": "done"})),
        ("ls.json", LS),
        ("ls.json", []),
        ("verify.json", VERIFY_FINDING),
        ("verify.json", {"run": "t-3f2a9c", "code": "open-deferrals", "severity": "info", "line": None,
                         "offset": None, "seq": None, "message": "waiting on toolu_02 (defer)"}),
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
        ("fold.json", changed(FOLD, completed=True), "completed without a completed terminal"),
        ("fold.json", changed(FOLD, status="suspended"), "open deferrals but not waiting"),
        ("fold.json", {k: v for k, v in FOLD.items() if k != "caller"}, "a key missing"),
        ("fold.json", changed(FOLD, messages=[{"role": "user", "content": None}]), "null content in output"),
        ("fold.json", changed(FOLD, fingerprint={k: v for k, v in FP.items() if k != "reasoning_effort"}),
         "reasoning_effort missing"),
        ("ls.json", [changed(LS[0], model=None)], "null model on a readable run"),
        ("ls.json", LS[0], "not an array"),
        ("verify.json", changed(VERIFY_FINDING, severity="error"), "severity does not match the code"),
        ("verify.json", changed(VERIFY_FINDING, code="bogus"), "unknown code"),
        ("verify.json", changed(VERIFY_FINDING, offset=None), "line without offset"),
        ("verify.json", {"summary": {"runs": 1}}, "short summary"),
        ("validate.json", changed(VALIDATE_VIOLATION, instance_path="terminal/reason"), "not a JSON pointer"),
        ("validate.json", changed(VALIDATE_VIOLATION, schema="terminal"), "schema not a file name"),
        ("validate.json", {k: v for k, v in VALIDATE_VIOLATION.items() if k != "seq"}, "a key missing"),
        ("migrate.json", {k: v for k, v in MIGRATE.items() if k != "dry_run"}, "a key missing"),
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
        for e in validator(schemas, registry, OUT_BASE + name).iter_errors(instance):
            fail(f"output sample for {name} rejected at {e.json_path}: {e.message}")
    for name, instance, why in bad:
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
    n_good, n_bad = check_output(schemas, registry)
    print(f"{len(schemas)} schemas; {n_valid} valid and {n_invalid} invalid record cases; "
          f"{n_good} good and {n_bad} broken output samples")
    if failures:
        print(f"FAILED: {len(failures)} surprise(s)")
        return 1
    print("all schema checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
