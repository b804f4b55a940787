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


def test_a_distribution_without_top_level_txt_is_found_by_its_record(tmp_path: Path) -> None:
    """pydantic ships no top_level.txt: its RECORD names the package (read as text, not as PackagePath objects)."""
    from importlib import metadata

    import pydantic

    dist = metadata.distribution("pydantic")
    assert dist.read_text("top_level.txt") is None  # what this test is about
    answer = ask_interpreter(sys.executable, [pydantic.__file__], str(tmp_path))
    assert answer == {pydantic.__file__: {"distribution": dist.metadata["Name"], "version": dist.version,
                                          "editable": False}}


def _fake_editable(site: Path, project: Path, name: str = "mylib") -> None:
    info = site / f"{name}-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2\n\nlong description\n")
    (info / "direct_url.json").write_text(json.dumps({"url": project.as_uri(), "dir_info": {"editable": True}}))


def test_an_editable_install_on_the_path_is_named_without_importlib_metadata(tmp_path: Path) -> None:
    """Only project paths: the editable check reads the dist-info directories on sys.path directly."""
    project, site = tmp_path / "proj", tmp_path / "extra"
    (project / "mylib").mkdir(parents=True)
    _fake_editable(site, project)
    mine, other = str(project / "mylib" / "core.py"), str(tmp_path / "elsewhere.py")
    env = dict(os.environ, PYTHONPATH=str(site))
    answer = ask_interpreter(sys.executable, [mine, other], str(tmp_path), env=env)
    assert answer == {mine: {"distribution": "mylib", "version": "1.2", "editable": True}, other: None}


def test_answers_are_kept_until_the_interpreter_path_changes(tmp_path: Path, monkeypatch) -> None:
    from warp_compile.probe import ownership

    runs: list[list[str]] = []
    real = ownership.OwnerQuery

    class Counting(real):  # type: ignore[misc,valid-type]
        def __init__(self, python, paths, *args, **kwargs):  # type: ignore[no-untyped-def]
            runs.append(sorted(paths))
            super().__init__(python, paths, *args, **kwargs)

    monkeypatch.setattr(ownership, "OwnerQuery", Counting)
    project, site = tmp_path / "proj", tmp_path / "extra"
    project.mkdir()
    site.mkdir()
    a, b = str(project / "a.py"), str(project / "b.py")
    env = dict(os.environ, PYTHONPATH=str(site))
    assert ask_interpreter(sys.executable, [a], str(tmp_path), env=env) == {a: None}
    assert ask_interpreter(sys.executable, [a], str(tmp_path), env=env) == {a: None}
    assert runs == [[a]]  # the second ask ran nothing
    assert ask_interpreter(sys.executable, [a, b], str(tmp_path), env=env) == {a: None, b: None}
    assert runs == [[a], [b]]  # only the new path
    _fake_editable(site, project)  # an install into a directory on that interpreter's path
    answer = ask_interpreter(sys.executable, [a], str(tmp_path), env=env)
    assert answer == {a: {"distribution": "mylib", "version": "1.2", "editable": True}}
    assert runs == [[a], [b], [a]]


def test_a_query_nobody_collects_is_stopped(tmp_path: Path) -> None:
    from warp_compile.probe.ownership import OwnerQuery

    slow = tmp_path / "python"
    slow.write_text("#!/bin/sh\nexec sleep 60\n")
    slow.chmod(0o755)
    query = OwnerQuery(str(slow), ["/x.py"], str(tmp_path), background=True)
    for _ in range(200):
        if query._proc is not None:
            break
        __import__("time").sleep(0.01)
    pid = query._proc.pid  # type: ignore[union-attr]
    query.close()
    assert query._proc.poll() is not None  # type: ignore[union-attr]
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
    assert query.result() is None


def test_measure_asks_who_owns_what_once_while_the_samples_run(tmp_path: Path, monkeypatch) -> None:
    """The query starts after the first cold run (while the warm run goes) and answers the whole report."""
    from warp_compile.probe import measure as measure_mod
    from warp_compile.probe import ownership

    started: list[tuple[list[str], bool]] = []
    real = ownership.OwnerQuery

    class Counting(real):  # type: ignore[misc,valid-type]
        def __init__(self, python, paths, cwd, env=None, timeout_s=60.0, background=False):  # type: ignore[no-untyped-def]
            started.append((sorted(paths), background))
            super().__init__(python, paths, cwd, env, timeout_s, background)

    monkeypatch.setattr(ownership, "OwnerQuery", Counting)
    monkeypatch.setattr(measure_mod, "OwnerQuery", Counting)
    ownership._cache.clear()
    app = tmp_path / "app.py"
    app.write_text("print('hello')\n")
    report = measure_mod.measure([sys.executable, str(app)], tmp_path, samples=2)
    assert started == [([str(app)], True)]  # one query, in the background, nothing asked again at the end
    assert report.owners == {str(app): FileOwner(owner="project")}
