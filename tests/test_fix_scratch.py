"""`fix`'s scratch copies live in a temp root of their own (issue 39 item 4: a sample row once failed when a folder
was deleted mid-run by another job). Each run's root is made by `tempfile.mkdtemp` (a fresh name, created
atomically) under TMPDIR, and leaving it removes that root only: another run's root, even with the same prefix, is
never touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from warp_compile.probe.fix.engine import Scratch


def test_concurrent_runs_get_their_own_roots_and_remove_only_their_own(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    other_job = tmp_path / "warp-compile-fix-someone-else"
    other_job.mkdir()
    (other_job / "keep.txt").write_text("x")
    with Scratch() as a, Scratch() as b:
        assert a.root != b.root and a.root.parent == b.root.parent == tmp_path
        assert a.root.name.startswith("warp-compile-fix-") and b.root.is_dir()
        (b.root / "copy.py").write_text("y")
        a.__exit__(None, None, None)  # one run ends first
        assert not a.root.exists() and (b.root / "copy.py").read_text() == "y"
    assert not b.root.exists()
    assert (other_job / "keep.txt").read_text() == "x"
