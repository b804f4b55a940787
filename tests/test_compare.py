"""`compare` on synthetic reports: verdict logic, equivalence, loading errors, the CLI and the interleaved driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from warp_compile.cli import main
from warp_compile.probe import stats
from warp_compile.probe.compare import check_equivalence, compare, interleaved_compare
from warp_compile.probe.errors import ReportError
from warp_compile.probe.models import Build, HookInfo, Launch, Report, RunResult, SampleResult, Site, WarningCode
from warp_compile.probe.models.comparison import EXIT_CODES, Comparison
from warp_compile.probe.render.comparison import render_comparison as render_text

load_report = Report.load


def codes(c: Comparison) -> list[WarningCode]:
    return [w.code for w in c.warnings]

# ----------------------------------------------------------------------------------------------------------------
# Synthetic reports


def launch(kernel="scale", module="app", dim=(1024,), dtypes=("array(float32)", "float32"), count=1, **kw) -> Launch:
    return Launch(
        kernel=kernel,
        module=module,
        dim=list(dim),
        device=kw.pop("device", "cpu"),
        dtypes=list(dtypes),
        count=count,
        site=Site(file="/src/app.py", line=kw.pop("line", 10)),
        **kw,
    )


DEFAULT_LAUNCHES = [launch("init", count=1), launch("scale", count=50), launch("reduce", dim=(1,), count=1)]


def build(module="app", hsh="aaaaaaaa1111", status="compiled", ms=900.0, **kw) -> Build:
    return Build(
        seq=kw.pop("seq", 0),
        module=module,
        hash=hsh,
        hash_short=hsh[:8],
        device=kw.pop("device", "cpu"),
        status=status,
        ms=ms,
        source_bytes=kw.pop("source_bytes", 40_000),
        **kw,
    )


def report(
    *,
    elapsed=(3000.0, 3020.0, 2990.0),
    cold=None,
    warm=(0.4, 0.5, 0.3),
    launches=None,
    builds=None,
    warm_builds=None,
    failed=0,
    source_bytes=80_000,
    identities=None,
    warm_compiled=0,
    **kw,
) -> Report:
    elapsed = list(elapsed)
    cold = list(cold) if cold is not None else [e * 0.97 for e in elapsed]
    warm = list(warm)
    builds = builds if builds is not None else [build("app"), build("lib", "bbbbbbbb2222", seq=1)]
    warm_builds = warm_builds if warm_builds is not None else []
    n = len(elapsed)
    samples = [
        SampleResult(
            index=i,
            ok=True,
            cold=RunResult(
                phase="cold", wall_ms=1500 + elapsed[i], exit_code=0, module_ms=cold[i], compiled=len(builds)
            ),
            warm=RunResult(phase="warm", wall_ms=1500.0, exit_code=0, module_ms=warm[i], compiled=warm_compiled),
        )
        for i in range(n)
    ]
    samples += [
        SampleResult(
            index=n + j,
            ok=False,
            cold=RunResult(phase="cold", wall_ms=100.0, exit_code=1, stderr_tail="Traceback ..."),
            failure="exit code 1",
        )
        for j in range(failed)
    ]
    launches = DEFAULT_LAUNCHES if launches is None else launches
    fields = dict(
        command=["python", "app.py"],
        cwd="/src",
        warp_version="1.19.0",
        python="3.12.3",
        platform="Linux-6.8",
        machine="x86_64",
        samples=n + failed,
        failed_samples=failed,
        reference_sample=0,
        compile_elapsed_ms=stats.stat_of(elapsed),
        cold_module_ms=stats.stat_of(cold),
        warm_module_ms=stats.stat_of(warm),
        cold_wall_ms=stats.stat_of([1500 + e for e in elapsed]),
        warm_wall_ms=stats.stat_of([1500.0] * n),
        generated_source_bytes=source_bytes,
        identities=identities if identities is not None else len({(b.module, b.hash) for b in builds}),
        modules=len({b.module for b in builds}),
        builds=builds,
        warm_builds=warm_builds,
        launches=launches,
        launch_count=sum(x.count for x in launches),
        sample_results=samples,
        hook=HookInfo(hook_version="1", mode="wrap"),
    )
    fields.update(kw)
    return Report(**fields)


def write(path: Path, r: Report | dict | str) -> Path:
    if isinstance(r, Report):
        path.write_text(r.model_dump_json(indent=1))
    elif isinstance(r, dict):
        path.write_text(json.dumps(r))
    else:
        path.write_text(r)
    return path


# ----------------------------------------------------------------------------------------------------------------
# Verdicts


def test_churn_fix_is_improved():
    before = report(
        elapsed=(3120.0, 3125.0, 3115.0),
        builds=[build("app", "aaaa0001"), build("app", "aaaa0002", seq=1), build("lib", "bbbb0001", seq=2)],
        source_bytes=120_000,
    )
    after = report(
        elapsed=(1450.0, 1470.0, 1440.0),
        builds=[build("app", "aaaa0002"), build("lib", "bbbb0001", seq=1)],
        source_bytes=80_000,
    )
    c = compare(before, after)
    assert c.verdict == "IMPROVED" and c.exit_code == 0
    assert c.headline == "compile_elapsed"
    assert c.equivalence.status == "equivalent"
    el = c.clock("compile_elapsed")
    assert el.judged == "improved" and el.band_ms == pytest.approx(31.2)
    assert c.structure.identities.before == 3 and c.structure.identities.after == 2
    app = next(r for r in c.module_hashes if r.module == "app")
    assert app.changed and app.before_hashes == ["aaaa0001", "aaaa0002"] and app.after_hashes == ["aaaa0002"]
    assert not next(r for r in c.module_hashes if r.module == "lib").changed
    text = render_text(c)
    first = text.splitlines()[0]
    assert first.startswith("IMPROVED: compile elapsed 3,120 -> 1,450 ms (-53.5%, band ±31 ms, 95% interval -1,701 to "
                            "-1,633 ms, -54.5% to -52.3% of before).")
    # the share is the same interval over the before arm's median (3,120 ms)
    iv = el.interval
    assert iv.low_pct == pytest.approx(100 * iv.low_ms / 3120.0, abs=1e-3)
    assert iv.high_pct == pytest.approx(100 * iv.high_ms / 3120.0, abs=1e-3)


def test_dropped_launch_is_invalid():
    before = report()
    after = report(launches=[launch("init"), launch("scale", count=49), launch("reduce", dim=(1,))])
    c = compare(before, after)
    assert c.verdict == "INVALID" and c.exit_code == 1
    d = c.equivalence.first_divergence
    assert c.equivalence.status == "changed"
    assert d.index == 50  # init, then 49 scale launches match; position 50 is reduce vs scale
    assert "dim" in d.fields
    assert c.equivalence.before_launches == 52 and c.equivalence.after_launches == 51
    assert "workload changed" in c.reason


def test_dropped_last_launch_is_invalid():
    c = compare(report(), report(launches=DEFAULT_LAUNCHES[:2]))
    assert c.verdict == "INVALID"
    d = c.equivalence.first_divergence
    assert d.index == 51 and d.after is None and d.before.kernel == "reduce"
    assert "AFTER run has no launch here" in d.description


@pytest.mark.parametrize(
    "change,field",
    [
        ({"dtypes": ("array(float64)", "float64")}, "dtypes"),
        ({"device": "cuda:0"}, "device"),
        ({"block_dim": 128}, "block_dim"),
        ({"adjoint": True}, "adjoint"),
        ({"dim": (512,)}, "dim"),
    ],
)
def test_each_launch_field_is_part_of_the_workload(change, field):
    after = report(launches=[launch("init"), launch("scale", count=50, **change), launch("reduce", dim=(1,))])
    c = compare(report(), after)
    assert c.verdict == "INVALID"
    assert c.equivalence.first_divergence.fields == [field]
    assert c.equivalence.first_divergence.index == 1


def test_renamed_kernel_is_preserved_and_listed():
    after = report(
        launches=[launch("init"), launch("scale_kernel", module="app_kernels", count=50), launch("reduce", dim=(1,))]
    )
    c = compare(report(), after)
    assert c.equivalence.status == "equivalent"
    assert c.verdict != "INVALID"
    assert [(r.before, r.after, r.launches) for r in c.equivalence.renames] == [("scale", "scale_kernel", 50)]
    assert "renamed: scale -> scale_kernel (module app -> app_kernels), 50 launches" in render_text(c)


def test_run_length_encoding_differences_do_not_matter():
    split = [launch("init"), launch("scale", count=20), launch("scale", count=30), launch("reduce", dim=(1,))]
    eq = check_equivalence(report(), report(launches=split))
    assert eq.status == "equivalent" and eq.checked_launches == 52 and not eq.renames


def test_scheduling_only_identical_work_is_judged_on_elapsed():
    # overlapped builds: the summed module clock rises 25 %, but the work is identical and elapsed fell
    before = report(elapsed=(3000.0, 3010.0, 2995.0), cold=(2900.0, 2910.0, 2890.0))
    after = report(elapsed=(1900.0, 1920.0, 1890.0), cold=(3600.0, 3650.0, 3620.0))
    c = compare(before, after)
    assert c.structure.identical_work
    assert c.verdict == "IMPROVED"
    cold = c.clock("cold_module")
    assert cold.outcome == "regressed" and not cold.decisive
    assert "not judged because the work is identical" in c.reason
    assert "the difference is scheduling" in c.reason


def test_identical_work_with_summed_clock_up_and_elapsed_flat_is_inconclusive_not_regression():
    before = report(elapsed=(3000.0, 3010.0, 2995.0), cold=(2900.0, 2910.0, 2890.0))
    after = report(elapsed=(3005.0, 2998.0, 3012.0), cold=(3600.0, 3650.0, 3620.0))
    c = compare(before, after)
    assert c.verdict == "INCONCLUSIVE" and c.exit_code == 0
    assert "inside the noise band of every clock" in c.reason


def test_changed_work_with_summed_clock_up_is_a_regression():
    before = report(elapsed=(3000.0, 3010.0, 2995.0), cold=(2900.0, 2910.0, 2890.0))
    after = report(
        elapsed=(3005.0, 2998.0, 3012.0),
        cold=(3600.0, 3650.0, 3620.0),
        builds=[build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)],
    )
    c = compare(before, after)
    assert not c.structure.identical_work
    assert c.verdict == "REGRESSION" and c.exit_code == 1
    assert "cold module work rose" in c.reason


def test_elapsed_regression():
    c = compare(report(), report(elapsed=(3400.0, 3420.0, 3390.0)))
    assert c.verdict == "REGRESSION"
    assert c.reason.startswith("compile elapsed rose 3,000 -> 3,400 ms (+13.3%), beyond its ±30 ms band")


def test_cache_fix_is_improved_through_the_warm_repeat():
    # a cache-destroying app: every warm run recompiles (about 1,845 ms); the fix keeps the cache
    builds = [build("app"), build("lib", "bbbbbbbb2222", seq=1)]
    before = report(
        elapsed=(40.0, -20.0, 15.0),  # cold - warm: both runs compiled, so near zero
        cold=(1850.0, 1840.0, 1845.0),
        warm=(1845.0, 1850.0, 1838.0),
        warm_builds=[build("app", seq=0), build("lib", "bbbbbbbb2222", seq=1)],
        warm_compiled=2,
        builds=builds,
        warm_wall_ms=stats.stat_of([3350.0, 3345.0, 3340.0]),  # the repeat run recompiles: what every run waits
    )
    after = report(
        elapsed=(1830.0, 1850.0, 1842.0),
        cold=(1852.0, 1838.0, 1846.0),
        warm=(2.0, 2.1, 1.9),
        warm_builds=[build("app", status="cached", ms=2.0), build("lib", "bbbbbbbb2222", status="cached", ms=0.1)],
        builds=builds,
        warm_wall_ms=stats.stat_of([1502.0, 1500.0, 1499.0]),
    )
    c = compare(before, after)
    assert c.verdict == "IMPROVED", c.reason
    # the issue: a cache-reuse fix is about the repeat run's wall time (header rebuilds included)
    assert c.headline == "warm_wall"
    assert c.clock("warm_repeat").judged == "improved"
    assert c.clock("warm_wall").judged == "improved" and c.clock("warm_wall").decisive
    el = c.clock("compile_elapsed")
    assert not el.decisive and "warm run compiled" in el.note
    assert "not a compile time" in el.not_a_time
    assert c.structure.warm_compiled_events.before == 2 and c.structure.warm_compiled_events.after == 0
    text = render_text(c)
    assert text.startswith("IMPROVED: warm wall 3,345 -> 1,500 ms (-55.2%")
    assert "-20" not in text.split("Structure")[0]  # cold - warm is never shown as a (negative) time


def test_broken_cache_is_a_regression_on_counts():
    # baseline warm repeat is below the timing floor: judged on compiled events in the warm run
    after = report(warm=(3.0, 4.0, 3.5), warm_builds=[build("app")], warm_compiled=1)
    c = compare(report(), after)
    warm = c.clock("warm_repeat")
    assert warm.judged == "counts" and warm.outcome == "regressed"
    assert (warm.counts_before, warm.counts_after) == (0, 1)
    assert c.verdict == "REGRESSION"


def test_tiny_clocks_with_equal_counts_are_inconclusive():
    before = report(elapsed=(2.0, 3.0, 2.5), cold=(2.0, 2.2, 2.1))
    after = report(elapsed=(4.0, 3.0, 3.5), cold=(3.0, 3.2, 3.1))
    c = compare(before, after)
    assert c.clock("compile_elapsed").judged == "counts"
    assert c.clock("compile_elapsed").delta_pct is None
    assert c.verdict == "INCONCLUSIVE"


def test_inside_every_band_is_inconclusive_said_plainly():
    c = compare(report(), report(elapsed=(3010.0, 3000.0, 3025.0)))
    assert c.verdict == "INCONCLUSIVE" and c.exit_code == 0
    assert "inside the noise band of every clock" in c.reason
    assert render_text(c).startswith("INCONCLUSIVE: compile elapsed 3,000 -> 3,010 ms")


def test_band_uses_baseline_mad_when_noisy():
    before = report(elapsed=(3000.0, 3300.0, 2700.0))  # MAD 300 -> band 600
    c = compare(before, report(elapsed=(2500.0, 2550.0, 2450.0)))
    assert c.clock("compile_elapsed").band_ms == 600.0
    assert c.verdict == "INCONCLUSIVE"


def test_failed_candidate_samples_are_invalid():
    c = compare(report(), report(elapsed=(1000.0, 1000.0, 1000.0), failed=1))
    assert c.verdict == "INVALID" and "1 of 4 AFTER samples failed" in c.reason


def test_candidate_build_error_is_invalid():
    after = report(builds=[build("app"), build("lib", "bbbbbbbb2222", status="error", error="clang: boom\nmore")])
    c = compare(report(), after)
    assert c.verdict == "INVALID"
    assert "build error" in c.reason and "clang: boom" in c.reason


def test_no_launches_on_either_side_is_unverified_but_clocks_reported():
    c = compare(report(launches=[]), report(launches=[], elapsed=(1000.0, 1010.0, 990.0)))
    assert c.verdict == "UNVERIFIED" and c.exit_code == 0
    assert c.equivalence.status == "unverified"
    assert "the clocks alone say IMPROVED" in c.reason
    assert c.clock("compile_elapsed").judged == "improved"


def test_launches_lost_by_a_hook_that_did_not_run_are_unverified_not_invalid():
    after = report(launches=[], hook=HookInfo(mode="none"))
    assert compare(report(), after).verdict == "UNVERIFIED"


def test_all_launches_dropped_is_invalid():
    assert compare(report(), report(launches=[])).verdict == "INVALID"


def test_truncated_launch_lists_compare_prefix_and_totals():
    before = report(launch_count=5000, launches_truncated=True)
    after_same = report(launch_count=5000, launches_truncated=True)
    c = compare(before, after_same)
    assert c.equivalence.status == "equivalent"
    assert "truncated" in c.equivalence.note and codes(c) == [WarningCode.LAUNCH_PREFIX_CHECKED]
    assert c.warnings[0].params == {"checked": c.equivalence.checked_launches, "total": 5000}
    assert c.warnings[0].message == c.equivalence.note  # the note and the warning say the same
    after_fewer = report(launch_count=4999, launches_truncated=True)
    assert compare(before, after_fewer).verdict == "INVALID"


def test_warnings_for_different_command_version_machine():
    after = report(command=["python", "other.py"], warp_version="1.18.0", machine="aarch64", python="3.11.9")
    c = compare(report(), after)
    assert codes(c) == [WarningCode.DIFFERENT_COMMANDS] + [WarningCode.DIFFERENT_SETUP] * 3
    assert [w.params["field"] for w in c.warnings[1:]] == ["warp_version", "python", "machine"]
    text = " | ".join(w.message for w in c.warnings)
    assert "different commands" in text
    assert "Warp versions: 1.19.0 vs 1.18.0" in text
    assert "machines" in text and "Python" in text
    assert c.verdict == "INCONCLUSIVE"  # a warning, not a verdict


def test_few_samples_warn():
    c = compare(report(elapsed=(3000.0, 3010.0)), report())
    few = [w for w in c.warnings if w.code == WarningCode.FEW_SAMPLES]
    assert [w.params for w in few] == [{"side": "BEFORE", "n": 2}]
    assert "only 2 successful samples" in few[0].message


def test_json_and_text_come_from_one_model():
    c = compare(report(), report(elapsed=(1000.0, 1010.0, 990.0)))
    again = Comparison.model_validate_json(c.model_dump_json())
    assert again == c
    assert render_text(again) == render_text(c)


# ----------------------------------------------------------------------------------------------------------------
# Loading: every unusable input is one line, exit 2


def _bad_inputs(tmp_path: Path) -> dict[str, Path]:
    good = report().model_dump(mode="json")
    full = json.dumps(good)
    other_version = dict(good, schema_version=2)
    wrong_typed = dict(good, samples="three")
    return {
        "missing": tmp_path / "nope.json",
        "directory": tmp_path,
        "not json": write(tmp_path / "notjson.json", "hello, world"),
        "truncated": write(tmp_path / "trunc.json", full[: len(full) // 2]),
        "empty": write(tmp_path / "empty.json", ""),
        "array": write(tmp_path / "array.json", "[1, 2, 3]"),
        "other kind": write(tmp_path / "kind.json", {"kind": "something-else", "schema_version": 1}),
        "no kind": write(tmp_path / "nokind.json", {"schema_version": 1, "command": []}),
        "comparison": write(tmp_path / "cmp.json", compare(report(), report()).model_dump(mode="json")),
        "other version": write(tmp_path / "v2.json", other_version),
        "wrong typed": write(tmp_path / "typed.json", wrong_typed),
        "binary": tmp_path / "bin.json",
    }


@pytest.mark.parametrize(
    "case,expect",
    [
        ("missing", "no such file"),
        ("directory", "is a directory"),
        ("not json", "not valid JSON"),
        ("truncated", "truncated JSON"),
        ("empty", "empty file"),
        ("array", "JSON array"),
        ("other kind", "kind 'something-else'"),
        ("no kind", "no 'kind' field"),
        ("comparison", "a comparison result"),
        ("other version", "schema_version 2"),
        ("wrong typed", "samples: Input should be a valid integer"),
        ("binary", "not UTF-8"),
    ],
)
def test_unusable_reports_exit_2_with_one_line(tmp_path, capsys, case, expect):
    paths = _bad_inputs(tmp_path)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00binary")
    bad = paths[case]
    with pytest.raises(ReportError) as err:
        load_report(bad)
    assert expect in str(err.value)
    good = write(tmp_path / "good.json", report())
    for argv in (["compare", str(bad), str(good)], ["compare", str(good), str(bad)]):
        rc = main(argv)
        out, errtext = capsys.readouterr()
        assert rc == 2
        assert out == ""
        assert errtext.count("\n") == 1 and errtext.startswith("warp-compile: error: ")
        assert expect in errtext and "Traceback" not in errtext


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["compare"], "expected two reports"),
        (["compare", "a.json"], "expected two reports"),
        (["compare", "a.json", "b.json", "--before-cwd", "."], "not both"),
        (["compare", "--before-cwd", "."], "needs both"),
        (["compare", "--before-cwd", ".", "--after-cwd", "."], "command to measure"),
        (["compare", "a.json", "b.json", "--", "python", "x.py"], "needs --before-cwd"),
        (["compare", "--before-cwd", "/nonexistent-dir", "--after-cwd", ".", "--", "python"], "not a directory"),
        (["compare", "a.json", "b.json", "--until-decided"], "need --before-cwd"),
        (["compare", "--before-cwd", ".", "--after-cwd", ".", "--max-samples", "9", "--", "x"], "only applies"),
        (["compare", "--before-cwd", ".", "--after-cwd", ".", "--samples", "0", "--", "x"], "at least 1"),
    ],
)
def test_usage_errors_exit_2(capsys, argv, expect):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expect in err


def test_cli_reports_exit_codes_and_json(tmp_path, capsys):
    b = write(tmp_path / "before.json", report())
    # the change rebuilt module app; lib is identical in all three reports, the yardstick of the machine's drift
    changed = [build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)]
    better = write(tmp_path / "better.json", report(elapsed=(1000.0, 1010.0, 990.0), builds=changed))
    worse = write(tmp_path / "worse.json", report(elapsed=(4000.0, 4010.0, 3990.0), builds=changed))
    out_json = tmp_path / "cmp.json"
    assert main(["compare", str(b), str(better), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("IMPROVED: compile elapsed")
    data = json.loads(out_json.read_text())
    assert data["verdict"] == "IMPROVED" and data["kind"] == "warp-compile-comparison"
    assert data["before_label"] == str(b)

    assert main(["compare", str(b), str(worse), "--json", "-"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] == "REGRESSION"
    assert captured.err.startswith("REGRESSION:")

    assert main(["compare", str(b), str(b)]) == 0
    assert capsys.readouterr().out.startswith("INCONCLUSIVE")


def test_cli_unwritable_json_is_one_line(tmp_path, capsys):
    b = write(tmp_path / "before.json", report())
    rc = main(["compare", str(b), str(b), "--json", str(tmp_path / "no" / "such" / "dir.json")])
    assert rc == 2
    assert "cannot write" in capsys.readouterr().err


def test_real_subprocess_damaged_report_one_line_no_traceback(tmp_path):
    good = write(tmp_path / "good.json", report())
    damaged = write(tmp_path / "damaged.json", good.read_text()[:200])
    proc = subprocess.run(
        [sys.executable, "-m", "warp_compile", "compare", str(good), str(damaged)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert "truncated JSON" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------------------------------------------
# Interleaved driver with a mock executor (hyperfine-style): no processes, deterministic "timings"


class MockExecutor:
    """Stands in for `measure.run_sample` / `measure.build_report`; records the order in which arms ran."""

    def __init__(self, profiles: dict[str, dict]):
        self.profiles = profiles  # cwd name -> {"elapsed": [..], "launches": [...], "fail_at": {i}}
        self.calls: list[tuple[str, int]] = []

    def run_sample(self, command, cwd, index, timeout_s=900.0, progress=None):
        self.calls.append((Path(cwd).name, index))
        p = self.profiles[Path(cwd).name]
        seq = p["elapsed"]
        return SimpleNamespace(elapsed=seq[index % len(seq)], ok=index not in p.get("fail_at", ()))

    def build_report(self, command, cwd, samples, label="", requested=None):
        p = self.profiles[Path(cwd).name]
        ok = [s for s in samples if s.ok]
        return report(
            elapsed=[s.elapsed for s in ok] or [],
            warm=[0.4] * len(ok),
            failed=len(samples) - len(ok),
            launches=p.get("launches"),
            label=label,
        )


def _run(mock, tmp_path, **kw):
    (tmp_path / "A").mkdir(exist_ok=True)
    (tmp_path / "B").mkdir(exist_ok=True)
    messages: list[str] = []
    c = interleaved_compare(
        ["python", "app.py"],
        tmp_path / "A",
        tmp_path / "B",
        progress=messages.append,
        run_sample=mock.run_sample,
        build_report=mock.build_report,
        **kw,
    )
    return c, messages


def test_interleaved_alternates_arms_for_the_requested_pairs(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990]}, "B": {"elapsed": [1500, 1490, 1510]}})
    c, messages = _run(mock, tmp_path, samples=4)
    warmup = [("A", -1), ("B", -1)]  # discarded
    assert mock.calls == warmup + [("A", 0), ("B", 0), ("B", 1), ("A", 1), ("A", 2), ("B", 2), ("B", 3), ("A", 3)]
    assert c.verdict == "IMPROVED"
    assert c.interleaved.pairs == 4 and c.interleaved.decided is None and not c.interleaved.until_decided
    assert c.interleaved.warmup == 1 and "not counted" in messages[0]
    assert "pair 1/4: before" in messages[2] and "pair 2/4: after" in messages[4]
    assert c.before_samples == 4 and c.after_samples == 4


def test_interleaved_without_warmup_starts_with_the_first_pair(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990]}, "B": {"elapsed": [1500, 1490, 1510]}})
    c, messages = _run(mock, tmp_path, samples=2, warmup=0)
    assert mock.calls == [("A", 0), ("B", 0), ("B", 1), ("A", 1)]
    assert c.interleaved.warmup == 0 and "pair 1/2: before" in messages[0]


def test_until_decided_stops_at_four_pairs_on_a_clear_improvement(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990, 3005]}, "B": {"elapsed": [1500, 1490, 1510, 1495]}})
    c, _ = _run(mock, tmp_path, until_decided=True, max_samples=20)
    assert c.interleaved.pairs == 4 and c.interleaved.decided is True
    assert c.verdict == "IMPROVED" and c.interleaved.settled == "IMPROVED" and not c.warnings
    el = next(d for d in c.interleaved.clocks if d.name == "compile_elapsed")
    assert el.outcome == "improved" and el.ci_high_ms < -el.band_ms
    assert "Student-t interval" in c.interleaved.rule
    assert "Interleaved (A B, B A, A B, ..., after 1 discarded warm-up sample(s) per arm): 4 pairs, decided" in (
        render_text(c)
    )


def test_until_decided_noisy_runs_to_max_and_says_so(tmp_path):
    noisy_a = [3000, 3400, 2700, 3300, 2800, 3100]
    noisy_b = [3200, 2750, 3350, 2900, 3050, 2850]
    mock = MockExecutor({"A": {"elapsed": noisy_a}, "B": {"elapsed": noisy_b}})
    c, _ = _run(mock, tmp_path, until_decided=True, max_samples=6)
    assert c.interleaved.pairs == 6 and c.interleaved.decided is False
    assert "the limit of 6 pairs" in c.interleaved.stopped_because
    assert codes(c) == [WarningCode.NOT_SETTLED] and c.interleaved.settled is None
    assert c.verdict == "INCONCLUSIVE"


def test_interleaved_stops_at_once_on_a_changed_workload(tmp_path):
    mock = MockExecutor(
        {"A": {"elapsed": [3000]}, "B": {"elapsed": [1500], "launches": [launch("init"), launch("scale", count=50)]}}
    )
    c, _ = _run(mock, tmp_path, samples=5)
    assert c.verdict == "INVALID" and c.interleaved.pairs == 1
    assert c.interleaved.stopped_because.startswith("INVALID after 1 pair")


def test_interleaved_failed_candidate_sample_is_invalid(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010]}, "B": {"elapsed": [1500], "fail_at": {1}}})
    c, _ = _run(mock, tmp_path, until_decided=True)
    assert c.verdict == "INVALID" and c.interleaved.pairs == 2 and c.interleaved.decided is True


def test_until_decided_respects_samples_as_minimum(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990]}, "B": {"elapsed": [1500, 1490, 1510]}})
    c, _ = _run(mock, tmp_path, until_decided=True, samples=5)
    assert c.interleaved.pairs == 5 and c.interleaved.min_pairs == 5


def test_line_number_shift_in_generated_source_is_still_identical_work():
    # same hashes, 3 bytes of generated source apart (Warp's `<L line>` comments moved): identical work
    before = report(elapsed=(3000.0, 3010.0, 2995.0), cold=(2900.0, 2910.0, 2890.0))
    after = report(elapsed=(3005.0, 2998.0, 3012.0), cold=(3600.0, 3650.0, 3620.0), source_bytes=80_003)
    c = compare(before, after)
    assert c.structure.identical_work and "line numbers" in c.structure.note
    assert c.verdict == "INCONCLUSIVE"
    # a real difference in generated source is not
    far = report(elapsed=(3005.0, 2998.0, 3012.0), cold=(3600.0, 3650.0, 3620.0), source_bytes=90_000)
    assert not compare(before, far).structure.identical_work
    assert compare(before, far).verdict == "REGRESSION"


def test_noise_below_the_floor_with_equal_counts_is_unchanged():
    c = compare(report(warm=(2.7, 2.5, 3.0)), report(warm=(8.4, 9.0, 7.5)))
    warm = c.clock("warm_repeat")
    assert warm.judged == "counts" and warm.outcome == "unchanged"
    assert c.verdict == "INCONCLUSIVE"


def test_below_the_floor_without_counts_uses_the_floor_as_band():
    before = report(warm=(1.0, 1.2, 0.9), sample_results=[], builds=[], identities=0)
    after = report(warm=(40.0, 42.0, 41.0), sample_results=[], builds=[], identities=0)
    warm = compare(before, after).clock("warm_repeat")
    assert warm.counts_before is None and warm.outcome == "regressed"
    assert "the floor serves as the band" in warm.note


def test_warm_repeat_that_compiled_nothing_is_judged_on_counts_even_above_the_floor():
    # seen on a busy machine: 11.0 -> 8.6 ms of cached loads, MAD 0.05 ms; not a compile-time change
    c = compare(report(warm=(11.0, 11.05, 10.95)), report(warm=(8.6, 8.7, 8.5)))
    warm = c.clock("warm_repeat")
    assert warm.judged == "counts" and warm.outcome == "unchanged"
    assert "neither warm run compiled" in warm.note
    assert c.verdict == "INCONCLUSIVE"


def test_band_never_below_the_timing_floor():
    before = report(elapsed=(20.0, 20.05, 19.95), cold=(19.0, 19.05, 18.95))
    c = compare(before, report(elapsed=(17.0, 17.1, 16.9), cold=(16.0, 16.1, 15.9)))
    el = c.clock("compile_elapsed")
    assert el.band_ms == 5.0 and "raised to the 5.0 ms timing floor" in el.note
    assert el.judged == "within band" and c.verdict == "INCONCLUSIVE"


# ----------------------------------------------------------------------------------------------------------------
# Too few samples for a band with spread behind it


def test_identical_work_with_two_samples_a_side_is_inconclusive_not_regression():
    c = compare(report(elapsed=(3000.0, 3004.0)), report(elapsed=(3090.0, 3094.0)))
    assert c.structure.identical_work
    el = c.clock("compile_elapsed")
    assert el.judged == "regressed" and not el.decisive and "2 samples per arm" in el.left_out
    assert c.verdict == "INCONCLUSIVE" and c.exit_code == 0
    assert "is not judged because the work is identical and 2 samples" in c.reason


def test_identical_work_with_three_samples_a_side_still_judges_elapsed():
    c = compare(report(elapsed=(3000.0, 3004.0, 2998.0)), report(elapsed=(3090.0, 3094.0, 3088.0)))
    assert c.clock("compile_elapsed").decisive and c.verdict == "REGRESSION"


def test_one_sample_slower_elapsed_with_fewer_compiles_does_not_outvote_the_structure():
    """One sample each: a rebuild removed, cold module work down, but elapsed up by header jitter."""
    before = report(
        elapsed=(1500.0,),
        cold=(270.0,),
        builds=[build("app", "aaaa0001", ms=130.0), build("app", "aaaa0002", seq=1, ms=140.0)],
    )
    after = report(elapsed=(1560.0,), cold=(140.0,), builds=[build("app", "aaaa0002", ms=140.0)])
    c = compare(before, after)
    el, cold = c.clock("compile_elapsed"), c.clock("cold_module")
    assert el.judged == "regressed" and not el.decisive and "fewer modules compiled" in el.left_out
    assert cold.decisive and cold.outcome == "improved"
    assert c.verdict == "IMPROVED", c.reason


def test_one_sample_slower_with_more_compiles_is_still_a_regression():
    before = report(elapsed=(1500.0,), cold=(140.0,), builds=[build("app", "aaaa0002", ms=140.0)])
    after = report(
        elapsed=(1660.0,),
        cold=(270.0,),
        builds=[build("app", "aaaa0001", ms=130.0), build("app", "aaaa0002", seq=1, ms=140.0)],
    )
    c = compare(before, after)
    assert c.clock("compile_elapsed").decisive and c.verdict == "REGRESSION"


def test_report_missing_a_contract_field_is_damaged(tmp_path):
    data = json.loads(report().model_dump_json())
    del data["compile_elapsed_ms"]
    with pytest.raises(ReportError, match="damaged report \\(missing compile_elapsed_ms\\)"):
        load_report(write(tmp_path / "r.json", data))


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_schema_version_must_be_the_integer_one(tmp_path, version):
    data = json.loads(report().model_dump_json())
    data["schema_version"] = version
    with pytest.raises(ReportError, match="schema_version"):
        load_report(write(tmp_path / "r.json", data))


def test_interleaved_verdict_whose_interval_still_reaches_the_band_is_set_aside(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3005, 2995, 3002]}, "B": {"elapsed": [2900, 3050, 2700, 2950]}})
    c, _ = _run(mock, tmp_path, samples=4, warmup=0)
    assert c.verdict == "INCONCLUSIVE" and c.exit_code == EXIT_CODES["INCONCLUSIVE"]
    assert c.interleaved.by_medians == "IMPROVED" and c.reason.startswith("IMPROVED by the medians only")
    el = next(d for d in c.interleaved.clocks if d.name == "compile_elapsed")
    assert el.outcome == "undecided"
    assert codes(c) == [WarningCode.TENTATIVE] and c.warnings[0].params == {"clocks": ["compile_elapsed"]}
    assert c.warnings[0].message.startswith("tentative: the medians put compile elapsed beyond the band")


def test_interleaved_clear_verdict_is_not_tentative(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990, 3005]}, "B": {"elapsed": [1500, 1490, 1510, 1495]}})
    c, _ = _run(mock, tmp_path, samples=4, warmup=0)
    assert c.verdict == "IMPROVED" and WarningCode.TENTATIVE not in codes(c)


def test_a_paired_share_is_taken_pair_by_pair_so_a_load_that_stretches_a_pair_cancels() -> None:
    """Two pairs run while the machine was twice as busy: every CPU time doubled, the fix's share did not. The ms
    interval carries that spread; the share, each pair's difference over its own before value, does not."""
    from warp_compile.probe.compare.verdict import _interval
    from warp_compile.probe.stats import stat_of

    before = stat_of([1000.0, 2000.0, 1010.0, 1990.0])
    after = stat_of([800.0, 1600.0, 808.0, 1592.0])  # -20% in every pair
    iv = _interval(before, after, True, 0.0, before)
    assert iv is not None and iv.method == "paired t"
    assert iv.high_ms - iv.low_ms > 300.0  # -200 and -400 ms differences: a wide interval in ms
    assert iv.mean_pct == pytest.approx(-20.0) and iv.low_pct == pytest.approx(-20.0, abs=1e-6)
    assert iv.high_pct == pytest.approx(-20.0, abs=1e-6)
    # the values decided on may leave identical work out; the share's denominator is still the whole clock
    basis_b, basis_a = stat_of([500.0, 1000.0, 505.0, 995.0]), stat_of([300.0, 600.0, 303.0, 597.0])
    iv = _interval(basis_b, basis_a, True, 0.0, before)
    assert iv is not None and iv.mean_pct == pytest.approx(-20.0)
    # unpaired: the ms interval over the before median, as before
    iv = _interval(before, after, False, 0.0, before)
    assert iv is not None and iv.mean_pct == pytest.approx(100.0 * iv.mean_ms / 1500.0, abs=1e-3)


def test_a_paired_verdict_whose_medians_moved_the_other_way_says_so_instead_of_fell_up() -> None:
    from warp_compile.probe.compare.verdict import _moved
    from warp_compile.probe.models.comparison import Clock
    from warp_compile.probe.models.report import Stat

    c = Clock(name="compile_cpu", title="compile CPU", before=Stat(median=5050.0), after=Stat(median=5192.0),
              delta_pct=-17.1, band_ms=300.0, judged="improved", outcome="improved")
    text = _moved(c)
    assert "fell by the pairs' mean (-17.1%)" in text and "5,050 -> 5,192" in text and "fell 5,050" not in text
    agree = c.model_copy(update={"after": Stat(median=4200.0)})
    assert _moved(agree).startswith("compile CPU fell 5,050 -> 4,200 ms (-17.1%)")
