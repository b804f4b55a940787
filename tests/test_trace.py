"""The Chrome/Perfetto trace of a report: complete events per build with their phases nested inside, launches as
instants; and `measure --trace` on a real Warp app."""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers import synth_build
from tests.test_measure import OPTIONS_APP, write_app
from warp_compile.cli import main
from warp_compile.probe.models import Launch, PchBuild, PhaseSpan, Report, Site
from warp_compile.probe.trace import report_trace


def _inside(inner: dict, outer: dict) -> bool:
    return outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 0.5


def _report() -> Report:
    spans = [
        PhaseSpan(phase="hash", start_ms=10.0, end_ms=10.5),
        PhaseSpan(phase="codegen", start_ms=10.6, end_ms=20.0),
        PhaseSpan(phase="native", start_ms=20.0, end_ms=1700.0),
        PhaseSpan(phase="native_load", start_ms=1700.5, end_ms=1702.0),
    ]
    first = synth_build(3, "pkg.a", "a", start_ms=10.0, end_ms=1702.5, ms=202.5, pch_ms=1500.0, thread=111,
                        spans=spans)
    second = synth_build(9, "pkg.b", "b", start_ms=40.0, end_ms=180.0, ms=140.0, hash_ms=1.0, codegen_ms=9.0,
                         native_ms=120.0, native_load_ms=2.0, thread=222)  # an older report: no spans
    return Report(
        command=["python", "-m", "pkg"], cwd="/p", samples=1, reference_sample=0,
        builds=[first, second],
        pch=[PchBuild(ms=1500.0, file="x.pch", thread=111, during_module="pkg.a", during_seq=3, start_ms=19.99)],
        launches=[Launch(kernel="k", module="pkg.a", dim=[8], count=20000, first_ms=1703.0, thread=111,
                         site=Site(file="/p/pkg/run.py", line=12, function="main"))],
        warm_builds=[synth_build(2, "pkg.a", "a", status="cached", start_ms=5.0, end_ms=6.0, ms=1.0, thread=5)],
    )


def test_builds_are_complete_events_with_nested_phases_and_launch_instants() -> None:
    trace = report_trace(_report())
    json.dumps(trace)  # plain JSON
    ev = trace["traceEvents"]
    builds = [e for e in ev if e.get("cat") == "build"]
    assert [(e["name"], e["pid"], e["tid"]) for e in builds] == [
        ("pkg.a (compiled)", 1, 1), ("pkg.b (compiled)", 1, 2), ("pkg.a (cached)", 2, 1)
    ]
    a, b = builds[0], builds[1]
    assert a["ph"] == "X" and a["ts"] == 10000.0 and a["dur"] == pytest.approx(1692500.0)
    phases_a = [e for e in ev if e.get("cat") == "phase" and e["tid"] == 1 and e["pid"] == 1]
    assert [e["name"] for e in phases_a] == ["hash", "codegen", "native compile", "load", "precompiled header"]
    assert all(_inside(p, a) for p in phases_a)
    native = next(p for p in phases_a if p["name"] == "native compile")
    pch = next(p for p in phases_a if p["name"] == "precompiled header")
    assert _inside(pch, native)  # clamped into the native phase that built it
    phases_b = [e for e in ev if e.get("cat") == "phase" and e["tid"] == 2]
    assert [e["name"] for e in phases_b] == ["hash", "codegen", "native compile", "load"]
    assert all(p["args"]["approximate"] for p in phases_b) and all(_inside(p, b) for p in phases_b)
    starts = [p["ts"] for p in phases_b]
    assert starts == sorted(starts)  # laid out one after another
    (launch,) = [e for e in ev if e.get("cat") == "launch"]
    assert launch["ph"] == "i" and launch["ts"] == 1703000.0 and launch["args"]["count"] == 20000
    names = {(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {(1, "cold run (sample 1)"), (2, "warm run (sample 1)")}


@pytest.mark.slow
def test_measure_trace_has_a_complete_event_per_compiled_build(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    root = write_app(tmp_path, OPTIONS_APP)
    out, rep = tmp_path / "trace.json", tmp_path / "r.json"
    code = main(["measure", "--samples", "1", "--quiet", "--cwd", str(root), "--json", str(rep), "--trace", str(out),
                 "--", sys.executable, "-m", "app"])
    assert code == 0, capsys.readouterr().err
    report = Report.model_validate_json(rep.read_text())
    trace = json.loads(out.read_text())
    builds = [e for e in trace["traceEvents"] if e.get("cat") == "build" and e["pid"] == 1]
    compiled = [b for b in report.builds if b.status == "compiled"]
    assert len(compiled) == 2
    assert sorted(e["args"]["hash"] for e in builds if e["args"]["status"] == "compiled") == sorted(
        b.hash_short for b in compiled
    )
    for e in builds:
        phases = [p for p in trace["traceEvents"] if p.get("cat") == "phase" and p["pid"] == 1
                  and p["tid"] == e["tid"] and e["ts"] <= p["ts"] <= e["ts"] + e["dur"]]
        assert {"hash", "codegen", "native compile", "load"} <= {p["name"] for p in phases}
        assert all(_inside(p, e) for p in phases) and not any(p["args"].get("approximate") for p in phases)
    assert [e["name"] for e in trace["traceEvents"] if e.get("cat") == "launch"] == ["launch scale", "launch shift"]


def test_trace_option_refuses_stdout_and_the_json_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = ["measure", "--cwd", str(tmp_path), "--quiet"]
    assert main([*base, "--trace", "-", "--", sys.executable, "-c", "1"]) == 2
    assert main([*base, "--json", str(tmp_path / "a.json"), "--trace", str(tmp_path / "a.json"), "--",
                 sys.executable, "-c", "1"]) == 2
    assert main([*base, "--trace", str(tmp_path / "no" / "t.json"), "--", sys.executable, "-c", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(x.startswith("warp-compile: error:") for x in err), err
