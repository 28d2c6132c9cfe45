#!/usr/bin/env python3
"""Write a synthetic state dir for the benchmarks.

    bench/gen_store.py DIR --runs N --bytes B [--seed S] [--format-version 1|3]

Each run is a healthy journal in the Go writer's canonical form:
a meta record, then turns of one assistant record with two tool_use blocks
and their two tool results (tool output is realistic text with escapes),
until the journal reaches about B bytes, then a terminal. Runs alternate
between completed, suspended and waiting (an open deferral), so ls and
verify do real work. Deterministic for a given seed.

--waiting-every K: one run in K waits (an open deferral), the others
alternate completed and suspended; without it, every third run waits.

--ids hashed: run n is named `h-` and the first 16 hex digits of the
SHA-256 of `bench-NNNNNN` (as the web channel's hashed `w-` ids): the ids
sort in no relation to the order the runs were made in (issue 40's
shuffled store; examples/bench_interleave.rs writes them into a
stream interleaved). The default, `bench-NNNNNN`, sorts in creation order.

--format-version 3 (the default, byte-identical to this script before the
option existed) writes the August 2026 agent's shape. --format-version 1
writes the current agent's (SPEC 1.1): the same records with `time` on
every record (deterministic, increasing, Go's trimmed RFC3339Nano UTC),
`meta.agent`, `kind`/`dispatched` on tool results and the deferral, and a
`terminal.summary`, in the agent's key order. The tool output is drawn
from the same random stream and --bytes budgets the version-3 form, so
both versions hold the same records and the same text (a version-1 store
is some 5% larger on disk).
"""
import argparse, hashlib, json, os, random

P = "io.choria.fisk-ai.v1.session."


def enc(obj):
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    for a, b in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        s = s.replace(a, b)
    return s + "\n"


WORDS = ("stream consumer ack pending replicas leader raft subject bytes "
         "messages cluster node lag sequence purge interest limits").split()


def output(rng, n):
    lines = []
    while sum(len(l) for l in lines) < n:
        lines.append("\t".join(rng.choice(WORDS) for _ in range(8)) + f" <{rng.randrange(10**6)}> & ok")
    return "\n".join(lines)


def go_time(ns):
    """Go's time.RFC3339Nano of a UTC instant ns nanoseconds after
    2026-12-01T08:25:00Z: fraction trimmed of trailing zeros, no dot when
    it is zero."""
    s, frac = divmod(ns, 10**9)
    m, s = divmod(s, 60)
    h, m = divmod(25 + m, 60)
    f = f"{frac:09d}".rstrip("0")
    return f"2026-12-01T{8 + h:02d}:{m:02d}:{s:02d}" + ("." + f if f else "") + "Z"


class V1:
    """Version-1 additions. Times advance by a varying step from seq to seq
    (pure function of the seq, so the random stream is untouched); counters
    follow SPEC 3 for the summary."""
    KIND_APPLICATION = "1"  # the agent's internal key for "application" in tool_calls_by_kind

    def __init__(self):
        self.llm_calls = self.tool_calls = self.in_tokens = self.out_tokens = 0
        self.context_tokens = 0

    @staticmethod
    def stamp(rec):
        seq = rec["seq"]
        ns = 39_000_000_000 + seq * 150_000_000 + (seq * 7_919_104_729) % 99_999_990
        out = {"seq": seq, "protocol": rec["protocol"], "time": go_time(ns)}
        out.update((k, v) for k, v in rec.items() if k not in ("seq", "protocol"))
        return out

    def assistant(self, a):
        self.llm_calls += 1
        self.in_tokens += a["in_tokens"]
        self.out_tokens += a["out_tokens"]
        self.context_tokens = a["in_tokens"]

    def result(self, body):
        self.tool_calls += 1
        body["kind"] = "application"
        body["dispatched"] = True

    def summary(self):
        c = {"llm_calls": self.llm_calls}
        if self.tool_calls:
            c["tool_calls"] = self.tool_calls
            c["tool_calls_by_kind"] = {self.KIND_APPLICATION: self.tool_calls}
        c["in_tokens"] = self.in_tokens
        c["out_tokens"] = self.out_tokens
        return {"turns": 1, "context_tokens": self.context_tokens, "counters": c}


def run(rng, rid, target, shape, version=3):
    v1 = V1() if version == 1 else None

    def e(rec):
        # Returns the line and the length of its version-3 form, which is
        # what the size budget counts: both versions hold the same records.
        line = enc(rec)
        n = len(line)
        # v1: count the record for the summary, add its new fields, stamp it.
        if v1:
            body = rec.get("assistant")
            if body:
                v1.assistant(body)
            if "tool_result" in rec:
                v1.result(rec["tool_result"])
            if "deferred" in rec:
                rec["deferred"].update(kind="custom", dispatched=True)
            if "terminal" in rec:
                rec["terminal"]["summary"] = v1.summary()
            if "meta" in rec:
                rec["meta"]["agent"] = "nats-ops"
            line = enc(v1.stamp(rec))
        return line, n

    recs = [{"seq": 1, "protocol": P + "meta", "meta": {
        "version": version, "run_id": rid, "created": "2026-11-01T10:00:00.5Z",
        "fingerprint": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                        "system_hash": "a" * 64, "tools_hash": "b" * 64,
                        "thinking_mode": "off", "max_tokens": 200000, "max_iterations": 500},
        "prompt": f"benchmark run {rid}: inspect the ORDERS stream"}}]
    first, size = e(recs[0])
    seq, it = 1, 0
    out = [first]
    while size < target:
        ids = [f"toolu_{it}_{k}" for k in range(2)]
        seq += 1
        a = {"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [
                {"text": {"text": "Checking " + " ".join(rng.choice(WORDS) for _ in range(12))}}]
                + [{"tool_use": {"id": i, "name": "exec", "input": {"command": f"nats stream info ORDERS-{k}"}}}
                   for k, i in enumerate(ids)]},
            "stop_reason": "tool_use", "in_tokens": 1200 + it, "out_tokens": 80}}
        line, n = e(a); out.append(line); size += n
        for i in ids:
            seq += 1
            r = {"seq": seq, "protocol": P + "tool_result", "tool_result": {
                "tool_use_id": i, "result": {"tool_use_id": i, "content": output(rng, rng.randrange(300, 3000))}}}
            line, n = e(r); out.append(line); size += n
        it += 1
    seq += 1
    ids = [f"toolu_{it}_0"]
    if shape == "waiting":
        out.append(e({"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [
                {"tool_use": {"id": ids[0], "name": "defer", "input": {"note": "approve"}}}]},
            "stop_reason": "tool_use", "in_tokens": 10, "out_tokens": 5}})[0])
        seq += 1
        out.append(e({"seq": seq, "protocol": P + "deferred", "deferred": {
            "tool_use_id": ids[0], "tool_name": "defer", "note": "approve"}})[0])
        seq += 1
        out.append(e({"seq": seq, "protocol": P + "terminal", "terminal": {"reason": "suspended"}})[0])
    else:
        out.append(e({"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [{"text": {"text": "Done."}}]},
            "stop_reason": "end_turn", "in_tokens": 10, "out_tokens": 5}})[0])
        seq += 1
        out.append(e({"seq": seq, "protocol": P + "terminal", "terminal": {
            "reason": "completed" if shape == "completed" else "suspended"}})[0])
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format-version", type=int, choices=(1, 3), default=3)
    # Without it every third run waits (the stores before the option);
    # with K, one run in K waits and the others alternate completed and
    # suspended (the inbox benchmark: a fleet where few runs wait).
    ap.add_argument("--waiting-every", type=int, metavar="K")
    ap.add_argument("--ids", choices=("ordered", "hashed"), default="ordered")
    a = ap.parse_args()
    os.makedirs(a.dir, mode=0o700, exist_ok=True)
    os.chmod(a.dir, 0o700)
    rng = random.Random(a.seed)
    # Journals of one size are alike: build a few and vary only the id.
    templates = [run(rng, "TEMPLATE", a.bytes, shape, a.format_version) for shape in ("completed", "suspended", "waiting")]
    for n in range(a.runs):
        rid = f"bench-{n:06d}"
        if a.ids == "hashed":
            rid = "h-" + hashlib.sha256(rid.encode()).hexdigest()[:16]
        path = os.path.join(a.dir, rid + ".json")
        with open(path, "w", encoding="utf-8") as f:
            t = templates[n % 3]
            if a.waiting_every:
                t = templates[2] if n % a.waiting_every == a.waiting_every - 1 else templates[n % 2]
            f.write(t.replace('"run_id":"TEMPLATE"', f'"run_id":"{rid}"', 1)
                    .replace("benchmark run TEMPLATE", f"benchmark run {rid}", 1))
        os.chmod(path, 0o600)


if __name__ == "__main__":
    main()
