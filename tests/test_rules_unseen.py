"""Rules on small projects written here, unlike the bundled fixtures: the rules must generalise from facts."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import wall_of
from warp_compile.probe.diagnose import diagnose_command

GETMODULE_LATE = """\
import warp as wp

wp.config.enable_backward = False

@wp.kernel(module="solver_core")
def relax(x: wp.array(dtype=wp.float32)):
    x[wp.tid()] = x[wp.tid()] * 0.5

@wp.kernel(module="solver_core")
def bias(x: wp.array(dtype=wp.float32)):
    x[wp.tid()] = x[wp.tid()] + 0.25

def main():
    x = wp.ones(64, dtype=wp.float32, device="cpu")
    wp.launch(relax, dim=64, inputs=[x], device="cpu")
    wp.get_module("solver_core").options.update({"mode": "debug"})
    wp.launch(bias, dim=64, inputs=[x], device="cpu")
    print(float(x.numpy().sum()))

main()
"""

TINY_FORWARD = """\
import warp as wp

@wp.kernel
def shade(c: wp.array(dtype=wp.float32), s: float):
    c[wp.tid()] = c[wp.tid()] + s

c = wp.ones(16, dtype=wp.float32, device="cpu")
wp.launch(shade, dim=16, inputs=[c, 0.5], device="cpu")
print(c.numpy()[0])
"""

LOOP_CLOSURES = """\
import warp as wp

wp.set_module_options({"enable_backward": False})

def build(op):
    if op == "add":
        @wp.kernel
        def k_add(a: wp.array(dtype=float)):
            a[wp.tid()] += 1.0
        return k_add
    @wp.kernel
    def k_mul(a: wp.array(dtype=float)):
        a[wp.tid()] *= 3.0
    return k_mul

a = wp.zeros(10, dtype=float, device="cpu")
for op in ("add", "mul"):
    wp.launch(build(op), dim=10, inputs=[a], device="cpu")
print(a.numpy()[0])
"""


def _project(root: Path, source: str) -> Path:
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "__main__.py").write_text(textwrap.dedent(source))
    return root


def _line(source: str, needle: str) -> int:
    return next(i for i, ln in enumerate(source.splitlines(), start=1) if needle in ln)


def _run(tmp_path: Path, source: str):  # type: ignore[no-untyped-def]
    root = _project(tmp_path, source)
    _, d = diagnose_command([sys.executable, "-m", "proj"], root, samples=1)
    return d


@pytest.mark.slow
def test_options_written_after_load_never_arrive(tmp_path):
    d = _run(tmp_path, GETMODULE_LATE)
    found = [f for f in d.findings if f.mechanism == "CS-3"]
    assert len(found) == 1, d.summary
    assert [(loc.file, loc.line) for loc in found[0].locations] == [
        ("proj/__main__.py", _line(GETMODULE_LATE, ".options.update"))
    ]
    assert "never arrive" in found[0].title
    # one small CPU module with the header on: CS-12 may price turning the header off (decided by measurement)
    assert {f.mechanism for f in d.findings} - {"CS-12"} == {"CS-3"}


@pytest.mark.slow
def test_small_forward_only_module_is_not_a_backward_finding(tmp_path):
    d = _run(tmp_path, TINY_FORWARD)
    assert not [f for f in d.findings if f.mechanism == "CS-10"], d.summary
    signal = next(r.signal for r in d.ruled_out if r.mechanism == "CS-10")
    assert "small" in signal and "ms" in signal


@pytest.mark.slow
def test_kernels_created_in_a_loop_after_the_first_launch(tmp_path):
    d = _run(tmp_path, LOOP_CLOSURES)
    assert {f.mechanism for f in d.findings} == {"CS-1"}, d.summary
    f = d.findings[0]
    assert ("proj/__main__.py", _line(LOOP_CLOSURES, "def k_mul")) in {(x.file, x.line) for x in f.locations}
    assert f.estimated_saving_ms and f.estimated_saving_ms > 0


ONE_MODULE_NO_PCH = """\
import warp as wp

wp.config.enable_backward = False
wp.config.use_precompiled_headers = False

@wp.kernel
def bump(x: wp.array(dtype=float)):
    x[wp.tid()] += 1.0

x = wp.zeros(4, dtype=float, device="cpu")
wp.launch(bump, dim=4, inputs=[x], device="cpu")
print(x.numpy()[0])
"""

STAMPED_CACHE = """\
import os, time
import warp as wp

wp.config.enable_backward = False
wp.config.kernel_cache_dir = os.path.join(os.environ["TMPDIR"], f"run-{time.time_ns()}")

@wp.kernel
def twice(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0 * a[wp.tid()]

a = wp.ones(8, dtype=float, device="cpu")
wp.launch(twice, dim=8, inputs=[a], device="cpu")
print(a.numpy()[0])
"""


@pytest.mark.slow
def test_header_off_for_one_small_module_is_the_cheaper_choice(tmp_path):
    """One module with the header already off, the cheaper side of the trade: what is already in effect is no
    finding (issue 16), and CS-12 never advises turning the header back on; it is ruled out with the figures."""
    d = _run(tmp_path, ONE_MODULE_NO_PCH)
    assert not [f for f in d.findings if f.mechanism == "CS-12"], d.summary
    assert any(r.mechanism == "CS-12" for r in d.ruled_out), d.ruled_out


@pytest.mark.slow
def test_timestamped_cache_dir_counts_the_header_every_run_pays(tmp_path):
    root = _project(tmp_path, STAMPED_CACHE)
    report, d = diagnose_command([sys.executable, "-m", "proj"], root, samples=1)
    f = next(f for f in d.findings if f.mechanism == "CS-2")
    assert ("proj/__main__.py", _line(STAMPED_CACHE, "kernel_cache_dir")) in {(x.file, x.line) for x in f.locations}
    warm = report.sample_results[0].warm
    assert warm.compiled == 1 and warm.pch_ms > 0
    assert f.estimated_saving_ms == pytest.approx(warm.module_ms + warm.pch_ms, rel=0.01)


MODE_SWITCH_SCRIPT = """\
import warp as wp

wp.config.enable_backward = False

@wp.kernel
def gen(a: wp.array(dtype=wp.float32)):
    a[wp.tid()] = float(wp.tid())

@wp.kernel
def acc(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    wp.atomic_add(out, 0, a[wp.tid()])

def setup_precision(high):
    if high:
        wp.set_module_options({"mode": "debug"})

a = wp.zeros(32, dtype=wp.float32, device="cpu")
out = wp.zeros(1, dtype=wp.float32, device="cpu")
wp.launch(gen, dim=32, inputs=[a], device="cpu")
setup_precision(True)
wp.launch(acc, dim=32, inputs=[a, out], device="cpu")
print(out.numpy())
"""


@pytest.mark.slow
def test_late_mode_change_in_a_script_counts_the_header_it_superseded(tmp_path):
    """A plain script (`python run.py`): the mode switch rebuilds the module and builds a second header."""
    (tmp_path / "run.py").write_text(MODE_SWITCH_SCRIPT)
    report, d = diagnose_command([sys.executable, "run.py"], tmp_path, samples=1)
    assert len(report.pch) == 2  # release and debug headers
    f = next(f for f in d.findings if f.mechanism == "CS-3")
    assert [(x.file, x.line) for x in f.locations] == [("run.py", _line(MODE_SWITCH_SCRIPT, '"mode": "debug"'))]
    # the fix removes the release build and its header; the debug build and header remain
    change = d.hash_changes[0]
    released = next(b.ms for b in report.builds if b.seq == change.from_seq)
    superseded = next(p.ms for p in report.pch if "dbg" not in p.file)
    assert wall_of(report, f) == pytest.approx(released + superseded, abs=1.0)
    assert '{"mode": "debug"}' in f.fix


@pytest.mark.slow
def test_small_modules_each_launching_their_own_kernel_from_one_step(tmp_path):
    """Three one-kernel modules, each launched from a helper in its own file, all driven by one loop."""
    pkg = tmp_path / "steps"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in ("alpha", "beta", "gamma"):
        (pkg / f"{name}.py").write_text(
            "import warp as wp\nwp.set_module_options({'enable_backward': False})\n\n@wp.kernel\n"
            f"def k_{name}(a: wp.array(dtype=float)):\n    a[wp.tid()] = a[wp.tid()] * 1.5 + 0.25\n\n"
            f"def run(a):\n    wp.launch(k_{name}, dim=a.shape[0], inputs=[a], device='cpu')\n"
        )
    (pkg / "__main__.py").write_text(
        "import warp as wp\nfrom . import alpha, beta, gamma\n\na = wp.ones(32, dtype=float, device='cpu')\n"
        "for step in (alpha, beta, gamma):\n    step.run(a)\nprint(a.numpy()[0])\n"
    )
    _, d = diagnose_command([sys.executable, "-m", "steps"], tmp_path, samples=1)
    by = {f.mechanism: f for f in d.findings}
    assert set(by) <= {"CS-4", "CS-12"} and "CS-4" in by, d.summary
    assert {(x.file, x.line) for x in by["CS-4"].locations} == {
        (f"steps/{n}.py", 5) for n in ("alpha", "beta", "gamma")
    }
    if "CS-12" in by:  # the header pays only for the three modules: its merge is the edit CS-4's advice describes
        assert by["CS-4"].plan_with == "CS-12" and by["CS-4"].edits == by["CS-12"].edits
        assert {(e.file, e.start_line) for e in by["CS-12"].edits if e.file != "steps/__main__.py"} == {
            ("steps/beta.py", 4), ("steps/gamma.py", 4)}
