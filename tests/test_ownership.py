"""Who owns a file: asked of the app's own interpreter (installed metadata), never guessed from a path pattern."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from warp_compile.probe.models import FileOwner
from warp_compile.probe.ownership import ask_interpreter, owner_of, owners_from_answer, report_files


def test_real_interpreter_names_the_distribution(tmp_path: Path) -> None:
    import warp

    mine = tmp_path / "app.py"
    mine.write_text("x = 1\n")
    warp_file = str(Path(warp.__file__).parent / "_src" / "sparse.py")
    stdlib_file = str(Path(json.__file__).parent / "decoder.py")
    answer = ask_interpreter(sys.executable, [warp_file, str(mine), stdlib_file], str(tmp_path))
    assert answer is not None
    owners = owners_from_answer(answer, str(tmp_path))
    assert owners[warp_file].owner == "dependency" and owners[warp_file].distribution == "warp-lang"
    assert owners[warp_file].version == warp.__version__
    assert owners[str(mine)] == FileOwner(owner="project")
    assert owners[stdlib_file].owner == "dependency" and owners[stdlib_file].distribution == "python"


def test_an_editable_install_inside_the_project_is_the_project() -> None:
    root = Path(__file__).resolve().parents[1]
    mine = str(root / "probe" / "hook.py")
    answer = {mine: {"distribution": "warp-compile", "version": "0.1.0", "editable": True}}
    assert owners_from_answer(answer, str(root))[mine].owner == "project"
    assert owners_from_answer(answer, "/somewhere/else")[mine].owner == "dependency"


def test_an_interpreter_that_cannot_answer_gives_nothing(tmp_path: Path) -> None:
    assert ask_interpreter(str(tmp_path / "no-python"), ["/x.py"], str(tmp_path)) is None
    assert ask_interpreter(sys.executable, [], str(tmp_path)) == {}


def test_report_files_and_owner_lookup_by_relative_path(tmp_path: Path) -> None:
    dump = {"builds": [{"trigger": {"file": "/p/a.py", "stack": [{"file": "/p/b.py"}]}}], "x": {"file": "rel.py"}}
    assert report_files(dump) == {"/p/a.py", "/p/b.py"}
    owners = {os.path.join(str(tmp_path), "pkg", "m.py"): FileOwner(owner="dependency", distribution="eng")}
    assert owner_of("pkg/m.py", owners, str(tmp_path)).distribution == "eng"  # type: ignore[union-attr]
    assert owner_of("other.py", owners, str(tmp_path)).owner == "project"  # type: ignore[union-attr]  # inside the root
    assert owner_of("/elsewhere/x.py", owners, str(tmp_path)) is None  # nobody recorded it
