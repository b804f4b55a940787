"""The edit primitives every rule's fix goes through: exact old text, project files only, a diff before applying."""

from __future__ import annotations

from pathlib import Path

import pytest

from warp_compile.probe.edits import (
    EditConflict,
    SourceView,
    apply_edits,
    header_end,
    insert_before,
    new_texts,
    owned_path,
    replace_lines,
    settings_edit,
    unified_diff,
)
from warp_compile.probe.models import EntryPoint

APP = '''#!/usr/bin/env python3
"""An app.

More text.
"""
from __future__ import annotations

import warp as wp

wp.init()
'''


def test_owned_path_refuses_installed_and_outside() -> None:
    assert owned_path("app/main.py")
    assert not owned_path("/abs/app.py")
    assert not owned_path("../other/app.py")
    assert not owned_path(".venv/lib/python3.11/site-packages/lib/k.py")
    assert not owned_path("")


def test_header_end_skips_docstring_and_future() -> None:
    lines = APP.splitlines(keepends=True)
    assert lines[header_end(lines) - 1].strip() == ""  # the blank line after `from __future__`
    assert header_end(["import warp\n"]) == 1
    assert header_end(['"""one line"""\n', "x = 1\n"]) == 2


def test_settings_edit_at_entry_point_and_launcher(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(APP)
    src = SourceView(tmp_path)
    e = settings_edit(src, EntryPoint(kind="script", file=str(tmp_path / "main.py"), owner="project"),
                      {"enable_backward": False})
    assert e is not None and e.file == "main.py" and e.old == ""
    text = new_texts(tmp_path, [e])["main.py"]
    assert text.index("wp.config.enable_backward = False") < text.index("wp.init()")
    assert text.index("from __future__") < text.index("wp.config.enable_backward")
    compile(text, "main.py", "exec")
    inst = settings_edit(src, EntryPoint(kind="console_script", name="lib.cli:main", owner="dependency"),
                         {"enable_backward": False})
    assert inst is not None and inst.create and inst.file == "run_main.py"
    assert "from lib.cli import main" in inst.new
    compile(inst.new, "run_main.py", "exec")


def test_apply_refuses_stale_edits_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    (tmp_path / "b.py").write_text("z = 3\n")
    src = SourceView(tmp_path)
    good = replace_lines(src, "a.py", 2, 2, "y = 20")
    stale = replace_lines(src, "b.py", 1, 1, "z = 30")
    assert good is not None and stale is not None
    (tmp_path / "b.py").write_text("z = 4\n")  # the file moved on
    with pytest.raises(EditConflict):
        apply_edits(tmp_path, [good, stale])
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 2\n"  # all-or-nothing
    assert apply_edits(tmp_path, [good]) == ["a.py"]
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 20\n"


def test_unified_diff_and_overlap(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    src = SourceView(tmp_path)
    ins = insert_before(src, "a.py", 1, "import os")
    rep = replace_lines(src, "a.py", 1, 2, "x = y = 3")
    assert ins is not None and rep is not None
    diff = unified_diff(tmp_path, [ins])
    assert diff.startswith("--- a/a.py\n+++ b/a.py\n") and "+import os\n" in diff
    with pytest.raises(EditConflict):
        new_texts(tmp_path, [rep, replace_lines(src, "a.py", 2, 2, "y = 5")])  # type: ignore[list-item]
    assert src.lines(str(tmp_path.parent / "elsewhere.py")) is None
