"""Launch records: one per (kernel, call site, module exec) with exact counts, whatever the interleaving.

The hook counts repeats by a cheap signature and reads `launch`'s locals only the first time, so a launch-bound
loop costs little; these tests check that the aggregated counts and readable fields stay right on both
supported Warp versions.
"""

from __future__ import annotations

import pytest

from tests.helpers import interpreters as _interpreters
from tests.test_measure import line_of, write_app
from warp_compile.probe.measure import measure

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
