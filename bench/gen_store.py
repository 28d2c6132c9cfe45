#!/usr/bin/env python3
"""Write a synthetic state dir for the benchmarks.

    bench/gen_store.py DIR --runs N --bytes B [--seed S]

Each run is a healthy version-3 journal in the Go writer's canonical form:
a meta record, then turns of one assistant record with two tool_use blocks
and their two tool results (tool output is realistic text with escapes),
until the journal reaches about B bytes, then a terminal. Runs alternate
between completed, suspended and waiting (an open deferral), so ls and
verify do real work. Deterministic for a given seed.
"""
import argparse, json, os, random

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


def run(rng, rid, target, shape):
    recs = [{"seq": 1, "protocol": P + "meta", "meta": {
        "version": 3, "run_id": rid, "created": "2026-11-01T10:00:00.5Z",
        "fingerprint": {"provider": "anthropic", "model": "claude-sonnet-4-5",
                        "system_hash": "a" * 64, "tools_hash": "b" * 64,
                        "thinking_mode": "off", "max_tokens": 200000, "max_iterations": 500},
        "prompt": f"benchmark run {rid}: inspect the ORDERS stream"}}]
    size = len(enc(recs[0]))
    seq, it = 1, 0
    out = [enc(recs[0])]
    while size < target:
        ids = [f"toolu_{it}_{k}" for k in range(2)]
        seq += 1
        a = {"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [
                {"text": {"text": "Checking " + " ".join(rng.choice(WORDS) for _ in range(12))}}]
                + [{"tool_use": {"id": i, "name": "exec", "input": {"command": f"nats stream info ORDERS-{k}"}}}
                   for k, i in enumerate(ids)]},
            "stop_reason": "tool_use", "in_tokens": 1200 + it, "out_tokens": 80}}
        out.append(enc(a)); size += len(out[-1])
        for i in ids:
            seq += 1
            r = {"seq": seq, "protocol": P + "tool_result", "tool_result": {
                "tool_use_id": i, "result": {"tool_use_id": i, "content": output(rng, rng.randrange(300, 3000))}}}
            out.append(enc(r)); size += len(out[-1])
        it += 1
    seq += 1
    ids = [f"toolu_{it}_0"]
    if shape == "waiting":
        out.append(enc({"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [
                {"tool_use": {"id": ids[0], "name": "defer", "input": {"note": "approve"}}}]},
            "stop_reason": "tool_use", "in_tokens": 10, "out_tokens": 5}}))
        seq += 1
        out.append(enc({"seq": seq, "protocol": P + "deferred", "deferred": {
            "tool_use_id": ids[0], "tool_name": "defer", "note": "approve"}}))
        seq += 1
        out.append(enc({"seq": seq, "protocol": P + "terminal", "terminal": {"reason": "suspended"}}))
    else:
        out.append(enc({"seq": seq, "protocol": P + "assistant", "assistant": {
            "iteration": it, "message": {"role": "assistant", "content": [{"text": {"text": "Done."}}]},
            "stop_reason": "end_turn", "in_tokens": 10, "out_tokens": 5}}))
        seq += 1
        out.append(enc({"seq": seq, "protocol": P + "terminal", "terminal": {
            "reason": "completed" if shape == "completed" else "suspended"}}))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--bytes", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.dir, mode=0o700, exist_ok=True)
    os.chmod(a.dir, 0o700)
    rng = random.Random(a.seed)
    # Journals of one size are alike: build a few and vary only the id.
    templates = [run(rng, "TEMPLATE", a.bytes, shape) for shape in ("completed", "suspended", "waiting")]
    for n in range(a.runs):
        rid = f"bench-{n:06d}"
        path = os.path.join(a.dir, rid + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(templates[n % 3].replace('"run_id":"TEMPLATE"', f'"run_id":"{rid}"', 1)
                    .replace("benchmark run TEMPLATE", f"benchmark run {rid}", 1))
        os.chmod(path, 0o600)


if __name__ == "__main__":
    main()
