"""Reads xfpx reports for tests/gpu/screen-check.sh.

  screen_report.py summary REPORT            launches instrumented / screened / unchecked, findings
  screen_report.py late REPORT screened|precise
                                             PASS/FAIL: late_nan's NaN at launch 5000 of relax_step
  screen_report.py screened-count REPORT     number of screened findings
  screen_report.py selftest                  checks the above on hand-made reports
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def summary(r):
    kernels = r["kernels"]
    launches = sum(k["launches"] for k in kernels)
    inst = sum(k["instrumented_launches"] for k in kernels)
    scr = sum(k.get("screened_launches", 0) for k in kernels)
    gaps = {}
    for k in kernels:
        for u in k.get("unchecked", []):
            gaps[u["reason"]] = gaps.get(u["reason"], 0) + u["launches"]
    left = launches - inst - scr - gaps.get("nothing_to_check", 0)
    precise = set()
    for k in kernels:
        for x in k["records"]:
            at = "?" if x.get("first_launch_unknown") else str(x["first_launch"])
            precise.add(x["kind"] + "@" + at)
    screened = set()
    for k in kernels:
        for s in k.get("screened", []):
            screened.add("%s@%d/arg%d" % (s["kind"], s["first_launch"], s["param"]))
    why = ",".join("%s:%d" % kv for kv in sorted(gaps.items()))
    why = " (" + why + ")" if why else ""
    return "launches %d: %d instrumented, %d screened, %d unchecked%s; precise %s; screened %s" % (
        launches, inst, scr, left, why,
        " ".join(sorted(precise)[:6]) or "-", " ".join(sorted(screened)[:6]) or "-")


def late(r, want):
    ks = [k for k in r["kernels"] if "relax_step" in k["name"]]
    if not ks:
        return "FAIL: relax_step not in the report"
    k = ks[0]
    precise = [x for x in k["records"] if x["kind"] == "nan" and not x.get("first_launch_unknown")
               and x["first_launch"] == 5000]
    screened = [s for s in k.get("screened", []) if s["kind"] == "nan" and s["first_launch"] == 5000]
    other = [s for s in k.get("screened", []) if not (s["kind"] == "nan" and s["first_launch"] == 5000)]
    unchecked = k["launches"] - k["instrumented_launches"] - k.get("screened_launches", 0)
    if want == "screened" and screened:
        s = screened[0]
        ok, how = True, "screened nan at launch 5000 in arg%d (element %s, %d->%d)" % (
            s["param"], s.get("first_element"), s["before"], s["after"])
    elif precise:
        ok, how = True, "precise nan at launch 5000"
    else:
        ok, how = False, "nan at launch 5000 not found"
    extra = "; %d other screened findings" % len(other) if other else ""
    verdict = "PASS" if ok and unchecked == 0 and not other else "FAIL"
    return "%s: %s; %d of %d launches unchecked%s" % (verdict, how, unchecked, k["launches"], extra)


def screened_count(r):
    return sum(len(k.get("screened", [])) for k in r["kernels"])


def selftest():
    base = {"kernels": [{"name": "relax_step(int, float*, float const*, float*, float, int)", "launches": 6000,
                         "instrumented_launches": 25, "screened_launches": 5975, "records": [],
                         "screened": [{"kind": "nan", "format": "f32", "param": 3, "first_launch": 5000,
                                       "before": 0, "after": 1, "first_element": 5000}]}]}
    assert late(base, "screened").startswith("PASS: screened nan at launch 5000 in arg3"), late(base, "screened")
    assert late(base, "precise").startswith("FAIL"), "a screened finding is not a precise one"
    gap = json.loads(json.dumps(base))
    gap["kernels"][0]["screened_launches"] -= 1
    assert late(gap, "screened").startswith("FAIL") and "1 of 6000 launches unchecked" in late(gap, "screened")
    s = summary(base)
    assert s == "launches 6000: 25 instrumented, 5975 screened, 0 unchecked; precise -; screened nan@5000/arg3", s
    nothing = json.loads(json.dumps(base))
    nothing["kernels"][0]["unchecked"] = [{"reason": "nothing_to_check", "launches": 5}]
    nothing["kernels"][0]["launches"] += 5
    assert "0 unchecked (nothing_to_check:5)" in summary(nothing), summary(nothing)
    assert screened_count(base) == 1
    print("screen_report selftest: ok")


def main(argv):
    try:
        if argv[1:2] == ["selftest"]:
            selftest()
        elif len(argv) == 3 and argv[1] == "summary":
            print(summary(load(argv[2])))
        elif len(argv) == 4 and argv[1] == "late":
            print(late(load(argv[2]), argv[3]))
        elif len(argv) == 3 and argv[1] == "screened-count":
            print(screened_count(load(argv[2])))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (OSError, ValueError, KeyError) as e:
        print("FAIL: no readable report (%s)" % e)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
