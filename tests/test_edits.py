"""The edit primitives every rule's fix goes through: exact old text, project files only, a diff before applying."""

from __future__ import annotations

from pathlib import Path

import pytest

from warp_compile.probe.fix.edits import (
    EditConflict,
    SourceView,
    apply_edits,
    header_end,
    insert_before,
    new_texts,
    owned_path,
    replace_lines,
    settings_edits,
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
    assert header_end(["import warp\n"]) == 2  # right after the import it reuses
    assert header_end(['"""one line"""\n', "x = 1\n"]) == 2


def test_settings_edit_at_entry_point_and_launcher(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(APP)
    src = SourceView(tmp_path)
    edits = settings_edits(src, EntryPoint(kind="script", file=str(tmp_path / "main.py"), owner="project"),
                           {"enable_backward": False})
    assert len(edits) == 1 and edits[0].file == "main.py" and edits[0].old == ""
    text = new_texts(tmp_path, edits)["main.py"]
    assert text.index("wp.config.enable_backward = False") < text.index("wp.init()")
    assert text.index("from __future__") < text.index("wp.config.enable_backward")
    compile(text, "main.py", "exec")
    [inst] = settings_edits(src, EntryPoint(kind="console_script", name="lib.cli:main", owner="dependency"),
                            {"enable_backward": False})
    assert inst.create and inst.file == "run_main.py"
    assert "from lib.cli import main" in inst.new
    compile(inst.new, "run_main.py", "exec")
    # a launcher the user already has (their own, from earlier advice) is never the file to create: a free name is
    (tmp_path / "run_main.py").write_text("print('mine')\n")
    [other] = settings_edits(SourceView(tmp_path), EntryPoint(kind="console_script", name="lib.cli:main",
                                                               owner="dependency"), {"enable_backward": False})
    assert other.create and other.file == "run_main_2.py"
    assert (tmp_path / "run_main.py").read_text() == "print('mine')\n"


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


# ------------------------------------------------------------------------------------------------ file shapes


def _edited(tmp_path: Path, text: str | bytes, name: str = "main.py") -> tuple[bytes, list]:
    """The settings edit applied to a file holding `text`: (its bytes after, the edits)."""
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    edits = settings_edits(SourceView(tmp_path), EntryPoint(kind="script", file=str(path), owner="project"),
                           {"enable_backward": False})
    apply_edits(tmp_path, edits)
    return path.read_bytes(), edits


LICENSED = '''# Copyright (c) 2026 Example Authors
# SPDX-License-Identifier: Apache-2.0

"""Prepare particles."""

from __future__ import annotations

import argparse

from .pipeline import prepare
'''


def test_a_license_comment_above_the_docstring_keeps_docstring_and_future_first(tmp_path: Path) -> None:
    """The particle_prep shape: the edit used to land at line 1, above the docstring and `from __future__`."""
    after, edits = _edited(tmp_path, LICENSED)
    text = after.decode()
    compile(text, "main.py", "exec", dont_inherit=True)
    assert edits[0].start_line == 7  # the blank line after `from __future__`
    assert text.index("from __future__") < text.index("import warp as wp\nwp.config.enable_backward = False")
    assert text.index("wp.config.enable_backward") < text.index("import argparse")
    import ast

    assert ast.get_docstring(ast.parse(text)) == "Prepare particles."


def test_the_files_own_import_of_warp_is_reused_with_its_alias(tmp_path: Path) -> None:
    after, edits = _edited(tmp_path, '"""Doc."""\nimport os\n\nimport warp as W\nfrom . import kernels\n')
    assert after.decode() == ('"""Doc."""\nimport os\n\nimport warp as W\nW.config.enable_backward = False\n'
                              "from . import kernels\n")
    assert len(edits) == 1 and edits[0].start_line == 5


def test_an_import_of_warp_below_a_risky_import_moves_up_with_the_setting(tmp_path: Path) -> None:
    after, edits = _edited(tmp_path, '"""Doc."""\n\nimport torch\n\nimport warp as wp\n\n\nwp.init()\n')
    assert after.decode() == ('"""Doc."""\n\nimport warp as wp\nwp.config.enable_backward = False\n\n'
                              "import torch\n\n\nwp.init()\n")
    assert [(e.start_line, e.end_line) for e in edits] == [(2, 1), (5, 6)]


def test_type_checking_and_main_guard_imports_are_not_reused(tmp_path: Path) -> None:
    src = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import warp as wp\n"
           'if __name__ == "__main__":\n    import warp as wp\n')
    text = _edited(tmp_path, src)[0].decode()
    assert text.startswith("import warp as wp\nwp.config.enable_backward = False\n\nfrom typing import TYPE_CHECKING")


def test_crlf_and_bom_are_kept_and_form_feeds_do_not_shift_lines(tmp_path: Path) -> None:
    crlf = LICENSED.replace("\n", "\r\n").encode()
    after, _ = _edited(tmp_path, b"\xef\xbb\xbf" + crlf)
    assert after.startswith(b"\xef\xbb\xbf") and after.count(b"\n") == after.count(b"\r\n")
    assert b"import warp as wp\r\nwp.config.enable_backward = False" in after
    ff = '"""Doc."""\n\x0c\nimport os\n\x0c\nimport warp as wp\n\nx = 1\n'
    text = _edited(tmp_path, ff, "ff.py")[0].decode()
    assert "import warp as wp\nwp.config.enable_backward = False\n\nx = 1" in text


def test_a_file_that_does_not_parse_gets_no_edit(tmp_path: Path) -> None:
    assert _edited(tmp_path, "def broken(:\n")[1] == []
    from warp_compile.probe.fix.placement import place

    assert place("from __future__ import annotations; import x\n") is None  # no line between the two


def test_two_settings_edits_at_one_place_combine_with_one_import(tmp_path: Path) -> None:
    from warp_compile.probe.fix.edits import merge_edits

    (tmp_path / "main.py").write_text(LICENSED)
    src = SourceView(tmp_path)
    entry = EntryPoint(kind="script", file=str(tmp_path / "main.py"), owner="project")
    a = settings_edits(src, entry, {"enable_backward": False})
    b = settings_edits(src, entry, {"use_precompiled_headers": False})
    assert new_texts(tmp_path, a + b)["main.py"].count("import warp as wp") == 2  # what merging prevents
    text = new_texts(tmp_path, merge_edits(a + b + a))["main.py"]
    assert text.count("import warp as wp") == 1
    assert "wp.config.enable_backward = False\nwp.config.use_precompiled_headers = False\n" in text
    compile(text, "main.py", "exec", dont_inherit=True)


def test_a_try_body_indented_with_a_tab_gets_the_setting_at_the_same_indent(tmp_path: Path) -> None:
    text = _edited(tmp_path, "try:\n\timport warp as wp\nexcept ImportError:\n\twp = None\n")[0].decode()
    assert text == ("try:\n\timport warp as wp\n\twp.config.enable_backward = False\nexcept ImportError:\n"
                    "\twp = None\n")
    compile(text, "main.py", "exec", dont_inherit=True)


def test_merge_keeps_two_definitions_inserted_at_one_line_whole() -> None:
    """Two kernels moved to the same line by two steps share lines (`@wp.kernel`, `i = wp.tid()`): each is one
    statement, kept whole and set apart; only a statement given twice (an import) appears once."""
    from warp_compile.probe.fix.edits import Edit, merge_edits

    a = Edit(file="m.py", start_line=16, end_line=15, old="",
             new="\n@wp.kernel\ndef a_2(x: int):\n    i = wp.tid()\n\n\n")
    b = Edit(file="m.py", start_line=16, end_line=15, old="",
             new="@wp.kernel\ndef b_2(x: int):\n    i = wp.tid()\n\n\n")
    (m,) = merge_edits([a, b])
    assert m.new == ("\n@wp.kernel\ndef a_2(x: int):\n    i = wp.tid()\n\n\n"
                     "@wp.kernel\ndef b_2(x: int):\n    i = wp.tid()\n\n\n")
    c = Edit(file="m.py", start_line=3, end_line=2, old="", new="import warp as wp\nwp.config.mode = 'release'\n")
    d = Edit(file="m.py", start_line=3, end_line=2, old="", new="import warp as wp\nwp.config.verify_fp = False\n")
    (n,) = merge_edits([c, d])
    assert n.new == "import warp as wp\nwp.config.mode = 'release'\nwp.config.verify_fp = False\n"
