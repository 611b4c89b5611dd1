"""Compare the findings of the smoke runs with the `EXPECT kind format`
marks of smoke.cu and print a table; exit 1 on a mismatch."""
import json, os, re, sys

src, out = sys.argv[1], sys.argv[2]
expected = set()
marked_lines = set()
for n, line in enumerate(open(src), 1):
    m = re.search(r"EXPECT (nan|inf|sub|div0) (f16|f16x2|bf16|bf16x2|f32|f64)\b", line)
    if m:
        expected.add((n, m.group(1), m.group(2)))
        marked_lines.add(n)
    if "// ALLOW" in line:
        marked_lines.add(n)

def add(found, kernel, r):
    loc = r["site"]["location"]
    line = loc["line"] if loc and os.path.basename(loc["file"]) == "smoke.cu" else None
    key = (line, r["kind"], r["format"])
    found.setdefault(key, []).append((kernel, r["site"]["instr"], r["occurrences"]))

def findings(report):
    found = {}
    for k in report["kernels"]:
        for r in k["records"]:
            add(found, k["name"], r)
    return found

def stream_report(path):
    """A report-shaped view of the streamed events (what the CLI builds)."""
    kernels = {}
    notes = []
    for l in open(path):
        e = json.loads(l)
        if e["event"] == "finding":
            recs = kernels.setdefault(e["kernel"], {})
            key = (e["site"]["id"], e["kind"], e["format"])
            if key in recs:
                recs[key]["occurrences"] += e["occurrences"]
            else:
                recs[key] = {"kind": e["kind"], "format": e["format"], "site": e["site"], "occurrences": e["occurrences"]}
        elif e["event"] == "note":
            notes.append(e["text"])
    return {"kernels": [{"name": k, "records": list(v.values()), "launches": 0, "instrumented_launches": 0, "probes": 0}
                        for k, v in kernels.items()], "run": {"notes": notes}}

ok = True
for mode in ["preload", "inject", "stream"]:
    path = os.path.join(out, f"report-{mode}.json")
    if mode == "stream":
        path = os.path.join(out, "events.jsonl")
    if not os.path.exists(path):
        print(f"{mode}: no report")
        ok = False
        continue
    rep = stream_report(path) if mode == "stream" else json.load(open(path))
    for n in rep["run"].get("notes", []):
        print(f"{mode} note: {n}")
    found = findings(rep)
    keys = set(found)
    missing = expected - keys
    unexpected = {k for k in keys if k[0] not in marked_lines}
    print(f"\n== {mode}: {len(keys)} (line, kind, format) found; {len(expected)} expected; "
          f"missing {sorted(missing)}; at unmarked lines {sorted(unexpected, key=str)}")
    if mode == "preload":
        print(f"{'line':>5} {'kind':5} {'fmt':4} {'exp':3} {'occ':>4}  kernel / instruction")
        for key in sorted(keys, key=lambda k: (k[0] or 0, k[1], k[2])):
            for kern, instr, occ in found[key]:
                print(f"{str(key[0]):>5} {key[1]:5} {key[2]:4} {'yes' if key in expected else '-':3} {occ:>4}  {kern}: {instr}")
        for k in rep["kernels"]:
            print(f"kernel {k['name']}: launches {k['launches']}, instrumented {k['instrumented_launches']}, probes {k['probes']}, records {len(k['records'])}")
            if k["name"].startswith("smoke_f32"):
                # two plain launches and one through a CUDA graph, 2 warps each
                occ = {r["occurrences"] for r in k["records"]}
                graph_ok = k["launches"] == 3 and k["instrumented_launches"] == 3 and occ == {6}
                print(f"smoke_f32 with the graph launch: launches {k['launches']}, occurrences {sorted(occ)}: {'ok' if graph_ok else 'WRONG'}")
                ok = ok and graph_ok
    ok = ok and not missing and not unexpected

ev_path = os.path.join(out, "events.jsonl")
if os.path.exists(ev_path):
    evs = [json.loads(l) for l in open(ev_path)]
    f64_phase = None
    for l in open(os.path.join(out, "stream.stderr")):
        if l.startswith("phase f64"):
            f64_phase = int(l.split()[2])
    f32_findings = [e for e in evs if e["event"] == "finding" and "f32" in e["kernel"]]
    early = [e for e in f32_findings if f64_phase and e["_arrived_ms"] < f64_phase]
    print(f"\nstreaming: {len(evs)} events; {len(f32_findings)} smoke_f32 findings, "
          f"{len(early)} arrived before the program reached its f64 phase; last event: {evs[-1]['event'] if evs else None}")
sys.exit(0 if ok else 1)
