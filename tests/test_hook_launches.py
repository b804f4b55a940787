"""Launch records: one per (kernel, call site, module exec) with exact counts, whatever the interleaving.

The hook counts repeats by where they come from and reads `launch`'s locals only for some launches (a place's first
_READ_FIRST, every launch of a place whose reads disagreed, then one in ~120), so a launch-bound loop costs little;
these tests check that the aggregated counts and readable fields stay right on both supported Warp versions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import interpreters as _interpreters
from tests.test_measure import line_of, write_app
from warp_compile.probe.measure import measure


def _read_first() -> int:
    """The hook's _READ_FIRST, read from its source (the hook is a file run inside the app, not a module here)."""
    tree = ast.parse((Path(__file__).resolve().parents[1] / "probe" / "hook.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            names = [getattr(t, "id", "") for t in node.targets[0].elts]
            if "_READ_FIRST" in names:
                return ast.literal_eval(node.value)[names.index("_READ_FIRST")]
    raise AssertionError("no _READ_FIRST in probe/hook.py")


LOOP_APP = """\
from typing import Any

import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] * 2.0

@wp.kernel
def shift(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

@wp.kernel
def fill(a: wp.array(dtype=Any), v: Any):
    i = wp.tid()
    a[i] = v

a = wp.zeros(8, dtype=wp.float32, device="cpu")
b = wp.zeros(4, dtype=wp.float64, device="cpu")
for k in range(300):
    wp.launch(scale, dim=8, inputs=[a], device="cpu")
    wp.launch(shift, dim=8, inputs=[a], device="cpu")
    if k % 3 == 0:
        wp.launch(fill, dim=8, inputs=[a, wp.float32(1.0)], device="cpu")
        wp.launch(fill, dim=4, inputs=[b, wp.float64(2.0)], device="cpu")
wp.synchronize()
print("sum", float(a.numpy().sum()))
"""


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_interleaved_launches_aggregate_with_exact_counts(python, tmp_path):
    root = write_app(tmp_path, LOOP_APP)
    report = measure([python, "-m", "app"], root, samples=1)
    assert report.hook.mode == "wrap" and not report.hook.errors
    got = [(lc.kernel, lc.site.line, lc.dim, lc.dtypes, lc.count) for lc in report.launches]
    fill = line_of(LOOP_APP, "wp.launch(fill, dim=8")
    assert got == [
        ("scale", line_of(LOOP_APP, "wp.launch(scale"), [8], ["array[float32;1d]"], 300),
        ("shift", line_of(LOOP_APP, "wp.launch(shift"), [8], ["array[float32;1d]"], 300),
        ("fill", fill, [8], ["array[float32;1d]", "float32"], 100),
        ("fill", fill + 1, [4], ["array[float64;1d]", "float64"], 100),
    ]
    assert report.launch_count == 800 and not report.launches_truncated
    # the warm run counts the same launches
    assert report.sample_results[0].warm.launches == 800
    assert all(lc.first_ms is not None and lc.first_ms > 0 for lc in report.launches)


READING_APP = """\
import warp as wp

@wp.kernel
def steady(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

@wp.kernel
def maybe(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32)):
    i = wp.tid()
    if b:
        a[i] = a[i] + b[i]

def make_scale(factor: float, tag: str):
    @wp.kernel
    def scale(a: wp.array(dtype=wp.float32)):
        i = wp.tid()
        a[i] = a[i] * factor
    return scale

a = wp.zeros(16, dtype=wp.float32, device="cpu")
b = wp.ones(16, dtype=wp.float32, device="cpu")
half = make_scale(0.5, "half")
for k in range(900):
    wp.launch(steady, dim=16, inputs=[a], device="cpu")
    wp.launch(maybe, dim=8 if k % 2 else 16, inputs=[a, b if k % 3 else None], device="cpu")
    wp.launch(half, dim=16 if k < 700 else 4, inputs=[a], device="cpu")
wp.synchronize()
print("sum", float(a.numpy().sum()))
"""


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_records_fix_and_the_rules_read_survive_launches_counted_unread(python, tmp_path):
    """Issue 41: the hook reads `launch`'s frame only for some launches of a place. What `fix` and the rules read
    stays what reading every launch gives: a steady place's one record and count (900 launches, most unread), a
    place whose dim and argument types change from the start split exactly (dim, None against an array), a
    place that changes after the first reads split with the total exact, each record's first-launch fields, and
    the frames and arguments of the call that made the factory kernel."""
    root = write_app(tmp_path, READING_APP)
    report = measure([python, "-m", "app"], root, samples=1)
    assert report.hook.mode == "wrap" and not report.hook.errors
    steady, maybe, half = (line_of(READING_APP, f"wp.launch({n}") for n in ("steady", "maybe", "half"))
    got = [(lc.kernel, lc.site.line, lc.dim, lc.dtypes, lc.adjoint, lc.count) for lc in report.launches]
    arr, none = "array[float32;1d]", "None"
    expect_maybe: dict[tuple[int, str], int] = {}
    for k in range(900):
        key = (8 if k % 2 else 16, arr if k % 3 else none)
        expect_maybe[key] = expect_maybe.get(key, 0) + 1
    assert got[0] == ("steady", steady, [16], [arr], False, 900)
    assert [(g[2][0], g[3][1]) for g in got if g[0] == "maybe"] == list(expect_maybe)  # first-seen order
    assert [g[5] for g in got if g[0] == "maybe"] == list(expect_maybe.values())
    assert all(g[1] == maybe and g[3][0] == arr for g in got if g[0] == "maybe")
    scaled = [g for g in got if g[0].endswith("scale")]
    assert [(g[1], g[2]) for g in scaled] == [(half, [16]), (half, [4])]
    assert sum(g[5] for g in scaled) == 900 and 700 <= scaled[0][5] < 700 + 61
    assert report.launch_count == 2700 and report.sample_results[0].warm.launches == 2700
    made = [c for c in report.kernel_creations if c.key.endswith("scale")]
    assert [(c.function, c.at_import, c.made_by) for c in made] == [("make_scale", False, "kernel")]
    assert made[0].args["factor"] == {"kind": "float", "text": "0.5"}
    assert made[0].args["tag"] == {"kind": "str", "text": "'half'"}
    assert made[0].caller is not None and made[0].caller.line == line_of(READING_APP, "half = make_scale")
    # and the cheap path ran on real Warp: the exit event says most launches were counted without reading `launch`'s
    # frame, and that one place (the factory kernel's dim) changed after its first reads
    import json
    import subprocess

    from warp_compile.probe.sandbox import Sandbox

    with Sandbox() as box:
        events = box.root / "events.jsonl"
        subprocess.run([python, "-m", "app"], cwd=root, env=box.env(events), check=True, capture_output=True)
        exits = [e for e in map(json.loads, events.read_text().splitlines()) if e["kind"] == "exit"]
    assert len(exits) == 1 and exits[0]["launch_total"] == 2700
    reading = exits[0]["launch_reading"]
    # the steady place after its first reads, the factory kernel's until its dim changed at launch 700
    first = _read_first()
    assert reading["late_changes"] == 1 and reading["unread"] > (900 - first + 700 - first) * 0.9, reading
