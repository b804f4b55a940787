"""`warp-compile try`: settings parsed strictly, carried to the hook, applied at `import warp`; bad input: one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT
from warp_compile.probe.errors import UsageError
from warp_compile.probe.experiment import ENV_VAR, SETTINGS, as_python, parse_settings, settings_env

APPS = ROOT / "tests" / "apps"


def test_settings_parse_to_typed_values() -> None:
    got = parse_settings(["enable_backward=False", "max_unroll=4", "optimization_level=None", "mode=debug"])
    assert got == {"enable_backward": False, "max_unroll": 4, "optimization_level": None, "mode": "debug"}
    assert json.loads(settings_env(got)[ENV_VAR]) == got
    assert as_python({"enable_backward": False}) == ["wp.config.enable_backward = False"]


@pytest.mark.parametrize(
    ("items", "says"),
    [
        (["nonsense=1"], "unknown setting 'nonsense'"),
        (["enable_backward=maybe"], "expected True or False"),
        (["max_unroll=-1"], "at least 0"),
        (["max_unroll=many"], "whole number"),
        (["mode=fast"], "one of release, debug"),
        (["enable_backward"], "KEY=VALUE"),
        (["enable_backward=0", "enable_backward=1"], "given twice"),
        ([], "at least one --set"),
    ],
)
def test_bad_settings_are_one_clear_line(items: list[str], says: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_settings(items)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_every_setting_names_a_mechanism() -> None:
    assert all(s.mechanism.startswith("CS-") and s.what for s in SETTINGS.values())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "warp_compile.cli", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_try_cli_refuses_unknown_keys_before_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    r = _cli("try", "--set", "fast=1", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown setting 'fast'" in r.stderr
    assert not marker.exists()


def test_try_cli_lists_its_settings() -> None:
    r = _cli("try", "--list")
    assert r.returncode == 0 and all(key in r.stdout for key in SETTINGS)


def test_hook_applies_settings_at_import_and_skips_cache_clears(tmp_path: Path) -> None:
    """The hook in a real Python: the setting is in wp.config before any app module exists; clear_* is skipped."""
    from warp_compile.probe.events import read_events
    from warp_compile.probe.sandbox import Sandbox

    script = tmp_path / "probe_app.py"
    script.write_text(
        "import warp as wp\n"
        "print('backward', wp.config.enable_backward)\n"
        "wp.clear_lto_cache()\n"
    )
    env = settings_env({"enable_backward": False, "keep_kernel_cache": True, "no_such_option_here": 1})
    with Sandbox(env) as box:
        out = box.run([sys.executable, str(script)], tmp_path, 120)
        ev = read_events(out.events_path)
    assert "backward False" in out.stdout
    assert ev.experiment == {
        "enable_backward": "applied", "keep_kernel_cache": "hook", "no_such_option_here": "unsupported"
    }
    cleared = [c for c in ev.calls if c.api == "clear_lto_cache"]
    assert cleared and cleared[0].detail.get("skipped") == "experiment keep_kernel_cache"


def test_a_setting_the_app_assigns_again_is_reported_as_overridden(tmp_path: Path) -> None:
    from warp_compile.probe.events import read_events
    from warp_compile.probe.sandbox import Sandbox

    script = tmp_path / "stubborn.py"
    script.write_text("import warp as wp\nwp.config.enable_backward = True\nwp.config.max_unroll = 4\n")
    with Sandbox(settings_env({"enable_backward": False, "max_unroll": 4})) as box:
        out = box.run([sys.executable, str(script)], tmp_path, 120)
        ev = read_events(out.events_path)
    assert ev.experiment == {"enable_backward": "overridden by the application after import", "max_unroll": "applied"}
