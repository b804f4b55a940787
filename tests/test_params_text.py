"""Parameters are added where the moved text has its parameter list now: an earlier step may have changed the def
line (a sibling definition under another branch made the move rename it, `clear_forces` -> `clear_forces_2`), so
columns read from the original definition would cut into an annotation."""

from __future__ import annotations

import ast
import textwrap

from warp_compile.probe.fix.transform.params import with_params

SRC = textwrap.dedent("""\
    @wp.kernel(enable_backward=False)
    def clear_forces(mask: wp.array(dtype=bool), force: wp.array2d(dtype=float)):
        w, b = wp.tid()
        if wp.static(masked):
            force[w, b] = 0.0
    """)


def test_a_renamed_def_line_gets_its_parameter_after_the_last_one() -> None:
    node = ast.parse(SRC).body[0]
    assert isinstance(node, ast.FunctionDef)
    text = SRC.replace("def clear_forces(", "def clear_forces_2(").splitlines(keepends=True)
    out = "".join(with_params(text, node, 0, [("masked", "bool")]))
    assert "force: wp.array2d(dtype=float), masked: bool):" in out
    assert "if masked:" in out
    ast.parse(out)


def test_an_unchanged_text_is_edited_at_the_same_place() -> None:
    node = ast.parse(SRC).body[0]
    assert isinstance(node, ast.FunctionDef)
    out = "".join(with_params(SRC.splitlines(keepends=True), node, 0, [("masked", "bool")], position=1))
    assert "def clear_forces(mask: wp.array(dtype=bool), masked: bool, force:" in out
