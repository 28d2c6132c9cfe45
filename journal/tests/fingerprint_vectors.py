# Independent test vectors for journal/src/fingerprint.rs (SPEC 4), from the
# recipe only: Go json.Marshal is emulated with json.dumps plus Go's HTML
# escaping. Run: python3 journal/tests/fingerprint_vectors.py
import hashlib, json
def go(v, sort=False):
    s = json.dumps(v, separators=(',', ':'), ensure_ascii=False, sort_keys=sort)
    s = s.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026').replace('\u2028','\\u2028').replace('\u2029','\\u2029')
    return hashlib.sha256(s.encode()).hexdigest(), s
print("SYSTEM_ONE", go(["You are a careful operator."])[0])
print("SYSTEM_HTML", go(["a <b> & c", "é\u2028"]))
print("SYSTEM_NIL", go(None)[0])
EXEC_SCHEMA = {"type":"object","properties":{"command":{"type":"string","description":"The command line, run with sh -c."},"timeout_s":{"type":"integer","minimum":1,"description":"Kill the command after this many seconds."}},"required":["command"]}
DEFER_SCHEMA = {"type":"object","properties":{"note":{"type":"string","description":"What the person should do or decide."},"handle":{"type":"string","description":"A reference the person can use, such as a ticket id."}}}
def srt(v):
    if isinstance(v, dict): return {k: srt(v[k]) for k in sorted(v)}
    if isinstance(v, list): return [srt(x) for x in v]
    return v
def tool(name, desc, schema):
    return {"Name": name, "Description": desc, "InputSchema": srt(schema), "DeferLoading": False}
EXEC_D = "Run a shell command with sh -c and return its stdout, stderr and exit status. A non-zero exit status is an error result."
DEFER_D = "Hand this call to a person. The run suspends once the rest of the batch is done; the answer is given later with fisk-admin answer, and the run resumes."
print("TOOLS_EXEC_DEFER", go([tool("exec", EXEC_D, EXEC_SCHEMA), tool("defer", DEFER_D, DEFER_SCHEMA)]))
print("TOOLS_UNKNOWN", go([tool("mystery", "", {"type":"object"})]))
