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

class Journal:
    """Builds one journal, line by line, in canonical form."""

    def __init__(self, run_id, created, fp, prompt, *, interactive=False,
                 conversation_token="", caller="", version=3, meta_seq=1):
        self.run_id = run_id
        self.lines = []          # bytes, without the trailing newline
        self.seq = 0
        self.tail = b""          # bytes after the last newline (torn / unterminated)
        m = {"version": version, "run_id": run_id, "created": created,
             "fingerprint": fp, "prompt": prompt}
        put(m, "interactive", interactive)
        put(m, "conversation_token", conversation_token)
        put(m, "caller", caller)
        self.meta_payload = m
        self.rec("meta", m, seq=meta_seq)

    def rec(self, kind, payload, *, seq=None, optional=False, protocol=None,
            extra=None, omit_payload=False):
        seq = self.seq + 1 if seq is None else seq
        self.seq = seq
        d = {"seq": seq, "protocol": protocol or PFX + kind}
        if optional:
            d["optional"] = True
        if not omit_payload:
            d[kind] = payload
        for k, v in (extra or {}).items():
            d[k] = v
        self.lines.append(enc(d).encode())
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
        return self.rec("assistant", p, **kw)

    def user(self, content, **kw):
        return self.rec("user", {"message": msg("user", content)}, **kw)

    def result(self, id_, content, is_error=False, remote=False, **kw):
        p = {"tool_use_id": id_, "result": result_obj(id_, content, is_error)}
        put(p, "remote", remote)
        return self.rec("tool_result", p, **kw)

    def deferred(self, id_, name, note="", handle="", **kw):
        p = {"tool_use_id": id_, "tool_name": name}
        put(p, "note", note)
        put(p, "handle", handle)
        return self.rec("deferred", p, **kw)

    def decision(self, tool, **kw):
        return self.rec("decision", {"tool": tool}, **kw)

    def call_approval(self, id_, name, **kw):
        return self.rec("call_approval", {"tool_use_id": id_, "tool_name": name}, **kw)

    def memrev(self, revisions, **kw):
        r = None if revisions is None else {k: revisions[k] for k in sorted(revisions)}
        return self.rec("memory_revisions", {"revisions": r}, **kw)

    def terminal(self, reason, message="", **kw):
        p = {"reason": reason}
        put(p, "message", message)
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


@run("deferral-waiting", "exec + defer in one batch; exec answered, deferred record, terminal suspended: status waiting", "waiting", ["open-deferrals"])
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


@run("deferral-partly-answered", "two deferrals journaled in reverse id order, one answered after the suspend: still waiting on the other", "waiting", ["open-deferrals"])
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


@run("deferral-answered-unresumed", "deferral answered by hand but not resumed yet: turn fully answered, committed, no pending; last non-inert is the tool_result so status open", "open")
def _():
    r = "deferral-answered-unresumed"
    j = Journal(r, "2026-11-06T07:07:07.007Z", FP_SONNET, "Get the on-call lead to confirm the failover window.")
    d = tid(r, 1)
    j.assistant(0, [text("Asking the on-call lead."), tool_use(d, "defer", {"note": "failover window", "handle": "pager/INC-77"})], "tool_use", 640, 55)
    j.deferred(d, "defer", "failover window", "pager/INC-77")
    j.terminal("suspended", "waiting on 1 deferred call")
    j.result(d, "confirmed: Saturday 02:00-03:00 UTC")
    return j


@run("approvals", "standing approvals (decision, duplicates kept) and one-shot call_approval cleared by terminals; memory_revisions replaced by \"revisions\":null; pending batch but status suspended", "suspended")
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


@run("optional-telemetry", "an unknown protocol with \"optional\":true after the terminal: skipped, inert for status", "completed", ["skipped-optional"])
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


@run("claimed-after-terminal", "terminal suspended followed by inert claim and memory_revisions: status is the terminal reason", "suspended")
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
    full = enc({"seq": 4, "protocol": PFX + "tool_result", "tool_result": {"tool_use_id": b, "result": {"tool_use_id": b, "content": "Gr\u00fc\u00dfe"}}}).encode()
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
    glued = enc({"seq": 3, "protocol": PFX + "tool_result", "tool_result": {"tool_use_id": a, "result": {"tool_use_id": a, "content": "up 3 days"}}}) + \
        enc({"seq": 4, "protocol": PFX + "claim", "claim": {"by": "ops-2", "claimed": "2026-12-01T10:05:00Z"}})
    j.raw(glued.encode())
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


# Entries that are not built from bytes: (name, description, expected)
SPECIAL = [
    ("linked.json", "relative symlink -> link-target.json", [("symlink", None, None)]),
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

ENVELOPE_ORDER = ["seq", "protocol", "optional"]
FIELD_ORDER = {
    "meta": ["version", "run_id", "created", "fingerprint", "prompt", "interactive", "conversation_token", "caller"],
    "assistant": ["iteration", "message", "stop_reason", "in_tokens", "out_tokens", "cache_read_tokens", "cache_create_tokens", "thinking_tokens"],
    "user": ["message"],
    "tool_result": ["tool_use_id", "result", "remote"],
    "deferred": ["tool_use_id", "tool_name", "note", "handle"],
    "decision": ["tool"],
    "call_approval": ["tool_use_id", "tool_name"],
    "memory_revisions": ["revisions"],
    "terminal": ["reason", "message"],
    "claim": ["by", "claimed"],
}
FP_ORDER = ["provider", "model", "system_hash", "tools_hash", "thinking_mode", "reasoning_effort", "max_tokens", "max_iterations"]
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?(Z|[+-]\d\d:\d\d)$")


def is_subsequence(keys, order):
    it = iter(order)
    return all(k in it for k in keys)


def check_canonical(name, data, *, healthy):
    """Every parsable line re-encodes to itself; keys in SPEC order."""
    problems = []
    lines = oracle.split_lines(data)
    for no, off, raw, term in lines:
        obj = oracle.parse_line(raw)
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
        if kind is None:
            pk = keys[-1]
            if keys[:-1] != ["seq", "protocol", "optional"] or obj["optional"] is not True:
                problems.append(f"{name}:{no}: bad optional envelope {keys}")
            continue
        if keys != ["seq", "protocol", kind] and keys != ["seq", "protocol", "optional", kind]:
            problems.append(f"{name}:{no}: envelope keys {keys}")
        p = obj[kind]
        if not is_subsequence(list(p), FIELD_ORDER[kind]):
            problems.append(f"{name}:{no}: payload key order {list(p)}")
        if oracle.type_errors(obj):
            problems.append(f"{name}:{no}: types {oracle.type_errors(obj)}")
        if kind == "meta":
            if not is_subsequence(list(p["fingerprint"]), FP_ORDER):
                problems.append(f"{name}:{no}: fingerprint order")
            if not TIME_RE.match(p["created"]):
                problems.append(f"{name}:{no}: created {p['created']!r}")
            if not oracle.valid_id(p["run_id"]):
                problems.append(f"{name}:{no}: run_id")
        if kind == "claim" and not TIME_RE.match(p["claimed"]):
            problems.append(f"{name}:{no}: claimed {p['claimed']!r}")
        if kind == "memory_revisions" and p["revisions"] is not None and list(p["revisions"]) != sorted(p["revisions"]):
            problems.append(f"{name}:{no}: revisions not sorted")
    if healthy:
        seqs = [oracle.parse_line(raw)["seq"] for _, _, raw, _ in lines]
        if seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"{name}: seqs are not 1..N")
        if not data.endswith(b"\n"):
            problems.append(f"{name}: no final newline")
    return problems


# ------------------------------------------------------------------ main

def readme(healthy_rows, damaged_rows):
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
           "Layout:",
           "",
           "- `runs/`: a healthy state dir (each `<id>.json` is version 3, `meta.run_id` = id, seqs 1..N).",
           "- `damaged/`: a state dir with one journal per content-level verify finding, plus",
           "  file-level cases (`not valid.json`, `orphan.lock`, `linked.json` symlink).",
           "- `expected/runs/<id>.fold.json`: the `fold --format json` object;",
           "  `expected/runs/<id>.findings.json`: verify findings (only infos for healthy runs).",
           "- `expected/damaged/<name>.findings.json`: the exact findings `verify` must report for",
           "  that file, as `{code, severity, line, seq}` (line 1-based or null), excluding the",
           "  environment-dependent `permissions` and `live` (tests chmod 0700/0600 and hold no locks).",
           "  `<name>.fold.json` exists only where the fold accepts the journal.",
           "- `expected/ls-runs.json`: `ls --format json` of `runs/` restricted to",
           "  `run_id`, `status`, `model`, `records`, `prompt` (every run has `live: false`), sorted by run_id.",
           "- `gen/oracle.py`: the independent reference model (fold, status, verify) the expected",
           "  results come from, written from SPEC.md and docs/OUTPUT.md only.",
           "- `schema-cases/`: owned separately, not generated here.",
           "",
           "## runs/ (healthy)", ""]
    for name, desc in healthy_rows:
        out.append(f"- `{name}`: {desc}")
    out += ["", "## damaged/", ""]
    for name, desc, codes in damaged_rows:
        out.append(f"- `{name}`: {desc}. Expect: {codes}")
    out += ["", "## Decisions where SPEC.md / OUTPUT.md leave room", ""]
    out += [f"- {d}" for d in DECISIONS]
    return ("\n".join(out) + "\n").encode()


DECISIONS = [
    "Sequence checks compare a record with the previous parsed record; the first record has no previous one, so a meta at seq 2 is `meta-seq` only (no `seq-gap`).",
    "`empty-journal` suppresses every content finding but not the framing ones: a file holding only a torn line reports `torn-tail` and `empty-journal`.",
    "Line-level findings carry the record's `seq` whenever the line parsed and `seq` is an integer; unparsable lines (`torn-tail`, `garbage-final-line`, `interior-corruption`) have seq null.",
    "Meta findings (`version-*`, `run-id-mismatch`) are reported at the meta line (line 1, seq 1 here).",
    "`version-older` is a warning; verify folds any version (the version finding already says the run is not resumable), so no `fold` error follows it.",
    "A duplicate meta with seq 1 is both `duplicate-meta` and `seq-not-increasing` (`meta-seq` applies only when the seq is not 1).",
    "`orphan-result` (no open turn) and `unknown-tool-use` are exclusive; `duplicate-result` is per turn.",
    "`missing-payload` and `extra-payload` are not also reported as line-level `fold` type errors; OUTPUT.md's rules never produce `schema`, so no expected file lists it.",
    "`terminal` does not close the open turn (only `assistant` and `user` do): a hand answer after a suspended terminal belongs to the turn.",
    "`ls` prompt: \"control characters removed\" drops Unicode category Cc only (as Rust's `char::is_control`); the printable rest of an ANSI sequence (`[31m`) and U+2028/U+2029 stay.",
    "`linked.json` -> `link-target.json`: the shared content says `run_id: linked`, so `linked` is clean apart from `symlink` and `link-target` is a `run-id-mismatch`.",
    "`not valid.json` holds a healthy journal whose run_id is the stem, so it reports `invalid-id` whether or not verify also reads its content (a schema check of run_id against the id pattern would add `schema`).",
    "OUTPUT.md's exact rules never emit `schema`. If verify also validates records against schemas/, the deliberately malformed records (meta-seq, missing-payload*, extra-payload, fold, the run_id of `not valid`) may add `schema` findings; the expected files do not list them.",
    "A known protocol carrying `\"optional\": true` is folded normally and reports nothing (`skipped-optional` is only for unknown protocols).",
    "Fold output for `run-id-mismatch` is not pinned (the loader may refuse it); for `seq-gap` it is (SPEC 3.1: a gap is not a fold error).",
]


def main():
    check_only = "--check" in sys.argv[1:]
    w = Writer(check_only)
    problems = []

    runs_dir = os.path.join(TESTDATA, "runs")
    dmg_dir = os.path.join(TESTDATA, "damaged")
    exp_dir = os.path.join(TESTDATA, "expected")
    for d in (runs_dir, dmg_dir):
        if not os.path.isdir(d) and not check_only:
            os.makedirs(d, mode=0o700)

    # --- healthy runs
    healthy_rows, ls_rows = [], []
    for run_id, desc, build, expect in RUNS:
        data = as_bytes(build())
        problems += check_canonical(run_id, data, healthy=True)
        w.journal(os.path.join(runs_dir, run_id + ".json"), data)
        st = oracle.load_and_fold(data)
        fj = oracle.fold_json(st)
        if fj["status"] != expect["status"]:
            problems.append(f"{run_id}: oracle status {fj['status']}, designed {expect['status']}")
        if fj["run_id"] != run_id or fj["version"] != 3:
            problems.append(f"{run_id}: meta")
        fs = oracle.verify_journal(run_id, data)
        if sorted(f["code"] for f in fs) != sorted(expect["infos"]) or any(f["severity"] != "info" for f in fs):
            problems.append(f"{run_id}: oracle findings {fs}, designed {expect['infos']}")
        w.derived(os.path.join(exp_dir, "runs", run_id + ".fold.json"), pretty(fj))
        w.derived(os.path.join(exp_dir, "runs", run_id + ".findings.json"), pretty(sorted(fs, key=key)))
        ls_rows.append(oracle.ls_entry(run_id, data))
        healthy_rows.append((run_id + ".json", desc + f" (status {fj['status']}, {len(oracle.split_lines(data))} records)"))
    lock = os.path.join(runs_dir, "simple-completed.lock")
    w.journal(lock, b"")
    healthy_rows.append(("simple-completed.lock", "an empty lock file nobody holds: the run is not live, and it is not an orphan lock"))
    w.derived(os.path.join(exp_dir, "ls-runs.json"), pretty(sorted(ls_rows, key=lambda r: r["run_id"])))

    # --- damaged
    damaged_rows = []
    for name, desc, build, expected, want_fold in DAMAGED:
        data = as_bytes(build())
        stem = name[: -len(".json")]
        problems += check_canonical(name, data, healthy=False)
        w.journal(os.path.join(dmg_dir, name), data)
        damaged_rows.append((name, desc, ", ".join(f"`{c}`" for c, _, _ in expected)))
        if want_fold:
            fj = oracle.fold_json(oracle.load_and_fold(data))
            w.derived(os.path.join(exp_dir, "damaged", stem + ".fold.json"), pretty(fj))
        else:
            try:
                oracle.load_and_fold(data)
                # the fold is pure: these journals are only wrong about
                # things it does not look at; their fold output is not pinned
                if stem not in ("run-id-mismatch", "not valid", "link-target", "meta-seq", "extra-payload"):
                    problems.append(f"{name}: the oracle folds it but no fold.json is pinned")
            except oracle.FoldError:
                pass
    w.symlink(os.path.join(dmg_dir, "linked.json"), "link-target.json")
    w.journal(os.path.join(dmg_dir, "orphan.lock"), b"")
    for name, desc, expected in SPECIAL:
        damaged_rows.append((name, desc, ", ".join(f"`{c}`" for c, _, _ in expected)))

    # cross-check the whole damaged dir through the oracle's directory walk
    if os.path.isdir(dmg_dir):
        got = oracle.verify_dir(dmg_dir)
        designed = {n.rsplit(".", 1)[0]: e for n, _, _, e, _ in DAMAGED}
        designed.update({n.rsplit(".", 1)[0]: e for n, _, e in SPECIAL})
        for stem in sorted(set(got) | set(designed)):
            g = sorted(got.get(stem, []), key=key)
            d = sorted(findings_of(designed.get(stem, [])), key=key)
            if g != d:
                problems.append(f"damaged/{stem}: oracle {g} != designed {d}")
            w.derived(os.path.join(exp_dir, "damaged", stem + ".findings.json"), pretty(g))
        got_runs = oracle.verify_dir(runs_dir)
        for run_id, _, _, expect in RUNS:
            if sorted(f["code"] for f in got_runs.get(run_id, [])) != sorted(expect["infos"]):
                problems.append(f"runs/{run_id}: directory walk disagrees")
        if set(got_runs) - {r[0] for r in RUNS}:
            problems.append(f"runs/: unexpected entries {set(got_runs) - {r[0] for r in RUNS}}")

    w.derived(os.path.join(TESTDATA, "README.md"), readme(healthy_rows, damaged_rows))

    problems += w.problems
    for p in problems:
        print("gen.py:", p, file=sys.stderr)
    if not check_only:
        print(f"gen.py: {len(w.written)} file(s) written, {len(RUNS)} runs, {len(DAMAGED) + len(SPECIAL)} damaged entries")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
