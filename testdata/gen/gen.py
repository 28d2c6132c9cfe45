#!/usr/bin/env python3
"""Write the fisk-admin test corpus, deterministically (Python 3.11, stdlib).

    python3 testdata/gen/gen.py            write anything missing, check the rest
    python3 testdata/gen/gen.py --check    write nothing; fail if anything differs

Journals are written in the Go agent's canonical form (SPEC 1): compact JSON,
keys in table order, zero `?` fields omitted, `<` `>` `&` U+2028 U+2029
escaped, map keys sorted, nil slices/maps as `null`.

The corpus is append-only: a journal once committed is never edited. If a
journal on disk differs from what this script would write, the script stops
(add a new case under a new name instead). Expected results are derived from
the independent reference model in oracle.py and are rewritten freely.

Every case also carries a hand-written expectation (status, findings) that
the oracle's output must match before anything is written: the corpus design
and the oracle check each other.
"""

import base64
import datetime
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import oracle  # noqa: E402

PFX = "io.choria.fisk-ai.v1.session."

# ------------------------------------------------------------------ encoding

GO_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
              ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def enc(obj):
    """Go encoding/json output for obj (dict order = struct field order).
    Python already escapes control characters as \\n \\t \\b \\f \\r or
    lowercase \\u00XX like Go >= 1.22; the characters below only ever occur
    inside JSON strings, so a plain replace is exact."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    for a, b in GO_ESCAPES:
        s = s.replace(a, b)
    return s


def put(d, key, value):
    """Set an omitempty (`?`) field: "", 0, false and nil are omitted."""
    if value is None or value is False or value == "" or (isinstance(value, int) and value == 0):
        return d
    d[key] = value
    return d


# ------------------------------------------------------------------ payloads

def sha(s):
    return hashlib.sha256(s.encode()).hexdigest()


def system_hash(parts):
    return sha(json.dumps(parts, separators=(",", ":"), ensure_ascii=False))


def tools_hash(tools):
    defs = [{"Name": n, "Description": d, "InputSchema": json.loads(json.dumps(s, sort_keys=True)),
             "DeferLoading": False} for n, d, s in tools]
    return sha(json.dumps(defs, separators=(",", ":"), ensure_ascii=False, sort_keys=False))


TOOLS_OPS = [
    ("exec", "Run a shell command", {"type": "object", "properties": {"command": {"type": "string"}, "timeout_s": {"type": "integer"}}, "required": ["command"]}),
    ("defer", "Answer later", {"type": "object", "properties": {"note": {"type": "string"}, "handle": {"type": "string"}}}),
]
TOOLS_DEPLOY = TOOLS_OPS + [
    ("deploy", "Deploy a service", {"type": "object", "properties": {"service": {"type": "string"}, "version": {"type": "string"}, "env": {"type": "string"}}}),
    ("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
]


def fingerprint(provider, model, system, tools, thinking_mode="off", reasoning_effort="",
                max_tokens=200000, max_iterations=20):
    fp = {"provider": provider, "model": model, "system_hash": system_hash(system),
          "tools_hash": tools_hash(tools), "thinking_mode": thinking_mode}
    put(fp, "reasoning_effort", reasoning_effort)
    fp["max_tokens"] = max_tokens
    fp["max_iterations"] = max_iterations
    return fp


SYS = ["You are a careful operator.", "Prefer read-only commands; ask before any change."]
FP_SONNET = fingerprint("anthropic", "claude-sonnet-4-5", SYS, TOOLS_OPS)
FP_DEPLOY = fingerprint("anthropic", "claude-sonnet-4-5", SYS, TOOLS_DEPLOY, max_iterations=30)
FP_THINK = fingerprint("anthropic", "claude-opus-4-1", SYS, TOOLS_OPS, "summarized", "high", 64000, 40)
FP_OPENAI = fingerprint("openai", "gpt-5-mini", ["You are terse."], TOOLS_OPS, "off", "low", 128000, 25)
FP_SCRIPT = fingerprint("script", "demo-1", ["You are a careful operator."], TOOLS_OPS)


def text(t):
    return {"text": {"text": t}}


def thinking(t="", signature=""):
    inner = {}
    put(inner, "text", t)
    put(inner, "signature", signature)
    return {"thinking": inner}


def tool_use(id_, name, input_):
    return {"tool_use": {"id": id_, "name": name, "input": input_}}


def provider(kind, raw):
    return {"provider": {"kind": kind, "raw": raw}}


def msg(role, content):
    return {"role": role, "content": content}


def result_obj(id_, content, is_error=False):
    r = {"tool_use_id": id_, "content": content}
    put(r, "is_error", is_error)
    return r


def sig(seed):
    """A thinking signature: bytes, base64 standard alphabet with padding."""
    return base64.b64encode(hashlib.sha512(seed.encode()).digest()).decode()


B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def tid(run, n):
    """A deterministic Anthropic-shaped tool_use id."""
    v = int.from_bytes(hashlib.sha256(f"{run}/{n}".encode()).digest(), "big")
    s = ""
    while len(s) < 22:
        v, r = divmod(v, 62)
        s += B62[r]
    return "toolu_01" + s


# ------------------------------------------------------------------ journals

# Building a version-1 journal (SPEC 1.1): main() sets GEN["v1"] while it
# builds runs-v1/ and damaged-v1/, so the same builders write both
# generations. With GEN["v1"] off every byte is what it always was.
GEN = {"v1": False, "agent": "nats-ops"}
CLOCK = object()         # rec(time=CLOCK): the journal's deterministic append clock
JSON_NULL_TIME = object()  # rec(time=JSON_NULL_TIME) writes "time":null (time=None omits it)
KIND_NUM = {"unknown": 0, "application": 1, "builtin": 2, "remote": 3, "custom": 4, "mcp": 5}
TIME_PARTS = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)")


def unix_ns(t):
    """An RFC 3339 string (as gen.py writes them) as Unix nanoseconds."""
    m = TIME_PARTS.fullmatch(t)
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    z = m.group(8)
    tz = datetime.timezone.utc if z == "Z" else datetime.timezone(
        (1 if z[0] == "+" else -1) * datetime.timedelta(hours=int(z[1:3]), minutes=int(z[4:6])))
    sec = int(datetime.datetime(y, mo, d, h, mi, s, tzinfo=tz).timestamp())
    return sec * 10**9 + int((m.group(7) or "0")[:9].ljust(9, "0"))


def utc_stamp(ns):
    """What the v1 writer stamps: UTC, nanoseconds, Go's trimmed form."""
    sec, frac = divmod(ns, 10**9)
    out = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        out += "." + f"{frac:09d}".rstrip("0")
    return out + "Z"


class Journal:
    """Builds one journal, line by line, in canonical form."""

    def __init__(self, run_id, created, fp, prompt, *, interactive=False,
                 conversation_token="", caller="", version=None, meta_seq=1,
                 agent=None, dated=None, time=CLOCK, more=None):
        self.run_id = run_id
        self.v1 = GEN["v1"]
        self.dated = self.v1 if dated is None else dated     # stamp `time` by default
        self.clock = unix_ns(created)
        self.lines = []          # bytes, without the trailing newline
        self.seq = 0
        self.tail = b""          # bytes after the last newline (torn / unterminated)
        self.deferred_kinds = {}
        self.tally = {"turns": 1, "context_tokens": 0, "llm_calls": 0, "tool_calls": 0,
                      "remote_tool_calls": 0, "mcp_tool_calls": 0, "tool_calls_by_kind": {},
                      "in_tokens": 0, "out_tokens": 0, "cache_read_tokens": 0,
                      "cache_create_tokens": 0, "thinking_tokens": 0}
        if version is None:
            version = 1 if self.v1 else 3
        if agent is None:
            agent = GEN["agent"] if self.v1 else ""
        m = {"version": version, "run_id": run_id, "created": created,
             "fingerprint": fp, "prompt": prompt}
        put(m, "interactive", interactive)
        put(m, "conversation_token", conversation_token)
        put(m, "caller", caller)
        put(m, "agent", agent)
        self.meta_payload = m
        self.rec("meta", m, seq=meta_seq, time=time, more=more)

    def stamp(self, seq):
        """The deterministic append clock: the meta record at `created`, each
        later record 0.15-3 s after the one before, nanoseconds varied."""
        if self.lines:
            h = int(hashlib.sha256(f"{self.run_id}/{seq}/time".encode()).hexdigest()[:12], 16)
            self.clock += 150_000_000 + h % 2_850_000_000
        return utc_stamp(self.clock)

    def encode_rec(self, kind, payload, *, seq, optional=False, protocol=None,
                   extra=None, omit_payload=False, time=CLOCK, more=None):
        d = {"seq": seq, "protocol": protocol or PFX + kind}
        if time is CLOCK:
            time = self.stamp(seq) if self.dated else None
        if time is JSON_NULL_TIME:
            d["time"] = None
        elif time is not None:
            d["time"] = time
        if optional:
            d["optional"] = True
        if not omit_payload:
            if more:
                payload = dict(payload, **more)
            d[kind] = payload
        for k, v in (extra or {}).items():
            d[k] = v
        return enc(d).encode()

    def rec(self, kind, payload, *, seq=None, **kw):
        seq = self.seq + 1 if seq is None else seq
        self.seq = seq
        self.lines.append(self.encode_rec(kind, payload, seq=seq, **kw))
        return self

    def raw(self, data):
        self.lines.append(data)
        return self

    # --- one helper per record kind, canonical field order
    def assistant(self, iteration, content, stop="", inp=0, out=0, cache_read=0,
                  cache_create=0, thinking_tokens=0, **kw):
        p = {"iteration": iteration, "message": msg("assistant", content)}
        put(p, "stop_reason", stop)
        p["in_tokens"] = inp
        p["out_tokens"] = out
        put(p, "cache_read_tokens", cache_read)
        put(p, "cache_create_tokens", cache_create)
        put(p, "thinking_tokens", thinking_tokens)
        t = self.tally
        t["llm_calls"] += 1
        for k, v in (("in_tokens", inp), ("out_tokens", out), ("cache_read_tokens", cache_read),
                     ("cache_create_tokens", cache_create), ("thinking_tokens", thinking_tokens)):
            t[k] += v
        t["context_tokens"] = inp + cache_read + cache_create
        return self.rec("assistant", p, **kw)

    def user(self, content, **kw):
        self.tally["turns"] += 1
        return self.rec("user", {"message": msg("user", content)}, **kw)

    def result(self, id_, content, is_error=False, remote=False, kind=None, dispatched=None,
               result_more=None, **kw):
        """Version 1: `kind`/`dispatched` default to the deferral's (SPEC 6),
        else remote/application, dispatched; kind=False writes a legacy result."""
        if self.v1 and kind is None:
            kind, d = self.deferred_kinds.get(id_, ("remote" if remote else "application", True))
            dispatched = d if dispatched is None else dispatched
        kind = kind or ""
        if kind:
            remote = kind == "remote" and bool(dispatched)
        r = result_obj(id_, content, is_error)
        if result_more:
            r.update(result_more)
        p = {"tool_use_id": id_, "result": r}
        put(p, "remote", remote)
        put(p, "kind", kind)
        put(p, "dispatched", dispatched)
        t = self.tally
        t["tool_calls"] += 1
        bucket, sent = (kind, bool(dispatched)) if kind else (("remote", True) if remote else ("unknown", False))
        num = str(KIND_NUM.get(bucket, 0))
        t["tool_calls_by_kind"][num] = t["tool_calls_by_kind"].get(num, 0) + 1
        if sent and bucket == "remote":
            t["remote_tool_calls"] += 1
        if sent and bucket == "mcp":
            t["mcp_tool_calls"] += 1
        return self.rec("tool_result", p, **kw)

    def deferred(self, id_, name, note="", handle="", kind=None, dispatched=None, **kw):
        if self.v1 and kind is None:
            kind = "custom"
            dispatched = True if dispatched is None else dispatched
        p = {"tool_use_id": id_, "tool_name": name}
        put(p, "note", note)
        put(p, "handle", handle)
        put(p, "kind", kind or "")
        put(p, "dispatched", dispatched)
        self.deferred_kinds[id_] = (kind or False, dispatched)
        return self.rec("deferred", p, **kw)

    def decision(self, tool, **kw):
        return self.rec("decision", {"tool": tool}, **kw)

    def call_approval(self, id_, name, **kw):
        return self.rec("call_approval", {"tool_use_id": id_, "tool_name": name}, **kw)

    def memrev(self, revisions, **kw):
        r = None if revisions is None else {k: revisions[k] for k in sorted(revisions)}
        return self.rec("memory_revisions", {"revisions": r}, **kw)

    def summary(self):
        """terminal.summary as the v1 agent writes it (zero counters omitted,
        tool_calls_by_kind keyed by the agent's internal kind number)."""
        t = self.tally
        c = {}
        for k in ("llm_calls", "tool_calls", "remote_tool_calls", "mcp_tool_calls",
                  "tool_calls_by_kind", "in_tokens", "out_tokens", "cache_read_tokens",
                  "cache_create_tokens", "thinking_tokens"):
            v = t[k]
            if k == "tool_calls_by_kind":
                v = {n: v[n] for n in sorted(v)}
            if v:
                c[k] = v
        return {"turns": t["turns"], "context_tokens": t["context_tokens"], "counters": c}

    def terminal(self, reason, message="", summary=None, **kw):
        p = {"reason": reason}
        put(p, "message", message)
        if summary is None and self.v1:
            summary = self.summary()
        if summary:
            p["summary"] = summary
        return self.rec("terminal", p, **kw)

    def claim(self, by, claimed, **kw):
        return self.rec("claim", {"by": by, "claimed": claimed}, **kw)

    def render(self, final_newline=True):
        body = b"".join(l + b"\n" for l in self.lines)
        if not final_newline and body:
            body = body[:-1]
        return body + self.tail


# ------------------------------------------------------------------ healthy runs

RUNS = []      # (run_id, description, builder, expect)


def run(run_id, description, status, infos=()):
    def deco(fn):
        RUNS.append((run_id, description, fn, {"status": status, "infos": list(infos)}))
        return fn
    return deco


@run("simple-completed", "one assistant turn with no tools, terminal completed (a stale, unheld .lock beside it)", "completed")
def _():
    j = Journal("simple-completed", "2026-11-02T09:14:03.5121Z", FP_SONNET,
                "Summarise the health of the ORDERS stream in one paragraph.")
    j.assistant(0, [text("The ORDERS stream is healthy: 3 replicas are current, it holds 1.2M messages and no consumer lags by more than 50.")],
                "end_turn", 812, 64)
    j.terminal("completed")
    return j


@run("tool-batch", "one batch of 3 parallel tool_use answered out of order (one is_error), then a final answer", "completed")
def _():
    r = "tool-batch"
    j = Journal(r, "2026-11-02T09:20:11.000734Z", FP_SONNET,
                "Which of the three JetStream servers is furthest behind?")
    a, b, c = tid(r, 1), tid(r, 2), tid(r, 3)
    j.assistant(0, [text("I'll ask all three servers in parallel."),
                    tool_use(a, "exec", {"command": "nats server info nats-1 --json"}),
                    tool_use(b, "exec", {"command": "nats server info nats-2 --json"}),
                    tool_use(c, "exec", {"command": "nats server info nats-3 --json", "timeout_s": 5})],
                "tool_use", 1450, 210)
    j.result(b, '{"server_name":"nats-2","jetstream":{"api":{"total":88120,"errors":3},"lag":0}}')
    j.result(c, "nats: error: timeout waiting for response from nats-3", is_error=True)
    j.result(a, '{"server_name":"nats-1","jetstream":{"api":{"total":91004,"errors":0},"lag":412}}')
    j.assistant(1, [text("nats-1 is furthest behind (lag 412). nats-3 did not answer within 5s; check it next.")],
                "end_turn", 1920, 48)
    j.terminal("completed")
    return j


@run("multi-iteration", "script provider, four iterations, a tool_use with \"input\":null, stop_reason omitted on the last turn (last_stop_reason null)", "completed")
def _():
    r = "multi-iteration"
    j = Journal(r, "2026-11-03T14:00:00Z", FP_SCRIPT, "Find and clean up stale consumers on ORDERS.")
    t = [tid(r, i) for i in range(5)]
    j.assistant(0, [tool_use(t[0], "list_streams", None)], "tool_use", 300, 20)
    j.result(t[0], "error: unknown tool \"list_streams\"", is_error=True)
    j.assistant(1, [text("Falling back to exec."), tool_use(t[1], "exec", {"command": "nats consumer ls ORDERS --json"})], "tool_use", 420, 35)
    j.result(t[1], '[{"name":"ship-eu","last_active":"2026-07-01T00:00:00Z"},{"name":"ship-us","last_active":"2026-07-03T00:00:00Z"},{"name":"billing","last_active":"2026-11-03T13:59:12Z"}]')
    j.assistant(2, [tool_use(t[2], "exec", {"command": "nats consumer rm ORDERS ship-eu -f"}),
                    tool_use(t[3], "exec", {"command": "nats consumer rm ORDERS ship-us -f"})], "tool_use", 610, 52)
    j.result(t[2], "Deleted consumer ORDERS > ship-eu")
    j.result(t[3], "Deleted consumer ORDERS > ship-us")
    j.assistant(3, [text("Removed ship-eu and ship-us (idle since July). billing is active and was kept.")], "", 700, 30)
    j.terminal("completed")
    return j


@run("pending-batch", "crash mid-batch: assistant with 3 tool_use, 1 result, no terminal (pending batch, status open)", "open")
def _():
    r = "pending-batch"
    j = Journal(r, "2026-11-04T08:30:45.9Z", FP_SONNET,
                "Restart the three edge leafnodes one at a time and confirm each rejoins.")
    a, b, c = tid(r, 1), tid(r, 2), tid(r, 3)
    j.assistant(0, [text("Restarting edge-1, edge-2 and edge-3."),
                    tool_use(a, "exec", {"command": "systemctl restart nats-leaf@edge-1"}),
                    tool_use(b, "exec", {"command": "systemctl restart nats-leaf@edge-2"}),
                    tool_use(c, "exec", {"command": "systemctl restart nats-leaf@edge-3"})],
                "tool_use", 980, 140)
    j.result(a, "")
    return j


@run("deferral-waiting", "exec + defer in one batch; exec answered, deferred record, terminal suspended: status suspended, waiting on 1 open deferral", "suspended", ["open-deferrals"])
def _():
    r = "deferral-waiting"
    j = Journal(r, "2026-11-04T11:02:17.25+02:00", FP_SONNET,
                "Rotate the ORDERS writer credentials; the new creds need security sign-off.")
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [text("Checking the current user, and asking security for sign-off."),
                    tool_use(a, "exec", {"command": "nsc describe user orders-writer"}),
                    tool_use(b, "defer", {"note": "security sign-off for SEC-4411", "handle": "SEC-4411"})],
                "tool_use", 1200, 160)
    j.result(a, "User orders-writer\n  Expires: 2026-11-30\n  Pub allow: ORDERS.>")
    j.deferred(b, "defer", "security sign-off for SEC-4411", "SEC-4411")
    j.terminal("suspended", "waiting on 1 deferred call")
    return j


@run("deferral-partly-answered", "two deferrals journaled in reverse id order, one answered after the suspend: the answer reopens the run (status open), still waiting on the other", "open", ["open-deferrals"])
def _():
    r = "deferral-partly-answered"
    j = Journal(r, "2026-11-05T16:45:00.000000001Z", FP_SONNET,
                "Ask both approvers before purging the DLQ stream.")
    a, b, c = "toolu_01XhG7pL2sVq9TfNwE3kJr", "toolu_01BqR8mZ4cYt6WdKxP1nLa", "toolu_01KpV3nH7bQw2ZsJyT5cMe"
    j.assistant(0, [text("Counting DLQ messages and asking alice and bob."),
                    tool_use(a, "exec", {"command": "nats stream info DLQ --json"}),
                    tool_use(c, "defer", {"note": "approval from alice", "handle": "approvals/alice/7781"}),
                    tool_use(b, "defer", {})],
                "tool_use", 1310, 190)
    j.result(a, '{"config":{"name":"DLQ"},"state":{"messages":5120}}')
    j.deferred(c, "defer", "approval from alice", "approvals/alice/7781")
    j.deferred(b, "defer")
    j.terminal("suspended", "waiting on 2 deferred calls")
    j.result(c, "approved by alice (purge ok, keep the last 100)")
    return j


@run("deferral-answered", "deferred, suspended, answered by hand, claim, next assistant turn, completed", "completed")
def _():
    r = "deferral-answered"
    j = Journal(r, "2026-11-05T09:00:00.5Z", FP_SONNET, "Open a change request to scale ORDERS to 5 replicas and proceed once approved.")
    d = tid(r, 1)
    j.assistant(0, [tool_use(d, "defer", {"note": "CAB approval for CR-2211", "handle": "CR-2211"})], "tool_use", 900, 70)
    j.deferred(d, "defer", "CAB approval for CR-2211", "CR-2211")
    j.terminal("suspended", "waiting on 1 deferred call")
    j.result(d, "CR-2211 approved by the CAB on 2026-11-06")
    j.claim("fisk-admin resume (pid 48211) on ops-3", "2026-11-06T10:12:54.118Z")
    j.assistant(1, [text("CR-2211 is approved. Scale with: nats stream edit ORDERS --replicas 5")], "end_turn", 1100, 40)
    j.terminal("completed")
    return j


@run("deferral-answered-unresumed", "deferral answered by hand but not resumed yet: turn fully answered, committed, no pending; the answer follows the terminal so status open", "open")
def _():
    r = "deferral-answered-unresumed"
    j = Journal(r, "2026-11-06T07:07:07.007Z", FP_SONNET, "Get the on-call lead to confirm the failover window.")
    d = tid(r, 1)
    j.assistant(0, [text("Asking the on-call lead."), tool_use(d, "defer", {"note": "failover window", "handle": "pager/INC-77"})], "tool_use", 640, 55)
    j.deferred(d, "defer", "failover window", "pager/INC-77")
    j.terminal("suspended", "waiting on 1 deferred call")
    j.result(d, "confirmed: Saturday 02:00-03:00 UTC")
    return j


@run("approvals", "standing approvals (decision, duplicates kept) and one-shot call_approval cleared by terminals; memory_revisions replaced by \"revisions\":null; pending batch; the call_approval after the last terminal reopens the run (status open)", "open")
def _():
    r = "approvals"
    j = Journal(r, "2026-11-07T12:00:00.123456789Z", FP_DEPLOY, "Deploy billing 2.14.1 to staging, check it, then to production.")
    a, b, c = tid(r, 1), tid(r, 2), tid(r, 3)
    j.decision("exec")
    j.assistant(0, [tool_use(a, "deploy", {"service": "billing", "version": "2.14.1", "env": "staging"})], "tool_use", 1500, 80)
    j.terminal("suspended", "deploy needs a one-shot approval")
    j.call_approval(a, "deploy")
    j.claim("fisk-admin resume on ops-1", "2026-11-07T12:31:09.5-05:00")
    j.result(a, "deployed billing 2.14.1 to staging")
    j.memrev({"deploy/billing": 4, "deploy/audit": 1})
    j.assistant(1, [tool_use(b, "deploy", {"service": "billing", "version": "2.14.1", "env": "production"}),
                    tool_use(c, "exec", {"command": "curl -fsS https://billing.staging.internal/healthz"})], "tool_use", 1700, 95)
    j.call_approval(b, "deploy")
    j.result(c, "ok")
    j.decision("read_file")
    j.decision("exec")
    j.memrev(None)
    j.terminal("suspended", "interrupted (SIGINT)")
    j.call_approval(b, "deploy")
    return j


@run("memory-revisions", "memory_revisions twice, the second between an assistant and its result: newest wins, no merge, keys sorted", "completed")
def _():
    r = "memory-revisions"
    j = Journal(r, "2026-11-08T10:10:10.1Z", FP_SONNET, "Update the runbook notes with today's findings.")
    a = tid(r, 1)
    j.memrev({"plan": 2, "notes/ops": 1})
    j.assistant(0, [tool_use(a, "exec", {"command": "fisk memory write plan"})], "tool_use", 500, 40)
    j.memrev({"zeta": 1, "plan": 3, "alpha": 7})
    j.result(a, "wrote plan (revision 3)")
    j.assistant(1, [text("Runbook notes updated.")], "end_turn", 560, 12)
    j.terminal("completed")
    return j


@run("claim-mid-batch", "a claim lands between an assistant record and its remaining tool result (resume after a crash mid-batch); the claim must not commit the turn", "completed")
def _():
    r = "claim-mid-batch"
    j = Journal(r, "2026-11-08T22:15:30.75Z", FP_SONNET, "Compact both KV buckets.")
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats kv compact CONFIG"}), tool_use(b, "exec", {"command": "nats kv compact SESSIONS"})], "tool_use", 700, 66)
    j.result(a, "compacted CONFIG: 120 -> 31 entries")
    j.claim("fisk-admin resume (pid 9120) on ops-2 after crash", "2026-11-08T22:19:02.000301Z")
    j.result(b, "compacted SESSIONS: 8812 -> 4010 entries")
    j.assistant(1, [text("Both buckets compacted.")], "end_turn", 820, 14)
    j.terminal("completed")
    return j


@run("chat-followups", "interactive chat: user records after a completed terminal, two in a row that merge into one message, then more turns", "completed")
def _():
    r = "chat-followups"
    j = Journal(r, "2026-11-09T08:00:00.42+01:00", FP_SONNET, "What streams do we have?",
                interactive=True, conversation_token="t-3f2a9c81d0e44b7a", caller="tui:alice@ops-laptop")
    a = tid(r, 1)
    j.assistant(0, [text("ORDERS, DLQ and AUDIT.")], "end_turn", 400, 12)
    j.terminal("completed")
    j.user([text("And the consumers on ORDERS?")])
    j.user([text("Only the durable ones, please.")])
    j.assistant(1, [tool_use(a, "exec", {"command": "nats consumer ls ORDERS"})], "tool_use", 520, 30)
    j.result(a, "billing (durable)\nship-eu (durable)\ntmp-1 (ephemeral)")
    j.assistant(2, [text("Durable consumers on ORDERS: billing and ship-eu.")], "end_turn", 640, 18)
    j.terminal("completed")
    return j


@run("chat-user-after-results", "interactive: suspended after tool results, claim, a user record that merges into the tool-results user message; trailing user means status open, last_stop_reason still tool_use", "open")
def _():
    r = "chat-user-after-results"
    j = Journal(r, "2026-11-09T18:22:05.3Z", FP_SONNET, "Tail the AUDIT stream for failed logins.",
                interactive=True, conversation_token="t-77aa01")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats stream get AUDIT --last-for audit.login.failed"})], "tool_use", 450, 33)
    j.result(a, "audit.login.failed: user=mallory src=203.0.113.9")
    j.terminal("suspended", "interrupted (SIGTERM)")
    j.claim("tui resume on alice-laptop", "2026-11-10T07:00:00Z")
    j.user([text("Also check the 24h count.")])
    return j


@run("optional-telemetry", "an unknown protocol with \"optional\":true after the terminal: skipped by the fold, but any record after the terminal reopens the run (status open)", "open", ["skipped-optional"])
def _():
    r = "optional-telemetry"
    j = Journal(r, "2026-11-10T09:09:09.9Z", FP_SONNET, "Is the AUDIT stream replicated?")
    j.assistant(0, [text("Yes, AUDIT has 3 replicas, all current.")], "end_turn", 350, 15)
    j.terminal("completed")
    j.rec("telemetry", {"spans": [{"name": "llm", "ms": 812}, {"name": "tool", "ms": 0}], "host": "ops-4", "nested": {"a": [1, 2.5, None, True]}},
          optional=True, protocol=PFX + "telemetry")
    return j


ESC_PROMPT = ("Audit <script>alert(\"pwn\")</script> & \"quotes\" in the ops wiki.\n"
              "\tLine sep[\u2028] para sep[\u2029]\n"
              "\tANSI: \x1b[31mRED\x1b[0m, emoji \U0001F980\U0001F680, Gr\u00fc\u00dfe, na\u00efve caf\u00e9, \u65e5\u672c\u8a9e, backslash \\ done")


@run("go-escapes", "Go escaping: <script>&, U+2028/U+2029, tabs, newlines, ESC sequences, NUL/DEL/BEL/\\b/\\f, emoji and non-ASCII in prompt, caller, tool input/output, memory keys and terminal message", "completed")
def _():
    r = "go-escapes"
    j = Journal(r, "2026-11-11T11:11:11.111+05:30", FP_SONNET, ESC_PROMPT,
                caller="ops-bot <ops@example.com> & friends")
    a = tid(r, 1)
    j.assistant(0, [text("Running the audit <now> & reporting back."),
                    tool_use(a, "exec", {"command": "grep -rn '<script>' wiki/ && echo \"done\"\t# tab",
                                         "env": {"LANG": "ja_JP.UTF-8", "PS1": "\x1b[32m$ \x1b[0m"}})],
                "tool_use", 900, 75)
    j.result(a, "wiki/index.md:12:<script>alert(\"pwn\")</script>\r\n"
                "wiki/ops.md:3:a & b\u2028c\u2029d\n"
                "\x1b[1;31mERROR\x1b[0m\tnul:\x00 del:\x7f bell:\x07 bs:\b ff:\f\n"
                "\U0001F980 Gr\u00fc\u00dfe \u65e5\u672c\u8a9e")
    j.memrev({"wiki/<index>": 2, "wiki/a&b": 1, "wiki/\u65e5\u672c": 3, "wiki/Zed": 1, "wiki/line\u2028sep": 5})
    j.assistant(1, [text("Found 2 hits:\n\t\u2022 wiki/index.md line 12 (<script>)\n\t\u2022 wiki/ops.md line 3 (&)\nNo other matches \u2014 fertig \u2705")],
                "end_turn", 1300, 60)
    j.terminal("completed", "done: 2 hits <script> & ampersand")
    return j


@run("thinking-signature", "thinking blocks with base64 signatures (one redacted: signature only), thinking_mode summarized, reasoning_effort high, thinking_tokens", "completed")
def _():
    r = "thinking-signature"
    j = Journal(r, "2026-11-12T03:04:05.06Z", FP_THINK, "Why did consumer billing stall at 03:00?")
    a = tid(r, 1)
    j.assistant(0, [thinking("The stall lines up with the nightly compaction; check the server log around 03:00.", sig(r + "/1")),
                    text("Checking the server log around 03:00."),
                    tool_use(a, "exec", {"command": "journalctl -u nats --since 02:55 --until 03:10"})],
                "tool_use", 2100, 320, thinking_tokens=1450)
    j.result(a, "03:00:01 [WRN] JetStream compaction of ORDERS took 41.2s\n03:00:43 [INF] compaction done")
    j.assistant(1, [thinking(signature=sig(r + "/2")),
                    text("billing stalled for 41s while ORDERS was compacted. Move compaction to 04:30 or raise the consumer's ack wait.")],
                "end_turn", 2600, 140, thinking_tokens=980)
    j.terminal("completed")
    return j


@run("provider-blocks", "provider blocks with nested raw JSON (object, array, null), key order kept verbatim", "completed")
def _():
    r = "provider-blocks"
    j = Journal(r, "2026-11-12T15:16:17.18Z", FP_SONNET, "Search the web for the NATS 2.12 release notes.")
    j.assistant(0, [
        provider("anthropic.server_tool_use", {"type": "server_tool_use", "id": "srvtoolu_01WebS3arch", "name": "web_search",
                                               "input": {"query": "NATS 2.12 release notes"}}),
        provider("anthropic.web_search_tool_result", {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01WebS3arch",
                                                      "content": [{"type": "web_search_result", "url": "https://github.com/nats-io/nats-server/releases",
                                                                   "title": "Releases \u00b7 nats-io/nats-server", "page_age": None,
                                                                   "encrypted_content": "EqoBCkYIBRgCIkA=", "meta": {"rank": 1, "score": 0.93, "tags": ["release", "2.12"], "cached": False}}]}),
        provider("anthropic.redacted_block", None),
        provider("openai.annotations", [1, "two", {"three": [3]}, []]),
        text("The 2.12 notes are on the nats-server releases page on GitHub."),
    ], "end_turn", 3300, 120, cache_read=2048)
    j.terminal("completed")
    return j


@run("remote-tools", "tool results with \"remote\":true (one is_error), remote_tool_calls counter, cache read/create tokens", "completed")
def _():
    r = "remote-tools"
    j = Journal(r, "2026-11-13T06:00:00.000001Z", FP_OPENAI, "Check disk space on the three storage nodes.")
    t = [tid(r, i) for i in range(4)]
    j.assistant(0, [tool_use(t[0], "exec", {"command": "df -h /data"}), tool_use(t[1], "remote.exec@store-2", {"command": "df -h /data"}),
                    tool_use(t[2], "remote.exec@store-3", {"command": "df -h /data"})], "tool_use", 1000, 90, cache_create=4096)
    j.result(t[0], "/dev/nvme0n1  1.8T  1.1T  700G  62% /data")
    j.result(t[1], "/dev/nvme0n1  1.8T  1.7T  100G  95% /data", remote=True)
    j.result(t[2], "remote agent store-3: no responders", is_error=True, remote=True)
    j.assistant(1, [tool_use(t[3], "remote.exec@store-3", {"command": "df -h /data"})], "tool_use", 1200, 40, cache_read=4096)
    j.result(t[3], "/dev/nvme0n1  1.8T  0.9T  900G  50% /data", remote=True)
    j.assistant(2, [text("store-2 is at 95%: act there first.")], "end_turn", 1350, 20, cache_read=4096, cache_create=512)
    j.terminal("completed")
    return j


@run("all-counters", "every token counter on every turn, including a value above 2^53 and max_tokens = 2^63-1 (64-bit integers must not go through f64)", "completed")
def _():
    r = "all-counters"
    fp = fingerprint("anthropic", "claude-opus-4-1", SYS, TOOLS_OPS, "summarized", "medium", 9223372036854775807, 40)
    j = Journal(r, "2026-11-13T23:59:59.999999999Z", fp, "Benchmark the token accounting.")
    a = tid(r, 1)
    j.assistant(0, [thinking("count everything", sig(r)), tool_use(a, "exec", {"command": "true", "big": 12345678901234567890, "neg": -9223372036854775808})],
                "tool_use", 9007199254740993, 7, cache_read=11, cache_create=13, thinking_tokens=17)
    j.result(a, "")
    j.assistant(1, [text("done")], "end_turn", 19, 23, cache_read=29, cache_create=31, thinking_tokens=4294967296)
    j.terminal("completed")
    return j


@run("error-terminal", "a failing tool then terminal reason error with a message", "error")
def _():
    r = "error-terminal"
    j = Journal(r, "2026-11-14T10:00:00.5Z", FP_SONNET, "Restore the CONFIG bucket from last night's backup.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats kv restore CONFIG /backups/config-2026-11-13.tgz"})], "tool_use", 600, 50)
    j.result(a, "nats: error: backup file not found", is_error=True)
    j.terminal("error", "anthropic: 529 overloaded_error after 5 retries")
    return j


@run("budget-terminal", "an assistant message with \"content\":null (stop max_tokens) then terminal reason budget", "budget")
def _():
    r = "budget-terminal"
    j = Journal(r, "2026-11-14T12:34:56.789Z", FP_SONNET, "Explain every setting in nats-server.conf in detail.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "cat /etc/nats/nats-server.conf"})], "tool_use", 190000, 400)
    j.result(a, "port: 4222\njetstream { store_dir: /data }\n")
    j.assistant(1, None, "max_tokens", 9800, 1144)
    j.terminal("budget", "token budget exhausted (201344 of 200000)")
    return j


@run("max-iterations", "three tool iterations then terminal reason max_iterations (fingerprint max_iterations 3)", "max_iterations")
def _():
    r = "max-iterations"
    fp = fingerprint("anthropic", "claude-sonnet-4-5", SYS, TOOLS_OPS, max_iterations=3)
    j = Journal(r, "2026-11-15T05:05:05.5Z", fp, "Keep polling until the ORDERS mirror catches up.")
    for i in range(3):
        t = tid(r, i)
        j.assistant(i, [tool_use(t, "exec", {"command": "nats stream info ORDERS-MIRROR -j | jq .mirror.lag"})], "tool_use", 400 + 50 * i, 30)
        j.result(t, str(9000 - 1000 * i))
    j.terminal("max_iterations", "reached max_iterations (3)")
    return j


@run("open-no-terminal", "last record is an assistant with no tool_use and no terminal: committed, status open", "open")
def _():
    r = "open-no-terminal"
    j = Journal(r, "2026-11-15T20:20:20.2Z", FP_SONNET, "How many messages are in DLQ?")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats stream info DLQ -j | jq .state.messages"})], "tool_use", 300, 25)
    j.result(a, "5120")
    j.assistant(1, [text("DLQ holds 5120 messages.")], "end_turn", 340, 10)
    return j


@run("claimed-after-terminal", "terminal suspended followed by a claim and memory_revisions (inert for the fold): any record after the terminal reopens the run (status open)", "open")
def _():
    r = "claimed-after-terminal"
    j = Journal(r, "2026-11-16T01:02:03.04Z", FP_SONNET, "Drain nats-2 before the kernel upgrade.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats server request lame-duck nats-2"})], "tool_use", 500, 30)
    j.result(a, "nats-2 entered lame duck mode")
    j.terminal("suspended", "interrupted (SIGINT)")
    j.claim("fisk-admin resume (pid 1312) on ops-1", "2026-11-16T09:00:00.1Z")
    j.memrev({"drain/nats-2": 1})
    return j


@run("optional-known", "known inert records (decision, call_approval, claim) carrying \"optional\":true: known protocols are folded normally, never skipped", "completed")
def _():
    r = "optional-known"
    j = Journal(r, "2026-11-16T13:14:15.1617Z", FP_DEPLOY, "Read the billing config and summarise the feature flags.")
    a = tid(r, 1)
    j.decision("read_file", optional=True)
    j.assistant(0, [tool_use(a, "read_file", {"path": "/etc/billing/flags.yaml"})], "tool_use", 420, 28)
    j.call_approval(a, "read_file", optional=True)
    j.claim("fisk-admin resume on ops-5", "2026-11-16T13:20:00Z", optional=True)
    j.result(a, "new_invoices: true\nlegacy_tax: false")
    j.assistant(1, [text("Two flags: new_invoices is on, legacy_tax is off.")], "end_turn", 510, 19)
    j.decision("exec", optional=True)
    j.terminal("completed")
    return j


@run("chat-user-before-first-turn", "interactive: a user record right after meta (before any assistant) merges into the prompt message", "completed")
def _():
    r = "chat-user-before-first-turn"
    j = Journal(r, "2026-11-16T17:00:00.9+09:00", FP_SONNET, "hi, I need help with the ORDERS stream",
                interactive=True, conversation_token="t-c0ffee42")
    j.claim("tui resume on kenji-mbp", "2026-11-16T17:03:10.25+09:00")
    j.user([text("specifically: why is it at 95% of max_bytes?")])
    j.assistant(0, [text("ORDERS keeps 30 days but max_bytes was sized for 7; raise max_bytes or shorten max_age.")], "end_turn", 380, 26)
    j.terminal("completed")
    return j


@run("perf-large", "performance smoke test: 60 iterations of 4 parallel tools with ~1 KiB outputs", "completed")
def _():
    r = "perf-large"
    fp = fingerprint("anthropic", "claude-sonnet-4-5", SYS, TOOLS_OPS, max_iterations=100)
    j = Journal(r, "2026-11-17T00:00:00.5Z", fp, "Walk every subject in ORDERS and report the 10 busiest.")
    n = 0
    for i in range(60):
        ids = [tid(r, n + k) for k in range(4)]
        n += 4
        j.assistant(i, [text(f"Batch {i}: sampling partitions {4 * i}..{4 * i + 3}.")] +
                    [tool_use(ids[k], "exec", {"command": f"nats stream subjects ORDERS 'ORDERS.p{4 * i + k}.>' --json"}) for k in range(4)],
                    "tool_use", 1000 + 37 * i, 80 + i, cache_read=900 + 11 * i)
        for k in range(4):
            p = 4 * i + k
            lines = [f"ORDERS.p{p}.s{s:03d} {((p * 7919 + s * 104729) % 100000):6d}" for s in range(40)]
            j.result(ids[k], "\n".join(lines))
    j.assistant(60, [text("The 10 busiest subjects are listed above; p17 and p203 dominate.")], "end_turn", 4100, 300, cache_read=3900)
    j.terminal("completed")
    return j


# ------------------------------------------------------------------ damaged

DAMAGED = []   # (file name, description, builder, expected [(code, line, seq)], write_fold)


def damaged(name, description, expected, fold=False):
    def deco(fn):
        DAMAGED.append((name, description, fn, expected, fold))
        return fn
    return deco


def dj(run_id, prompt="Check the ORDERS stream.", **kw):
    return Journal(run_id, "2026-12-01T10:00:00.25Z", FP_SONNET, prompt, **kw)


def final_turn(j, it=0, words="Done."):
    return j.assistant(it, [text(words)], "end_turn", 100, 10)


@damaged("torn-tail.json", "crash mid-write: the final line is a prefix of a tool_result cut inside a 2-byte UTF-8 character, no newline",
         [("torn-tail", 4, None)], fold=True)
def _():
    r = "torn-tail"
    j = dj(r)
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "echo a"}), tool_use(b, "exec", {"command": "echo Gr\u00fc\u00dfe"})], "tool_use", 200, 20)
    j.result(a, "a")
    full = j.encode_rec("tool_result", {"tool_use_id": b, "result": {"tool_use_id": b, "content": "Gr\u00fc\u00dfe"}}, seq=4)
    cut = full.index("\u00fc".encode()) + 1          # inside the two bytes of ü
    j.tail = full[:cut]
    return j


@damaged("unterminated-final-record.json", "the final record parses but has no trailing newline (kept as a record)",
         [("unterminated-final-record", 3, 3)], fold=True)
def _():
    j = dj("unterminated-final-record")
    final_turn(j)
    j.terminal("completed")
    return j.render(final_newline=False)


@damaged("garbage-final-line.json", "a hand-appended comment line, terminated by a newline, after the terminal",
         [("garbage-final-line", 4, None)], fold=True)
def _():
    j = dj("garbage-final-line")
    final_turn(j)
    j.terminal("completed")
    j.raw(b"# resumed by hand, see ticket OPS-1234")
    return j


@damaged("interior-corruption.json", "two records glued on one line (a writer appended without first adding the missing newline); the seq-gap check for the next record is skipped",
         [("interior-corruption", 3, None)])
def _():
    r = "interior-corruption"
    j = dj(r)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "uptime"})], "tool_use", 200, 20)
    glued = j.encode_rec("tool_result", {"tool_use_id": a, "result": {"tool_use_id": a, "content": "up 3 days"}}, seq=3) + \
        j.encode_rec("claim", {"by": "ops-2", "claimed": "2026-12-01T10:05:00Z"}, seq=4)
    j.raw(glued)
    j.seq = 4
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("interior-corruption-nul.json", "an interior line of NUL bytes (lost data blocks after a power cut) standing in for seq 3",
         [("interior-corruption", 3, None)])
def _():
    r = "interior-corruption-nul"
    j = dj(r)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "uptime"})], "tool_use", 200, 20)
    j.raw(b"\x00" * 96)
    j.seq = 3
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("empty-journal.json", "a 0-byte journal", [("empty-journal", None, None)])
def _():
    return b""


@damaged("empty-journal-torn.json", "a journal holding only a torn meta line (no newline): zero records",
         [("torn-tail", 1, None), ("empty-journal", None, None)])
def _():
    line = dj("empty-journal-torn").lines[0]
    return line[: len(line) // 2]


@damaged("no-meta.json", "the first record is an assistant, not meta", [("no-meta", 1, 1)])
def _():
    r = "no-meta"
    full = dj(r)
    a = tid(r, 1)
    full.seq = 0
    full.lines = []
    full.assistant(0, [tool_use(a, "exec", {"command": "date"})], "tool_use", 200, 20)
    full.result(a, "Tue Dec  1 10:00:00 UTC 2026")
    final_turn(full, 1)
    full.terminal("completed")
    return full


@damaged("meta-seq.json", "numbering off by one: meta at seq 2, the rest 3, 4, 5 (the first record has no previous seq, so no seq-gap)",
         [("meta-seq", 1, 2)])
def _():
    j = dj("meta-seq", meta_seq=2)
    final_turn(j)
    j.claim("ops-1", "2026-12-01T10:01:00Z")
    j.terminal("completed")
    return j


@damaged("duplicate-meta.json", "a second creator appended its own meta (seq 1) to an existing run: duplicate and not increasing",
         [("duplicate-meta", 4, 1), ("seq-not-increasing", 4, 1)])
def _():
    j = dj("duplicate-meta")
    final_turn(j)
    j.terminal("completed")
    j.lines.append(j.lines[0])
    return j


@damaged("seq-not-increasing.json", "the claim-ordering bug of SPEC 5: the runner's first record reuses the claim's seq",
         [("seq-not-increasing", 6, 5)])
def _():
    r = "seq-not-increasing"
    j = dj(r)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "date"})], "tool_use", 200, 20)
    j.result(a, "Tue Dec  1 10:00:00 UTC 2026")
    j.terminal("suspended", "interrupted (SIGINT)")
    j.claim("ops-1", "2026-12-01T11:00:00Z")
    j.assistant(1, [text("It is 10:00 UTC.")], "end_turn", 250, 10, seq=5)
    return j


@damaged("seq-gap.json", "seq 4 (the second tool_result) was lost: the next record is seq 5; the fold still accepts it",
         [("seq-gap", 4, 5)], fold=True)
def _():
    r = "seq-gap"
    j = dj(r)
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "echo a"}), tool_use(b, "exec", {"command": "echo b"})], "tool_use", 200, 20)
    j.result(a, "a")
    j.seq += 1
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("version-newer.json", "meta.version 4: readable, the fold refuses", [("version-newer", 1, 1)])
def _():
    j = dj("version-newer", version=4)
    final_turn(j)
    j.terminal("completed")
    return j


@damaged("version-older.json", "meta.version 2: a warning (readable, not resumable); verify folds any version, so no fold error",
         [("version-older", 1, 1)])
def _():
    j = dj("version-older", version=2)
    final_turn(j)
    j.terminal("completed")
    return j


@damaged("unknown-protocol.json", "an unknown protocol without the optional flag, between the turn and the terminal",
         [("unknown-protocol", 3, 3)])
def _():
    j = dj("unknown-protocol")
    final_turn(j)
    j.rec("handoff", {"to": "worker-7"}, protocol=PFX + "handoff")
    j.terminal("completed")
    return j


@damaged("skipped-optional.json", "an optional record of an unknown v2 protocol between an assistant and its tool result: skipped, the turn untouched",
         [("skipped-optional", 3, 3)], fold=True)
def _():
    r = "skipped-optional"
    j = dj(r)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "date"})], "tool_use", 200, 20)
    j.rec("checkpoint", {"at": "2026-12-01T10:00:01Z", "weights": [0.5, 1]}, optional=True,
          protocol="io.choria.fisk-ai.v2.session.checkpoint")
    j.result(a, "Tue Dec  1 10:00:01 UTC 2026")
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("missing-payload.json", "a terminal record without its payload key", [("missing-payload", 3, 3)])
def _():
    j = dj("missing-payload")
    final_turn(j)
    j.rec("terminal", None, omit_payload=True)
    return j


@damaged("missing-payload-null.json", "a terminal record whose payload is null", [("missing-payload", 3, 3)])
def _():
    j = dj("missing-payload-null")
    final_turn(j)
    j.rec("terminal", None)
    return j


@damaged("extra-payload.json", "a terminal record that also carries a claim payload", [("extra-payload", 3, 3)])
def _():
    j = dj("extra-payload")
    final_turn(j)
    j.terminal("completed", extra={"claim": {"by": "ops-1", "claimed": "2026-12-01T10:02:00Z"}})
    return j


@damaged("orphan-result.json", "a tool_result before any assistant record", [("orphan-result", 2, 2)])
def _():
    r = "orphan-result"
    j = dj(r)
    j.result(tid(r, 1), "stray")
    final_turn(j)
    j.terminal("completed")
    return j


@damaged("orphan-result-after-user.json", "a tool_result after a user record closed the turn", [("orphan-result", 5, 5)])
def _():
    r = "orphan-result-after-user"
    j = dj(r, interactive=True)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "date"})], "tool_use", 200, 20)
    j.terminal("suspended", "interrupted (SIGINT)")
    j.user([text("never mind the date")])
    j.result(a, "Tue Dec  1 10:00:00 UTC 2026")
    return j


@damaged("unknown-tool-use.json", "a tool_result for an id the open turn never asked for (fold keeps it)",
         [("unknown-tool-use", 4, 4)], fold=True)
def _():
    r = "unknown-tool-use"
    j = dj(r)
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "date"})], "tool_use", 200, 20)
    j.result(a, "Tue Dec  1 10:00:00 UTC 2026")
    j.result("toolu_01NeverAskedFor000000000", "answered by hand for the wrong run")
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("duplicate-result.json", "a second tool_result for one tool_use id (both are kept by the fold)",
         [("duplicate-result", 5, 5)], fold=True)
def _():
    r = "duplicate-result"
    j = dj(r)
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "echo a"}), tool_use(b, "exec", {"command": "echo b"})], "tool_use", 200, 20)
    j.result(a, "a")
    j.result(b, "b")
    j.result(a, "a (again)")
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged("run-id-mismatch.json", "meta.run_id names another run", [("run-id-mismatch", 1, 1)])
def _():
    j = dj("some-other-run")
    final_turn(j)
    j.terminal("completed")
    return j


@damaged("open-deferrals.json", "a deferral (no note, no handle) waiting for an answer",
         [("open-deferrals", None, None)], fold=True)
def _():
    r = "open-deferrals"
    j = dj(r)
    d = tid(r, 1)
    j.assistant(0, [tool_use(d, "defer", {})], "tool_use", 200, 20)
    j.deferred(d, "defer")
    j.terminal("suspended", "waiting on 1 deferred call")
    return j


@damaged("fold.json", "an assistant record with \"in_tokens\":\"12\" (a string): for Go that line does not parse, so interior-corruption at that line",
         [("interior-corruption", 2, None)])
def _():
    j = dj("fold")
    final_turn(j)
    line = j.lines[-1].decode()
    assert '"in_tokens":100,' in line
    j.lines[-1] = line.replace('"in_tokens":100,', '"in_tokens":"12",').encode()
    j.terminal("completed")
    return j


@damaged("not valid.json", "file name with a space: not a valid id, the agent cannot see it (content is a healthy journal whose run_id is the stem)",
         [("invalid-id", None, None)])
def _():
    j = dj("not valid")
    final_turn(j)
    j.terminal("completed")
    return j


@damaged("link-target.json", "the regular journal that linked.json points at; its meta.run_id is `linked` (the id it is reached under through the symlink), so under its own id it is a run-id-mismatch",
         [("run-id-mismatch", 1, 1)])
def _():
    j = dj("linked")
    final_turn(j)
    j.terminal("completed")
    return j


# ------------------------------------------------------------------ version 1 (runs-v1/, damaged-v1/)
#
# runs-v1/ holds every runs/ case again under the same name, built by the same
# builder as version 1 (GEN["v1"]: `time` on every record from a deterministic
# clock, meta.agent, kind/dispatched on every result and deferral,
# terminal.summary), plus the cases below. damaged-v1/ holds every
# content-level damaged/ case as version 1, plus the cases below.

V1_RUNS = []   # (run_id, description, builder, expect)
V1_DAMAGED = []   # (file name, description, builder, expected, write_fold)


def run_v1(run_id, description, status, infos=()):
    def deco(fn):
        V1_RUNS.append((run_id, description, fn, {"status": status, "infos": list(infos)}))
        return fn
    return deco


def damaged_v1(name, description, expected, fold=False):
    def deco(fn):
        V1_DAMAGED.append((name, description, fn, expected, fold))
        return fn
    return deco


def set_time(j, idx, raw_value):
    """Replace the `time` value of line idx with raw JSON bytes."""
    line = j.lines[idx]
    new, n = re.subn(rb'"time":"[^"]*"', lambda m: b'"time":' + raw_value, line, count=1)
    assert n == 1, line
    j.lines[idx] = new
    return j


def spoil(j, idx, old, new):
    line = j.lines[idx].decode()
    assert old in line, (old, line)
    j.lines[idx] = line.replace(old, new, 1).encode()
    return j


@run_v1("u64-revision", "memory revisions are unsigned 64-bit: 18446744073709551615 (the maximum) and 9223372036854775808 (above i64), written optional as the agent does", "completed")
def _():
    r = "u64-revision"
    j = Journal(r, "2026-12-02T08:00:00.5Z", FP_SONNET, "Remember where the ORDERS compaction got to.")
    j.assistant(0, [text("Noted: compaction of ORDERS is at segment 4411.")], "end_turn", 300, 18)
    j.memrev({"compaction/orders": 18446744073709551615, "compaction/dlq": 9223372036854775808, "notes": 1}, optional=True)
    j.terminal("completed")
    return j


@run_v1("legacy-results", "a version-1 journal whose first turn's results carry no kind (a build before the field): remote:true counts as remote and dispatched, the other as unknown; the resumed turn's results carry kinds", "completed")
def _():
    r = "legacy-results"
    j = Journal(r, "2026-12-02T09:00:00Z", FP_OPENAI, "Compare disk use on store-1 and store-2.")
    a, b, c, d = (tid(r, i) for i in range(1, 5))
    j.assistant(0, [tool_use(a, "exec", {"command": "df -h /data"}),
                    tool_use(b, "remote.exec@store-2", {"command": "df -h /data"})], "tool_use", 900, 60)
    j.result(a, "/dev/nvme0n1  1.8T  1.1T  700G  62% /data", kind=False)
    j.result(b, "/dev/nvme0n1  1.8T  1.7T  100G  95% /data", remote=True, kind=False)
    j.terminal("suspended", "interrupted (SIGTERM)", summary=False)
    j.claim("fisk-admin resume on ops-1", "2026-12-02T09:30:00Z")
    j.assistant(1, [tool_use(c, "remote.exec@store-2", {"command": "du -sh /data/*"}),
                    tool_use(d, "exec", {"command": "du -sh /data/*"})], "tool_use", 1100, 70)
    j.result(c, "1.6T /data/orders", remote=True)
    j.result(d, "0.9T /data/orders")
    j.assistant(2, [text("store-2 holds 0.7T more ORDERS data than store-1.")], "end_turn", 1300, 30)
    j.terminal("completed")
    return j


@run_v1("unknown-kind", "a result whose kind is a token outside the six (`quantum`, dispatched) beside a builtin one: counted under `quantum` as written (SPEC 1); neither remote nor mcp", "completed")
def _():
    r = "unknown-kind"
    j = Journal(r, "2026-12-02T10:00:00.000000001Z", FP_SONNET, "Ask the quantum planner for a schedule.")
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "plan", {"horizon": "24h"}), tool_use(b, "clock", None)], "tool_use", 500, 40)
    j.result(a, "schedule: compaction 04:30, backup 05:00", kind="quantum", dispatched=True)
    j.result(b, "2026-12-02T10:00:01Z", kind="builtin", dispatched=True)
    j.assistant(1, [text("Compaction at 04:30, backup at 05:00.")], "end_turn", 600, 20)
    j.terminal("completed")
    return j


@run_v1("kinds-dispatch", "every provider kind dispatched (application, builtin, custom, remote, mcp x2) plus calls answered without running: a remote and an mcp call denied by policy, an application call refused by the operator (counted in their bucket, not in remote_tool_calls or mcp_tool_calls)", "completed")
def _():
    r = "kinds-dispatch"
    j = Journal(r, "2026-12-02T11:00:00.75+01:00", FP_DEPLOY, "Collect the ORDERS incident timeline from every source.")
    t = [tid(r, i) for i in range(9)]
    calls = [("read_file", "application", True, "ok"), ("clock", "builtin", True, "11:00"),
             ("pager", "custom", True, "INC-77 opened 09:12"), ("ask_peer", "remote", True, "peer: lag began 09:10"),
             ("jira_search", "mcp", True, "OPS-1234, OPS-1240"), ("grafana_query", "mcp", True, "p99 4.1s at 09:11"),
             ("ask_peer", "remote", False, "denied by policy: peer store-9 not allowed"),
             ("jira_create", "mcp", False, "denied by policy: write tools disabled"),
             ("deploy", "application", False, "refused by the operator")]
    j.assistant(0, [tool_use(t[i], n, {}) for i, (n, _, _, _) in enumerate(calls)], "tool_use", 2400, 300, cache_read=1200)
    for i, (n, kind, sent, out) in enumerate(calls):
        j.result(t[i], out, is_error=not sent, kind=kind, dispatched=sent)
    j.assistant(1, [text("Timeline: lag began 09:10, p99 peaked 09:11, INC-77 opened 09:12.")], "end_turn", 2900, 80, cache_read=2400)
    j.terminal("completed")
    return j


@run_v1("reopened-by-claim", "terminal completed, then a claim (a resume that found nothing new and stopped): reopened, so status open and ended null; completed stays true (the resume gate's question)", "open")
def _():
    r = "reopened-by-claim"
    j = Journal(r, "2026-12-02T12:00:00Z", FP_SONNET, "Is the AUDIT stream replicated?")
    j.assistant(0, [text("Yes: 3 replicas, all current.")], "end_turn", 350, 15)
    j.terminal("completed")
    j.claim("fisk-admin resume (pid 7001) on ops-2", "2026-12-02T12:10:00.5Z")
    return j


@run_v1("reopened-by-decision", "terminal suspended on a gated call, then `approve` appended an optional standing decision: reopened (status open), the approval is live, the pending turn is kept", "open")
def _():
    r = "reopened-by-decision"
    j = Journal(r, "2026-12-02T13:00:00Z", FP_DEPLOY, "Deploy billing 2.15.0 to staging.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "deploy", {"service": "billing", "version": "2.15.0", "env": "staging"})], "tool_use", 800, 50)
    j.terminal("suspended", "deploy needs approval")
    j.decision("deploy", optional=True)
    return j


@run_v1("reopened-by-memory", "terminal completed, then a memory_revisions record: reopened (status open), revisions replaced", "open")
def _():
    r = "reopened-by-memory"
    j = Journal(r, "2026-12-02T13:30:00Z", FP_SONNET, "Note the new retention policy.")
    j.assistant(0, [text("Noted.")], "end_turn", 200, 5)
    j.terminal("completed")
    j.memrev({"retention": 3}, optional=True)
    return j


@run_v1("undated-older-records", "version 1 written first by a build that predates `time` (meta, first turn and its suspend undated, no agent, no kinds) and resumed by the current agent (claim, next turns dated, kinds, summary): mixed dating within one v1 journal is normal; ended = the last terminal's time", "completed")
def _():
    r = "undated-older-records"
    j = Journal(r, "2026-10-20T07:30:00.5Z", FP_SONNET, "Rebalance the ORDERS consumers.", dated=False, agent="")
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats consumer report ORDERS"})], "tool_use", 700, 44)
    j.result(a, "billing 12 pending, ship-eu 9001 pending", kind=False)
    j.terminal("suspended", "interrupted (SIGINT)", summary=False)
    j.dated = True
    j.clock = unix_ns("2026-12-02T14:00:00Z")
    j.claim("fisk-admin resume on ops-1", "2026-12-02T14:00:00Z")
    j.assistant(1, [tool_use(b, "exec", {"command": "nats consumer edit ORDERS ship-eu --max-pending 20000"})], "tool_use", 900, 40)
    j.result(b, "updated ship-eu")
    j.assistant(2, [text("ship-eu may now hold 20000 pending.")], "end_turn", 1000, 12)
    j.terminal("completed")
    return j


@run_v1("undated-all", "version 1 with no `time` on any record and no agent (written before either field existed): updated null (the file mtime counts), ended null although the run is completed", "completed")
def _():
    r = "undated-all"
    j = Journal(r, "2026-10-01T06:00:00Z", FP_SONNET, "How old is the oldest DLQ message?", dated=False, agent="")
    j.assistant(0, [text("The oldest DLQ message is 9 days old.")], "end_turn", 300, 14)
    j.terminal("completed", summary=False)
    return j


@run_v1("time-null", "`\"time\":null` on the assistant and the terminal (Go reads null as the zero time: undated): ended null, and the last record is undated so updated null", "completed")
def _():
    r = "time-null"
    j = Journal(r, "2026-12-02T15:00:00Z", FP_SONNET, "Ping the leafnodes.")
    j.assistant(0, [text("All 3 leafnodes answered.")], "end_turn", 150, 9, time=JSON_NULL_TIME)
    j.terminal("completed", time=JSON_NULL_TIME)
    return j


@run_v1("times-offsets", "append times given with offsets kept (+05:30, -07:00, +01:00, -00:30), one-digit and nine-digit fractions, created with an offset: instants increase though the strings do not sort; ended keeps the terminal's offset", "completed")
def _():
    r = "times-offsets"
    j = Journal(r, "2026-12-02T21:44:03.123456789+05:30", FP_SONNET, "Which leafnode reconnects most?",
                time="2026-12-02T21:44:03.123456789+05:30")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats server report connections --sort reconnects"})], "tool_use", 400, 30,
                time="2026-12-02T21:44:04.1+05:30")
    j.result(a, "edge-2: 41 reconnects", time="2026-12-02T09:14:05.000000001-07:00")
    j.assistant(1, [text("edge-2 reconnects most (41).")], "end_turn", 450, 12, time="2026-12-02T16:14:07.12Z")
    j.terminal("completed", time="2026-12-02T16:44:08.0000005-00:30")
    return j


@run_v1("summary-stale", "a terminal.summary that disagrees with the records (a hand edit): the fold recomputes everything and never reads it; no finding", "completed")
def _():
    r = "summary-stale"
    j = Journal(r, "2026-12-02T16:00:00Z", FP_SONNET, "Count the AUDIT consumers.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats consumer ls AUDIT"})], "tool_use", 300, 20)
    j.result(a, "siem\narchive")
    j.assistant(1, [text("Two: siem and archive.")], "end_turn", 360, 10)
    j.terminal("completed", summary={"turns": 9, "context_tokens": 1, "counters": {
        "llm_calls": 40, "tool_calls": 3, "remote_tool_calls": 3, "tool_calls_by_kind": {"3": 3}, "in_tokens": 5}})
    return j


@run_v1("zero-times", "created and claim.claimed at Go's zero time 0001-01-01T00:00:00Z (a caller that set neither); `time` itself is never zero when written", "completed")
def _():
    r = "zero-times"
    j = Journal(r, "0001-01-01T00:00:00Z", FP_SONNET, "zero times", time="2026-12-02T17:00:00.5Z")
    j.clock = unix_ns("2026-12-02T17:00:00.5Z")
    j.assistant(0, [text("ok")], "end_turn", 10, 1)
    j.terminal("suspended")
    j.claim("worker-2", "0001-01-01T00:00:00Z")
    j.user([text("continue")])
    j.assistant(1, [text("done")], "end_turn", 12, 1)
    j.terminal("completed")
    return j


@run_v1("deferral-mcp-answered", "an mcp deferral (kind mcp, dispatched), suspended, answered by hand with kind and dispatched copied (SPEC 6): counted as an mcp call; the answer reopens the run (status open)", "open")
def _():
    r = "deferral-mcp-answered"
    j = Journal(r, "2026-12-02T18:00:00Z", FP_SONNET, "File the post-incident review in Jira.")
    d = tid(r, 1)
    j.assistant(0, [tool_use(d, "jira_create", {"project": "OPS", "summary": "PIR INC-77"})], "tool_use", 600, 45)
    j.deferred(d, "jira_create", "waiting for the Jira approver", "OPS-1300", kind="mcp", dispatched=True)
    j.terminal("suspended", "waiting on 1 deferred call")
    j.result(d, "created OPS-1300")
    return j


@run_v1("deferral-undispatched", "a deferral made before the call ran (kind application, not dispatched: a prompter asked a person), suspended: status suspended, waiting, 1 open deferral", "suspended", ["open-deferrals"])
def _():
    r = "deferral-undispatched"
    j = Journal(r, "2026-12-02T19:00:00Z", FP_DEPLOY, "Deploy billing 2.15.0 to production.")
    d = tid(r, 1)
    j.assistant(0, [tool_use(d, "deploy", {"service": "billing", "version": "2.15.0", "env": "production"})], "tool_use", 700, 50)
    j.deferred(d, "deploy", "asked alice to confirm the window", kind="application", dispatched=False)
    j.terminal("suspended", "waiting on 1 deferred call")
    return j


@run_v1("no-agent", "a version-1 meta without agent (the caller configured none): agent null", "completed")
def _():
    r = "no-agent"
    j = Journal(r, "2026-12-02T20:00:00Z", FP_SONNET, "hello", agent="")
    j.assistant(0, [text("hi")], "end_turn", 5, 1)
    j.terminal("completed")
    return j


@run_v1("unknown-field", "fields a newer agent writes: assistant.latency_ms (the first, line 2), tool_result.result.duration_ms, terminal.cost: read past, one unknown-field info at line 2 naming all", "completed", ["unknown-field"])
def _():
    r = "unknown-field"
    j = Journal(r, "2026-12-02T20:30:00Z", FP_SONNET, "Check the ORDERS lag.")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "nats stream info ORDERS"})], "tool_use", 300, 20, more={"latency_ms": 812})
    j.result(a, "lag 0", result_more={"duration_ms": 41})
    j.assistant(1, [text("No lag.")], "end_turn", 330, 6)
    j.terminal("completed", more={"cost": {"usd": 0.0042}})
    return j


@run_v1("unknown-field-fingerprint", "an unknown meta.fingerprint field (temperature) and an unknown meta field (labels): unknown-field at the meta line", "completed", ["unknown-field"])
def _():
    r = "unknown-field-fingerprint"
    fp = dict(FP_SONNET, temperature=0.2)
    j = Journal(r, "2026-12-02T20:40:00Z", fp, "Summarise the AUDIT stream.", more={"labels": {"team": "ops"}})
    j.assistant(0, [text("AUDIT: 3 replicas, 14M messages.")], "end_turn", 250, 12)
    j.terminal("completed")
    return j


@run_v1("unknown-field-result", "the only unknown field is inside tool_result.result (exit_code): unknown-field at that line (3)", "completed", ["unknown-field"])
def _():
    r = "unknown-field-result"
    j = Journal(r, "2026-12-02T20:50:00Z", FP_SONNET, "Is nats-3 up?")
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "systemctl is-active nats@3"})], "tool_use", 200, 15)
    j.result(a, "active", result_more={"exit_code": 0})
    j.assistant(1, [text("nats-3 is up.")], "end_turn", 230, 5)
    j.terminal("completed")
    return j


# --- damaged-v1: the version-1 cases damaged/ has no counterpart for

def dv1(run_id, **kw):
    return dj(run_id, **kw)


def two_turns(j, r):
    """assistant with a tool call, its result, a final turn, terminal: lines 2-5."""
    a = tid(r, 1)
    j.assistant(0, [tool_use(a, "exec", {"command": "uptime"})], "tool_use", 200, 20)
    j.result(a, "up 3 days")
    final_turn(j, 1)
    j.terminal("completed")
    return j


@damaged_v1("time-not-rfc3339.json", "an interior `time` with a space instead of T: Go's time.Time refuses it, so the line does not parse", [("interior-corruption", 3, None)])
def _():
    r = "time-not-rfc3339"
    return set_time(two_turns(dv1(r), r), 2, b'"2026-12-01 10:00:01.5Z"')


@damaged_v1("time-torn-tail.json", "the final record (terminal) has a `time` that is not RFC 3339 and no newline: unparsable and unterminated, so a torn tail (the run reads as open)", [("torn-tail", 5, None)], fold=True)
def _():
    r = "time-torn-tail"
    return set_time(two_turns(dv1(r), r), 4, b'"2026-12-01T10:00:0"').render(final_newline=False)


@damaged_v1("time-garbage-final-line.json", "the final record (terminal) has `\"time\":\"yesterday\"` and its newline: a garbage final line", [("garbage-final-line", 5, None)], fold=True)
def _():
    r = "time-garbage-final-line"
    return set_time(two_turns(dv1(r), r), 4, b'"yesterday"')


@damaged_v1("time-wrong-type.json", "an interior `time` that is a JSON number (Unix seconds)", [("interior-corruption", 3, None)])
def _():
    r = "time-wrong-type"
    return set_time(two_turns(dv1(r), r), 2, b"1764583201")


@damaged_v1("time-escaped.json", "an interior `time` whose T is written as the JSON escape \\u0054: Go parses the raw bytes, so it fails", [("interior-corruption", 3, None)])
def _():
    r = "time-escaped"
    j = two_turns(dv1(r), r)
    t = re.search(rb'"time":"([^"]*)"', j.lines[2]).group(1)
    return set_time(j, 2, b'"' + t.replace(b"T", b"\\u0054") + b'"')


@damaged_v1("time-invalid-date.json", "an interior `time` on 29 February of a non-leap year (2026-02-29)", [("interior-corruption", 3, None)])
def _():
    r = "time-invalid-date"
    return set_time(two_turns(dv1(r), r), 2, b'"2026-02-29T10:00:01Z"')


@damaged_v1("time-lowercase.json", "an interior `time` with lowercase t and z", [("interior-corruption", 3, None)])
def _():
    r = "time-lowercase"
    return set_time(two_turns(dv1(r), r), 2, b'"2026-12-01t10:00:01.5z"')


@damaged_v1("time-offset-range.json", "an interior `time` with offset +24:00 (offset hours are 0-23)", [("interior-corruption", 3, None)])
def _():
    r = "time-offset-range"
    return set_time(two_turns(dv1(r), r), 2, b'"2026-12-01T10:00:01+24:00"')


@damaged_v1("created-not-rfc3339.json", "meta.created is a bare date: the meta line does not parse, so the first record read is an assistant", [("interior-corruption", 1, None), ("no-meta", 2, 2)])
def _():
    r = "created-not-rfc3339"
    return spoil(two_turns(dv1(r), r), 0, '"created":"2026-12-01T10:00:00.25Z"', '"created":"2026-12-01"')


@damaged_v1("claimed-not-rfc3339.json", "an interior claim whose claimed time has no seconds", [("interior-corruption", 3, None)])
def _():
    r = "claimed-not-rfc3339"
    j = dv1(r)
    final_turn(j)
    j.claim("ops-1", "2026-12-01T10:05Z")
    j.terminal("completed")
    return j


@damaged_v1("kind-wrong-type.json", "an interior tool_result whose kind is a number", [("interior-corruption", 3, None)])
def _():
    r = "kind-wrong-type"
    return spoil(two_turns(dv1(r), r), 2, '"kind":"application"', '"kind":1')


@damaged_v1("dispatched-wrong-type.json", "an interior deferred record whose dispatched is the string \"true\"", [("interior-corruption", 3, None)])
def _():
    r = "dispatched-wrong-type"
    j = dv1(r)
    d = tid(r, 1)
    j.assistant(0, [tool_use(d, "defer", {})], "tool_use", 200, 20)
    j.deferred(d, "defer")
    j.terminal("suspended", "waiting on 1 deferred call")
    return spoil(j, 2, '"dispatched":true', '"dispatched":"true"')


@damaged_v1("summary-wrong-type.json", "a terminal.summary whose turns is a string, followed by a claim: interior", [("interior-corruption", 3, None)])
def _():
    r = "summary-wrong-type"
    j = dv1(r)
    final_turn(j)
    j.terminal("suspended")
    j.claim("ops-1", "2026-12-01T10:05:00Z")
    return spoil(j, 2, '"turns":1,', '"turns":"1",')


@damaged_v1("memory-revision-negative.json", "a memory revision of -1 (revisions are unsigned)", [("interior-corruption", 3, None)])
def _():
    r = "memory-revision-negative"
    j = dv1(r)
    final_turn(j)
    j.memrev({"notes": 1}, optional=True)
    j.terminal("completed")
    return spoil(j, 2, '"notes":1', '"notes":-1')


@damaged_v1("memory-revision-overflow.json", "a memory revision of 18446744073709551616 (one above the unsigned 64-bit maximum)", [("interior-corruption", 3, None)])
def _():
    r = "memory-revision-overflow"
    j = dv1(r)
    final_turn(j)
    j.memrev({"notes": 18446744073709551615}, optional=True)
    j.terminal("completed")
    return spoil(j, 2, "18446744073709551615", "18446744073709551616")


@damaged_v1("mixed-generation.json", "a version-3 journal a version-1 writer appended to without upgrading: a legacy result, then one with kind/dispatched (the first v1 field, line 4), then dated records", [("version-3", 1, 1), ("mixed-generation", 4, 4)], fold=True)
def _():
    r = "mixed-generation"
    j = dv1(r, version=3, agent="", dated=False)
    a, b = tid(r, 1), tid(r, 2)
    j.assistant(0, [tool_use(a, "exec", {"command": "echo a"}), tool_use(b, "exec", {"command": "echo b"})], "tool_use", 200, 20)
    j.result(a, "a", kind=False)
    j.result(b, "b", kind="application", dispatched=True)
    j.dated = True
    final_turn(j, 1)
    j.terminal("completed", summary=False)
    return j


@damaged_v1("mixed-generation-time.json", "a version-3 journal whose only version-1 field is `time` on the terminal (line 3)", [("version-3", 1, 1), ("mixed-generation", 3, 3)], fold=True)
def _():
    r = "mixed-generation-time"
    j = dv1(r, version=3, agent="", dated=False)
    final_turn(j)
    j.dated = True
    j.terminal("completed", summary=False)
    return j


@damaged_v1("mixed-generation-agent.json", "a version-3 journal whose meta carries agent: mixed-generation at the meta line", [("version-3", 1, 1), ("mixed-generation", 1, 1)], fold=True)
def _():
    r = "mixed-generation-agent"
    j = dv1(r, version=3, agent="nats-ops", dated=False)
    final_turn(j)
    j.terminal("completed", summary=False)
    return j


@damaged_v1("version-zero.json", "meta.version 0 (below 1): version-older, readable, not resumable", [("version-older", 1, 1)])
def _():
    j = dv1("version-zero", version=0)
    final_turn(j)
    j.terminal("completed")
    return j


# Entries that are not built from bytes: (name, description, expected)
SPECIAL = [
    ("linked.json", "relative symlink -> link-target.json (a version-3 journal)", [("symlink", None, None), ("version-3", 1, 1)]),
    ("orphan.lock", "a lock file with no journal", [("orphan-lock", None, None)]),
]


# ------------------------------------------------------------------ writing

class Writer:
    def __init__(self, check_only):
        self.check_only = check_only
        self.problems = []
        self.written = []

    def journal(self, path, data):
        """Append-only: an existing journal must already hold these bytes."""
        if os.path.lexists(path):
            with open(path, "rb") as f:
                if f.read() != data:
                    self.problems.append(f"{path}: differs from the generator; committed journals are never edited, add a new case instead")
            return
        if self.check_only:
            self.problems.append(f"{path}: missing")
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        self.written.append(path)

    def symlink(self, path, target):
        if os.path.lexists(path):
            if not os.path.islink(path) or os.readlink(path) != target:
                self.problems.append(f"{path}: not a symlink to {target}")
            return
        if self.check_only:
            self.problems.append(f"{path}: missing")
            return
        os.symlink(target, path)
        self.written.append(path)

    def derived(self, path, data):
        """Expected results and README: rewritten whenever they change."""
        if os.path.exists(path):
            with open(path, "rb") as f:
                if f.read() == data:
                    return
        if self.check_only:
            self.problems.append(f"{path}: out of date")
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        self.written.append(path)


def pretty(v):
    return (json.dumps(v, indent=2, ensure_ascii=False) + "\n").encode()


def as_bytes(built):
    return built.render() if isinstance(built, Journal) else built


def findings_of(expected):
    return [oracle.finding(c, l, s) for c, l, s in expected]


def key(f):
    return (f["line"] is None, f["line"] or 0, f["code"])


# ------------------------------------------------------------------ sanity checks

ENVELOPE_ORDER = ["seq", "protocol", "time", "optional"]
FIELD_ORDER = {
    "meta": ["version", "run_id", "created", "fingerprint", "prompt", "interactive", "conversation_token", "caller", "agent"],
    "assistant": ["iteration", "message", "stop_reason", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens"],
    "user": ["message"],
    "tool_result": ["tool_use_id", "result", "remote", "kind", "dispatched"],
    "deferred": ["tool_use_id", "tool_name", "note", "handle", "kind", "dispatched"],
    "decision": ["tool"],
    "call_approval": ["tool_use_id", "tool_name"],
    "memory_revisions": ["revisions"],
    "terminal": ["reason", "message", "summary"],
    "claim": ["by", "claimed"],
}
FP_ORDER = ["provider", "model", "system_hash", "tools_hash", "thinking_mode", "reasoning_effort", "max_tokens", "max_iterations"]
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?(Z|[+-]\d\d:\d\d)$")


def is_subsequence(keys, order):
    it = iter(order)
    return all(k in it for k in keys)


def check_canonical(name, data, *, healthy):
    """Every line Go would parse re-encodes to itself; keys in SPEC order
    (fields SPEC 1 does not name, the unknown-field cases, are left out of
    the order check)."""
    problems = []
    lines = oracle.split_lines(data)
    for no, off, raw, term in lines:
        obj = oracle.decode_line(raw)
        if obj is None:
            if healthy:
                problems.append(f"{name}:{no}: unparsable")
            continue
        if enc(obj).encode() != raw:
            problems.append(f"{name}:{no}: not canonical")
        if not healthy:
            continue
        if not term:
            problems.append(f"{name}:{no}: no newline")
        keys = list(obj)
        kind = oracle.kind_of(obj)
        if "time" in obj and obj["time"] is not None and not TIME_RE.match(obj["time"]):
            problems.append(f"{name}:{no}: time {obj['time']!r}")
        if kind is None:
            if not is_subsequence(keys[:-1], ENVELOPE_ORDER) or keys[:2] != ["seq", "protocol"] or obj.get("optional") is not True:
                problems.append(f"{name}:{no}: bad optional envelope {keys}")
            continue
        if keys[-1] != kind or keys[:2] != ["seq", "protocol"] or not is_subsequence(keys[:-1], ENVELOPE_ORDER):
            problems.append(f"{name}:{no}: envelope keys {keys}")
        p = obj[kind]
        if not is_subsequence([k for k in p if k in FIELD_ORDER[kind]], FIELD_ORDER[kind]):
            problems.append(f"{name}:{no}: payload key order {list(p)}")
        if oracle.type_errors(obj):
            problems.append(f"{name}:{no}: types {oracle.type_errors(obj)}")
        if kind == "meta":
            if not is_subsequence([k for k in p["fingerprint"] if k in FP_ORDER], FP_ORDER):
                problems.append(f"{name}:{no}: fingerprint order")
            if not TIME_RE.match(p["created"]):
                problems.append(f"{name}:{no}: created {p['created']!r}")
            if not oracle.valid_id(p["run_id"]):
                problems.append(f"{name}:{no}: run_id")
        if kind == "claim" and not TIME_RE.match(p["claimed"]):
            problems.append(f"{name}:{no}: claimed {p['claimed']!r}")
        if kind == "memory_revisions" and p["revisions"] is not None and list(p["revisions"]) != sorted(p["revisions"]):
            problems.append(f"{name}:{no}: revisions not sorted")
        if kind == "terminal" and isinstance(p.get("summary"), dict):
            by = p["summary"].get("counters", {}).get("tool_calls_by_kind", {})
            if list(by) != sorted(by):
                problems.append(f"{name}:{no}: summary tool_calls_by_kind not sorted")
    if healthy:
        seqs = [oracle.parse_line(raw)["seq"] for _, _, raw, _ in lines]
        if seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"{name}: seqs are not 1..N")
        if not data.endswith(b"\n"):
            problems.append(f"{name}: no final newline")
    return problems


# ------------------------------------------------------------------ main

LAYOUT = [
    "- `runs/`: a healthy state dir of version-3 journals (`meta.run_id` = id, seqs 1..N).",
    "- `runs-v1/`: healthy version-1 journals: every `runs/` case again under the same name, built",
    "  by the same builder as version 1 (`time` on every record from a deterministic clock, UTC with",
    "  nanoseconds; `meta.agent` `nats-ops`; `kind`/`dispatched` on every tool_result and deferred;",
    "  `terminal.summary`), plus the version-1 cases listed below. No file-level cases.",
    "- `damaged/`: a state dir of version-3 journals, one per content-level verify finding, plus",
    "  file-level cases (`not valid.json`, `orphan.lock`, `linked.json` symlink).",
    "- `damaged-v1/`: every content-level `damaged/` case again under the same name as version 1",
    "  (not `not valid.json`/`link-target.json`, which serve file-level cases), plus the version-1",
    "  cases listed below (bad times, wrong-typed v1 fields, u64 limits, mixed generations, version 0).",
    "- `expected/<dir>/<id>.fold.json` (dir `runs`, `runs-v1`): the `fold --format json` object (SPEC 11",
    "  keys in this order: `version`, `run_id`, `agent`, `fingerprint`, `prompt`, `interactive`,",
    "  `conversation_token`, `caller`, `messages`, `counters` {`llm_calls`, `tool_calls`,",
    "  `remote_tool_calls`, `mcp_tool_calls`, `tool_calls_by_kind` (kind token -> count, kinds with no",
    "  calls left out), `in_tokens`, `out_tokens`, `cache_read_tokens`, `cache_create_tokens`,",
    "  `thinking_tokens`}, `turns`, `context_tokens`, `next_iteration`, `last_stop_reason`, `pending`,",
    "  `approvals`, `call_approvals`, `memory_revisions`, `terminal` {`reason`, `message`}, `ended`,",
    "  `completed`, `status`, `waiting`, `open_deferrals`), laid out like the `fold` objects in",
    "  `../shared/agent-journals/expected/`; `<id>.findings.json`: verify findings, a list of",
    "  `{code, severity, line, seq}` (healthy: infos only, plus the `version-3` warning in `runs/`).",
    "- `expected/<dir>/<name>.findings.json` (dir `damaged`, `damaged-v1`): the exact findings `verify`",
    "  must report for that file, as `{code, severity, line, seq}` (line 1-based or null), sorted by",
    "  line (null last) then code, excluding the environment-dependent `permissions` and `live` (tests",
    "  chmod 0700/0600 and hold no locks). `<name>.fold.json` exists only where the fold accepts the journal.",
    "- `expected/ls-runs.json`, `expected/ls-runs-v1.json`: `ls --format json` of `runs/` and `runs-v1/`",
    "  restricted to `run_id`, `status`, `waiting`, `open_deferrals`, `version`, `agent`, `model`,",
    "  `records`, `updated`, `prompt` (every run has `live: false`), sorted by run_id. `updated` is the",
    "  last record's `time` as Go prints it, or null where that record has none: then the file's mtime",
    "  counts, which the tests do not pin.",
    "- `gen/oracle.py`: the independent reference model (fold, status, verify, ls) the expected results",
    "  come from, written from SPEC.md; `gen/check_reference.py` checks it against the agent's own",
    "  answers in `../shared/agent-journals/` (`python3 testdata/gen/check_reference.py`).",
    "- `schema-cases/`: owned separately, not generated here.",
]


def readme(sections):
    out = ["# testdata", "",
           "Journals for fisk-admin's tests, generated by `python3 testdata/gen/gen.py`",
           "(Python 3.11, stdlib only; re-running it writes identical bytes;",
           "`python3 testdata/gen/gen.py --check` changes nothing and fails if anything differs).",
           "",
           "**The corpus is append-only: a journal once committed is never edited.** To cover",
           "something new, add a new case (a new file name) to `gen/gen.py`; never change the",
           "bytes of an existing journal. `gen.py` refuses to overwrite a journal that differs.",
           "Files under `expected/` are derived and may be regenerated.",
           "",
           "Layout:", ""] + LAYOUT
    for title, rows in sections:
        out += ["", f"## {title}", ""]
        out += [f"- {r}" for r in rows]
    out += ["", "## Decisions where SPEC.md leaves room", "",
            "Marked `DECISION` in `gen/oracle.py` where they are implemented.", ""]
    out += [f"- {d}" for d in DECISIONS]
    return ("\n".join(out) + "\n").encode()


DECISIONS = [
    "Sequence checks compare a record with the previous parsed record; the first record has no previous one, so a meta at seq 2 is `meta-seq` only (no `seq-gap`).",
    "`empty-journal` suppresses every content finding but not the framing ones: a file holding only a torn line reports `torn-tail` and `empty-journal`.",
    "Line-level findings carry the record's `seq` whenever the line parsed and `seq` is an integer; unparsable lines (`torn-tail`, `garbage-final-line`, `interior-corruption`) have seq null.",
    "Meta findings (`version-*`, `run-id-mismatch`) judge the journal's own meta (its first record) and are reported at the meta line (line 1); a duplicate meta later in the journal is only `duplicate-meta` (and `seq-not-increasing`).",
    "`version-3` is reported for every version-3 journal whose first record is its meta, damaged ones included; `version-older` (version 2 or below 1) is a warning; verify folds any version (the version finding already says the run is not resumable), so no `fold` error follows `version-older` or `version-3`.",
    "A duplicate meta with seq 1 is both `duplicate-meta` and `seq-not-increasing` (`meta-seq` applies only when the seq is not 1).",
    "`orphan-result` (no open turn) and `unknown-tool-use` are exclusive; `duplicate-result` is per turn.",
    "`missing-payload` and `extra-payload` are not also reported as line-level `fold` type errors; the expected files never list `schema`.",
    "`terminal` does not close the open turn (only `assistant` and `user` do): a hand answer after a suspended terminal belongs to the turn.",
    "Status (SPEC 9): the last terminal's reason only when the terminal is the last record read; any later record (claim, decision, call_approval, memory_revisions, a skipped optional record, an answer) makes it `open`. `waiting`/`open_deferrals` are separate fields, so a suspended run waiting on a deferral is `suspended` with `waiting: true`. A torn or garbage final line is not a record and does not reopen.",
    "Parsing is Go's `json.Unmarshal` into the agent's record types: a line with a wrong-typed field, an integer outside its Go type (seq and memory revisions uint64, the other integers int64), or a time Go refuses does not parse at all: `interior-corruption` inside the journal, `torn-tail`/`garbage-final-line` as the final line. A JSON `null` is accepted for every field and reads as the zero value (`\"time\":null` = undated).",
    "Times (`time`, `meta.created`, `claim.claimed`) must be `YYYY-MM-DDTHH:MM:SS(.digits)?(Z|+HH:MM|-HH:MM)` in the JSON string's raw bytes (uppercase T and Z, a real calendar date, hour 0-23, minute and second 0-59, offset hour 0-23 and minute 0-59; any escape inside the string fails). Go's lenient fallbacks (one-digit hour, comma fraction) are not modelled and no journal uses them.",
    "A zero time (`0001-01-01T00:00:00Z`) counts as no time: `ended` and `updated` are null for it, and it is not a version-1 field in a version-3 journal.",
    "`ended` and `updated` are printed as Go prints the parsed time: the journal's offset kept (a zero offset as `Z`), fraction trimmed of trailing zeros. Compare them as instants.",
    "`mixed-generation` counts a version-1 field only when it carries a value: a non-zero `time`, a non-empty `meta.agent` or `kind`, `dispatched` true, a non-null `terminal.summary`. Reported once, at the first such record.",
    "`unknown-field` looks at the payload object of the ten known protocols, `meta.fingerprint` and `tool_result.result` (not message blocks, not `terminal.summary`'s inside, not unknown protocols' payloads); once per run, at the first record holding one.",
    "`terminal.summary` is type-checked (an object or null; `turns`, `context_tokens` and the counters int64; `tool_calls_by_kind` an object keyed by decimal int64 strings with int64 values) but never read by the fold.",
    "Kind counting (SPEC 3 rule 5b) follows the SPEC: a kind token outside the six is counted under that token as written (`runs-v1/unknown-kind`). The agent itself counts such a token as `unknown` (its toolkit.ParseKind); `check_reference.py` reports that one difference (`g-all-counters`) instead of failing on it.",
    "Fold output follows the agent's layout: `memory_revisions` null until a record sets it (and null for `\"revisions\":null`), a tool_result block prints only `tool_use_id`, `content` and `is_error` (when true), a deferred record prints all six fields (`note`, `handle`, `kind` null when empty, `dispatched` a bool), a repeated deferral for one id replaces the earlier one, `agent` null when empty.",
    "`ls` prompt: \"control characters removed\" drops Unicode category Cc only (as Rust's `char::is_control`); the printable rest of an ANSI sequence (`[31m`) and U+2028/U+2029 stay.",
    "`linked.json` -> `link-target.json`: the shared content says `run_id: linked`, so `linked` is clean apart from `symlink` (and `version-3`) and `link-target` is a `run-id-mismatch`.",
    "`not valid.json` holds a healthy journal whose run_id is the stem, so it reports `invalid-id` whether or not verify also reads its content (a schema check of run_id against the id pattern would add `schema`).",
    "If verify also validates records against schemas/, the deliberately malformed records (meta-seq, missing-payload*, extra-payload, the run_id of `not valid`) may add `schema` findings; the expected files do not list them.",
    "A known protocol carrying `\"optional\": true` is folded normally and reports nothing (`skipped-optional` is only for unknown protocols).",
    "Fold output for `run-id-mismatch` is not pinned (the loader may refuse it); for `seq-gap` it is (SPEC 3.1: a gap is not a fold error).",
]

NOT_PINNED = ("run-id-mismatch", "not valid", "link-target", "meta-seq", "extra-payload")
V1_SKIP = ("not valid.json", "link-target.json")   # file-level helpers: damaged/ only


def build(fn, v1):
    GEN["v1"] = v1
    try:
        return as_bytes(fn())
    finally:
        GEN["v1"] = False


def v3_meta_finding(data):
    """[("version-3", 1, seq)] when the first line is a version-3 meta record."""
    lines = oracle.split_lines(data)
    obj = oracle.decode_line(lines[0][2]) if lines else None
    if obj and oracle.kind_of(obj) == "meta" and isinstance(obj.get("meta"), dict) and obj["meta"].get("version") == 3:
        return [("version-3", 1, obj.get("seq"))]
    return []


def healthy_dir(w, problems, dname, entries, v1):
    """Write and check one healthy state dir; returns (README rows, ls rows)."""
    ddir = os.path.join(TESTDATA, dname)
    exp = os.path.join(TESTDATA, "expected", dname)
    if not os.path.isdir(ddir) and not w.check_only:
        os.makedirs(ddir, mode=0o700)
    rows, ls_rows, want = {}, [], {}
    for run_id, desc, fn, expect in entries:
        data = build(fn, v1)
        problems += check_canonical(f"{dname}/{run_id}", data, healthy=True)
        w.journal(os.path.join(ddir, run_id + ".json"), data)
        fj = oracle.fold_json(oracle.load_and_fold(data))
        if fj["status"] != expect["status"]:
            problems.append(f"{dname}/{run_id}: oracle status {fj['status']}, designed {expect['status']}")
        if fj["waiting"] != ("open-deferrals" in expect["infos"]):
            problems.append(f"{dname}/{run_id}: oracle waiting {fj['waiting']}")
        if fj["run_id"] != run_id or fj["version"] != (1 if v1 else 3):
            problems.append(f"{dname}/{run_id}: meta")
        fs = oracle.verify_journal(run_id, data)
        want[run_id] = sorted(expect["infos"] + ([] if v1 else ["version-3"]))
        if sorted(f["code"] for f in fs) != want[run_id] or any(f["severity"] != "info" and f["code"] != "version-3" for f in fs):
            problems.append(f"{dname}/{run_id}: oracle findings {fs}, designed {want[run_id]}")
        w.derived(os.path.join(exp, run_id + ".fold.json"), pretty(fj))
        w.derived(os.path.join(exp, run_id + ".findings.json"), pretty(sorted(fs, key=key)))
        ls_rows.append(oracle.ls_entry(run_id, data))
        extra = ", waiting" if fj["waiting"] else ""
        rows[run_id] = f"`{run_id}.json`: {desc} (status {fj['status']}{extra}, {len(oracle.split_lines(data))} records)"
    if dname == "runs":
        w.journal(os.path.join(ddir, "simple-completed.lock"), b"")
        rows["simple-completed.lock"] = "`simple-completed.lock`: an empty lock file nobody holds: the run is not live, and it is not an orphan lock"
    if os.path.isdir(ddir):
        got = oracle.verify_dir(ddir)
        for run_id in want:
            if sorted(f["code"] for f in got.get(run_id, [])) != want[run_id]:
                problems.append(f"{dname}/{run_id}: directory walk disagrees")
        if set(got) - set(want):
            problems.append(f"{dname}/: unexpected entries {set(got) - set(want)}")
    w.derived(os.path.join(TESTDATA, "expected", f"ls-{dname}.json"), pretty(sorted(ls_rows, key=lambda r: r["run_id"])))
    return rows


def damaged_dir(w, problems, dname, entries, v1, special=()):
    """Write and check one damaged state dir; returns README rows."""
    ddir = os.path.join(TESTDATA, dname)
    exp = os.path.join(TESTDATA, "expected", dname)
    if not os.path.isdir(ddir) and not w.check_only:
        os.makedirs(ddir, mode=0o700)
    rows, designed = {}, {}
    for name, desc, fn, expected, want_fold in entries:
        data = build(fn, v1)
        stem = name[: -len(".json")]
        if not v1 and oracle.valid_id(stem):
            # A journal under an invalid id is not read (the agent cannot see it).
            expected = list(expected) + v3_meta_finding(data)
        designed[stem] = expected
        problems += check_canonical(f"{dname}/{name}", data, healthy=False)
        w.journal(os.path.join(ddir, name), data)
        rows[name] = f"`{name}`: {desc}. Expect: " + (", ".join(f"`{c}`" for c, _, _ in expected) or "nothing")
        if want_fold:
            fj = oracle.fold_json(oracle.load_and_fold(data))
            w.derived(os.path.join(exp, stem + ".fold.json"), pretty(fj))
        else:
            try:
                oracle.load_and_fold(data)
                # the fold is pure: these journals are only wrong about
                # things it does not look at; their fold output is not pinned
                if stem not in NOT_PINNED:
                    problems.append(f"{dname}/{name}: the oracle folds it but no fold.json is pinned")
            except oracle.FoldError:
                pass
    if special:
        w.symlink(os.path.join(ddir, "linked.json"), "link-target.json")
        w.journal(os.path.join(ddir, "orphan.lock"), b"")
    for name, desc, expected in special:
        designed[name.rsplit(".", 1)[0]] = expected
        rows[name] = f"`{name}`: {desc}. Expect: " + ", ".join(f"`{c}`" for c, _, _ in expected)
    # cross-check the whole dir through the oracle's directory walk
    if os.path.isdir(ddir):
        got = oracle.verify_dir(ddir)
        for stem in sorted(set(got) | set(designed)):
            g = sorted(got.get(stem, []), key=key)
            d = sorted(findings_of(designed.get(stem, [])), key=key)
            if g != d:
                problems.append(f"{dname}/{stem}: oracle {g} != designed {d}")
            w.derived(os.path.join(exp, stem + ".findings.json"), pretty(g))
    return rows


def main():
    check_only = "--check" in sys.argv[1:]
    w = Writer(check_only)
    problems = []

    runs = healthy_dir(w, problems, "runs", RUNS, v1=False)
    runs_v1 = healthy_dir(w, problems, "runs-v1", RUNS + V1_RUNS, v1=True)
    damaged = damaged_dir(w, problems, "damaged", DAMAGED, v1=False, special=SPECIAL)
    mirrored = [d for d in DAMAGED if d[0] not in V1_SKIP]
    damaged_v1 = damaged_dir(w, problems, "damaged-v1", mirrored + V1_DAMAGED, v1=True)

    new_runs = [r[0] for r in V1_RUNS]
    new_damaged = [d[0] for d in V1_DAMAGED]
    sections = [
        ("runs/ (healthy, version 3)", list(runs.values())),
        ("runs-v1/ (healthy, version 1)", [
            "every `runs/` case above under the same name (not the `.lock`), as version 1; same status, waiting and infos, without `version-3`"]
         + [runs_v1[r] for r in new_runs]),
        ("damaged/ (version 3)", list(damaged.values())),
        ("damaged-v1/ (version 1)", [
            "every `damaged/` journal above under the same name except `not valid.json` and `link-target.json`, as version 1; the same findings without `version-3`"]
         + [damaged_v1[n] for n in new_damaged]),
    ]
    w.derived(os.path.join(TESTDATA, "README.md"), readme(sections))

    problems += w.problems
    for p in problems:
        print("gen.py:", p, file=sys.stderr)
    if not check_only:
        print(f"gen.py: {len(w.written)} file(s) written; runs {len(RUNS)}, runs-v1 {len(RUNS) + len(V1_RUNS)}, "
              f"damaged {len(DAMAGED) + len(SPECIAL)}, damaged-v1 {len(mirrored) + len(V1_DAMAGED)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
