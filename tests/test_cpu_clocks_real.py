"""The settings rebuilds at exit (probe/hook_rebuild.py) on a real Warp CPU compile, and what they leave behind.

One cold run of tests/apps/fix_small (one module, two kernels with backward code) with the rebuilds asked for is
shared by the tests: its rebuild record, the hook's exit-work clock, and the sandbox's directories before they are
removed. The assertions are relations that hold on any machine (forward-only is less work than with adjoints, a
module parsing the whole header costs more than one that reads it precompiled), never a figure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from warp_compile.probe.measure import _run_data
from warp_compile.probe.pricing import rebuild_env
from warp_compile.probe.sandbox import Sandbox

pytestmark = pytest.mark.slow

APP = Path(__file__).parent / "apps" / "fix_small"


@pytest.fixture(scope="module")
def rebuilt():  # type: ignore[no-untyped-def]
    with Sandbox() as box:
        out = box.run([sys.executable, "main.py"], APP, 600.0, extra_env=rebuild_env(60))
        data = _run_data("cold", out)
        left = {
            "tmp": sorted(p.name for p in box.tmp.iterdir()),
            "cache": sorted(p.name for p in box.warp_cache.rglob("*") if p.is_dir() and p.name.startswith("wp_")),
        }
    return out, data, left


def test_the_rebuild_prices_forward_only_and_the_header_on_the_building_threads_cpu(rebuilt) -> None:
    out, data, _left = rebuilt
    assert out.exit_code == 0 and not data.events.hook.errors, data.events.hook.errors
    r = data.events.rebuild
    assert r is not None and not r.errors, r
    back = r.steps["backward"].entries
    assert [e.module for e in back] == ["__main__"]
    assert 0 < back[0].changed.cpu_ms < back[0].as_is.cpu_ms  # the adjoint code is work: forward-only is less
    assert back[0].samples == 2  # the limit leaves room: each side is the lesser of two builds
    head = r.steps["header"]
    assert head.entries and head.headers and head.run_headers == 1
    e = head.entries[0]
    assert e.run_header and e.changed.cpu_ms > e.as_is.cpu_ms  # without the header each module parses it whole
    assert head.headers[0].cpu_ms > 0
    assert r.builds >= 7 and r.cpu_ms > 0 and not r.skipped


def test_the_rebuild_runs_outside_the_runs_clocks_and_leaves_nothing_behind(rebuilt) -> None:
    out, data, left = rebuilt
    r = data.events.rebuild
    ev = data.events
    assert ev.exit_work_ms is not None and ev.exit_work_ms >= r.ms  # the bracket holds the whole rebuild
    assert data.result.exit_work_ms == pytest.approx(ev.exit_work_ms, abs=0.01)
    assert data.result.wall_ms == pytest.approx(out.wall_ms - ev.exit_work_ms, abs=0.01)
    assert data.result.cpu_ms == pytest.approx(out.cpu_ms - ev.exit_work_cpu_ms, abs=0.01)
    assert data.result.cpu_ms > 0 and data.result.module_cpu_ms > 0
    # the app's own cache holds the run's module only, and the rebuilds' private directories are gone
    assert len(left["cache"]) == 1, left
    assert not [n for n in left["tmp"] if n.startswith(("warp-compile-rebuild-", "warp-compile-pch-"))], left


@pytest.mark.parametrize(("ask", "why"), [({"limit_s": 0.001}, "over the rebuild limit"),
                                         ({"limit_s": 60, "deadline": 0}, "too close to the run's timeout")])
def test_a_limit_or_a_near_timeout_rebuilds_nothing_and_says_what_it_skipped(ask: dict, why: str) -> None:
    import json

    with Sandbox() as box:
        out = box.run([sys.executable, "main.py"], APP, 600.0, extra_env={"WARP_COMPILE_REBUILD": json.dumps(ask)})
        data = _run_data("cold", out)
    r = data.events.rebuild
    assert out.exit_code == 0 and r is not None
    assert r.builds == 0 and {s.step for s in r.skipped} == {"backward", "header"}
    assert all(s.why == why and s.predicted_ms > 0 for s in r.skipped), r.skipped


def _venv_with_solverlib(where: Path) -> str:
    """A real venv whose site-packages holds tests/apps/solverlib (with its dist-info) and sees this interpreter's
    packages (warp, numpy) through a .pth file: to the app's interpreter solverlib is an installed distribution."""
    import shutil
    import subprocess
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300)
    python = str(where / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "base_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for item in (Path(__file__).parent / "apps" / "solverlib" / "site-packages").iterdir():
        shutil.copytree(item, site / item.name)
    return python


@pytest.mark.heavy
def test_cs10_priced_by_rebuilding_agrees_with_verify_on_an_app_over_an_installed_library(tmp_path: Path) -> None:
    """grid_app's kernels live in the installed solverlib: the rebuild at exit prices CS-10 on the CPU clock, and
    --verify measures the fix at the app's entry point on the same clock; they agree within a quarter (or the
    estimate lies inside the measurement's interval)."""
    import shutil

    from warp_compile.probe.diagnose import diagnose_command
    from warp_compile.probe.fix.verify import verify

    python = _venv_with_solverlib(tmp_path / "venv")
    app = tmp_path / "grid_app"
    shutil.copytree(Path(__file__).parent / "apps" / "solverlib" / "grid_app", app)
    argv = [python, "main.py"]
    _report, d = diagnose_command(argv, app, timeout_s=900, rebuild_limit_s=60)
    cs10 = next(f for f in d.findings if f.mechanism == "CS-10")
    assert cs10.saving_source == "rebuild" and cs10.saving_clock == "compile_cpu", cs10.saving_basis
    assert [e.file for e in cs10.edits] == ["main.py"]
    d = verify(d, argv, app, timeout_s=900)
    cs10 = next(f for f in d.findings if f.mechanism == "CS-10")
    m = cs10.measured
    assert m is not None and m.verdict == "IMPROVED" and m.clock == "compile_cpu", m
    est, got = cs10.estimated_saving_ms, m.saving_ms
    inside = m.saving_low_ms is not None and m.saving_low_ms <= est <= m.saving_high_ms
    assert inside or abs(est - got) <= 0.25 * got, (est, m)
    # both also as shares, each of its own run's compile CPU (what a loaded machine's drift leaves alone)
    assert cs10.estimated_saving_pct is not None and 0 < cs10.estimated_saving_pct < 100, cs10.estimated_saving_pct
    assert m.saving_pct is not None and 0 < m.saving_pct < 100, m


@pytest.mark.heavy
def test_fix_proves_and_writes_both_fixes_of_a_late_option_and_a_late_instance(tmp_path: Path) -> None:
    """tests/apps/late_pair: CS-3 (an option switched on after the first launch) and CS-6 (a float64 instance after
    its module loaded) are each about a small share of the compile; on the CPU clock both are proven and written."""
    import shutil

    from warp_compile.probe.fix.engine import FixOptions, run_fix

    app = tmp_path / "late_pair"
    shutil.copytree(Path(__file__).parent / "apps" / "late_pair", app)
    before = {p.name: p.read_text() for p in (app / "latepair").glob("*.py")}
    result, _d = run_fix([sys.executable, "-m", "latepair"], app, FixOptions(write=True, timeout_s=900))
    proven = {c.key for c in result.candidates if c.improved}
    assert proven == {"CS-3", "CS-6"}, [(c.key, c.verdict, c.verdict_reason) for c in result.candidates]
    assert all(c.clock == "compile_cpu" for c in result.candidates if c.status == "measured")
    assert sorted(result.applied) == ["CS-3", "CS-6"] and result.written
    after = {p.name: p.read_text() for p in (app / "latepair").glob("*.py")}
    assert after != before
