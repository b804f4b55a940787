"""measure on real Warp CPU compiles: builds, triggers, PCH split, cache facts, sandbox hygiene."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import alive
from warp_compile.cli import main
from warp_compile.probe.measure import measure
from warp_compile.probe.models import WarningCode

OPTIONS_APP = """\
import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] * 2.0

@wp.kernel
def shift(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] + 1.0

a = wp.zeros(8, dtype=wp.float32, device="cpu")
wp.launch(scale, dim=8, inputs=[a], device="cpu")
wp.set_module_options({"fast_math": True})
wp.launch(shift, dim=8, inputs=[a], device="cpu")
print(a.numpy().sum())
"""

CLEAR_APP = """\
import warp as wp

wp.clear_kernel_cache()

@wp.kernel
def bump(a: wp.array(dtype=wp.float32)):
    a[wp.tid()] += 1.0

a = wp.zeros(4, dtype=wp.float32, device="cpu")
wp.launch(bump, dim=4, inputs=[a], device="cpu")
print(a.numpy().sum())
"""

OWN_CACHE_APP = """\
import os, sys
import warp as wp

wp.config.kernel_cache_dir = sys.argv[1]

@wp.kernel
def bump(a: wp.array(dtype=wp.float32)):
    a[wp.tid()] += 1.0

a = wp.zeros(4, dtype=wp.float32, device="cpu")
wp.launch(bump, dim=4, inputs=[a], device="cpu")
"""


def write_app(root: Path, source: str, pkg: str = "app") -> Path:
    (root / pkg).mkdir(parents=True, exist_ok=True)
    (root / pkg / "__init__.py").write_text("")
    (root / pkg / "__main__.py").write_text(textwrap.dedent(source))
    return root


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


def line_of(source: str, needle: str, nth: int = 1) -> int:
    hits = [i for i, ln in enumerate(source.splitlines(), start=1) if needle in ln]
    return hits[nth - 1]


@pytest.fixture(scope="session")
def options_run(tmp_path_factory):
    root = write_app(tmp_path_factory.mktemp("opts"), OPTIONS_APP)
    before = tree_digest(root)
    report = measure([sys.executable, "-m", "app"], root, samples=1)
    return root, before, report


@pytest.mark.slow
def test_late_option_change_gives_two_builds_with_triggers(options_run):
    root, before, report = options_run
    builds = [b for b in report.builds if b.module == "__main__"]
    assert [b.status for b in builds] == ["compiled", "compiled"]
    assert builds[0].hash != builds[1].hash
    assert builds[0].options.get("fast_math") == "False" and builds[1].options.get("fast_math") == "True"
    main_file = str(root / "app" / "__main__.py")
    first = line_of(OPTIONS_APP, "wp.launch(scale")
    second = line_of(OPTIONS_APP, "wp.launch(shift")
    assert [(b.trigger.file, b.trigger.line, b.trigger.api) for b in builds] == [
        (main_file, first, "launch"),
        (main_file, second, "launch"),
    ]
    assert builds[1].trigger.stack[0].line == second  # the user call stack starts at the trigger
    assert report.native_compile_ms.median > 0 and report.codegen_ms.median > 0 and report.pch_ms.median > 0
    # the PCH is kept apart: no build carries it, and each build costs far less than the header did
    pch = report.pch_ms.median
    assert all(b.pch_ms == 0 or b.ms < pch for b in builds)
    assert max(b.ms for b in builds) < pch
    assert report.identities == 2 and report.modules == 1
    kernels = {k.key for k in builds[0].kernels}
    assert kernels == {"scale", "shift"}
    assert [lc.kernel for lc in report.launches] == ["scale", "shift"]
    assert report.launches[0].dtypes == ["array[float32;1d]"] and report.launches[0].dim == [8]
    assert all(b.status == "cached" for b in report.warm_builds)
    assert report.hook.mode == "wrap" and not report.hook.errors


@pytest.mark.slow
def test_tree_is_byte_identical_and_no_temp_left(options_run):
    root, before, _ = options_run
    assert tree_digest(root) == before


@pytest.mark.slow
def test_cache_thrown_away_each_run_makes_warm_as_costly_as_cold(tmp_path):
    root = write_app(tmp_path, CLEAR_APP)
    report = measure([sys.executable, "-m", "app"], root, samples=1)
    cold = [b.status for b in report.builds]
    warm = [b.status for b in report.warm_builds]
    assert cold == ["compiled"] and warm == ["compiled"]
    assert [c.api for c in report.cache.calls] == ["clear_kernel_cache"]
    assert report.cache.calls[0].site.line == line_of(CLEAR_APP, "wp.clear_kernel_cache()")
    # CONTENDED says how busy the machine was (other tests run beside this one): not the app's
    mine = [(w.code, w.params) for w in report.warnings if w.code != WarningCode.CONTENDED]
    assert mine == [(WarningCode.WARM_RECOMPILED, {"modules": 1})]


@pytest.mark.slow
def test_app_with_its_own_cache_dir_is_reported(tmp_path):
    root = write_app(tmp_path / "proj", OWN_CACHE_APP)
    own = tmp_path / "own-cache"
    report = measure([sys.executable, "-m", "app", str(own)], root, samples=1)
    assert report.cache.left_sandbox
    assert report.cache.kernel_cache_dir.startswith(str(own))
    outside = [w for w in report.warnings if w.code == WarningCode.CACHE_DIR_OUTSIDE]
    assert [w.params["path"] for w in outside] == [report.cache.kernel_cache_dir]


@pytest.mark.slow
def test_user_pythonpath_and_sitecustomize_are_kept(tmp_path):
    lib = tmp_path / "lib"
    write_app(lib, OPTIONS_APP, pkg="pathapp")
    (lib / "sitecustomize.py").write_text(
        "import os\nopen(os.environ['MARK_FILE'], 'w').write('ran')\n"
    )
    mark = tmp_path / "mark.txt"
    work = tmp_path / "work"
    work.mkdir()
    cmd = ["env", f"PYTHONPATH={lib}", f"MARK_FILE={mark}", sys.executable, "-m", "pathapp"]
    report = measure(cmd, work, samples=1)
    assert report.failed_samples == 0
    assert len([b for b in report.builds if b.status == "compiled"]) == 2
    assert mark.read_text() == "ran"


def test_command_that_compiles_nothing(tmp_path):
    report = measure([sys.executable, "-c", "print('hello')"], tmp_path, samples=1)
    assert report.failed_samples == 0
    assert report.builds == [] and report.identities == 0
    assert report.warp_version is None
    assert [w.code for w in report.warnings if w.code != WarningCode.CONTENDED] == [WarningCode.WARP_NOT_IMPORTED]


def test_failing_command_exits_1_with_its_stderr(tmp_path, capsys):
    code = main(
        ["measure", "--samples", "2", "--cwd", str(tmp_path), "--quiet", "--",
         sys.executable, "-c", "import sys; sys.stderr.write('boom: missing input\\n'); sys.exit(3)"]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "every sample failed" in err and "boom: missing input" in err
    assert f"interpreter {sys.executable}" in err.splitlines()[0]
    assert "Traceback" not in err


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    assert main(["measure", "--cwd", str(tmp_path / "nope"), "--", "python", "-c", "1"]) == 2
    assert main(["measure", "--cwd", str(tmp_path)]) == 2
    assert main(["measure", "--cwd", str(tmp_path), "--quiet", "--", "definitely-not-a-command-xyz"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert all(line.startswith("warp-compile: error:") for line in err.strip().splitlines())


def test_timeout_kills_the_whole_tree_and_removes_the_sandbox(tmp_path):
    """A child that spawns a grandchild and hangs: both die, and no warp-compile-* dir is left behind."""
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.run(
        [sys.executable, "-m", "warp_compile", "measure", "--samples", "1", "--timeout", "2", "--quiet",
         "--cwd", str(tmp_path), "--", sys.executable, "-c", script],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 1
    assert "timed out" in proc.stderr
    assert list(tmpdir.iterdir()) == []
    assert not alive(int(pidfile.read_text()))



def test_no_sandbox_left_in_temp(tmp_path, monkeypatch):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    report = measure([sys.executable, "-c", "pass"], tmp_path, samples=2)
    assert report.cache.sandbox_cache_dir and report.cache.sandbox_cache_dir.startswith(str(tmpdir))
    assert list(tmpdir.iterdir()) == []


def test_terminating_the_cli_stops_the_child_and_removes_the_sandbox(tmp_path):
    """SIGTERM to warp-compile itself (CI cancelling, a parent timing out): no child, no temp root left."""
    import signal
    import time

    pidfile = tmp_path / "child.pid"
    script = f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "warp_compile", "measure", "--samples", "1", "--quiet", "--cwd", str(tmp_path), "--",
         sys.executable, "-c", script],
        env=dict(os.environ, TMPDIR=str(tmpdir)), stderr=subprocess.PIPE, text=True,
    )
    deadline = time.time() + 30
    while not pidfile.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert pidfile.exists()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "Traceback" not in err  # 128 + SIGTERM
    assert not alive(int(pidfile.read_text()))
    assert list(tmpdir.iterdir()) == []


DROPPED_CLOSURE_APP = """\
import gc
import warp as wp

def make(scale):
    @wp.kernel
    def scaled(a: wp.array(dtype=wp.float32)):
        a[wp.tid()] = a[wp.tid()] * scale
    return scaled

a = wp.ones(4, dtype=wp.float32, device="cpu")
wp.launch(make(2.0), dim=4, inputs=[a], device="cpu")
gc.collect()
wp.launch(make(3.0), dim=4, inputs=[a], device="cpu")
print("HASH", wp.get_module("__main__").get_module_hash(1).hex())
"""


@pytest.mark.slow
def test_hook_keeps_no_dropped_kernel_alive(tmp_path):
    """Warp hashes only live kernels: if the hook held on to a launched closure, the next build would differ."""
    root = write_app(tmp_path, DROPPED_CLOSURE_APP)
    env = dict(os.environ, WARP_CACHE_PATH=str(tmp_path / "plain-cache"))
    plain = subprocess.run([sys.executable, "-m", "app"], cwd=root, env=env, capture_output=True, text=True, check=True)
    plain_hash = next(ln.split()[1] for ln in plain.stdout.splitlines() if ln.startswith("HASH"))
    report = measure([sys.executable, "-m", "app"], root, samples=1)
    assert report.builds[-1].hash == plain_hash
    assert len(report.builds[-1].kernels) == 1
