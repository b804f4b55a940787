"""The settings edit on a corpus of real entry files (tests/entry_corpus, sources and licenses in its README).

Every file gets the edit `fix` makes for CS-10 (`wp.config.enable_backward = False` at the entry point), through
the same function (`edits.settings_edits`), applied with `edits.apply_edits`. Then, statically: it parses, its
docstring and `from __future__` imports are unchanged and still first, warp is imported exactly once at top level,
the setting precedes every statement that could create a kernel module, and the file keeps its line endings and
BOM. And at run time (tests/entry_corpus_run.py, one process, a fork per file): the edited file ends the way the
original does with the same arguments (`--help` unless noted), prints the same, leaves `enable_backward` False
where the original leaves it True, and a module its own kernels create is forward-only, so the line ran first.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from warp_compile.probe.fix.edits import SourceView, apply_edits, settings_edits
from warp_compile.probe.fix.placement import risky
from warp_compile.probe.models import EntryPoint
from warp_compile.probe.models.diagnosis import Edit

CORPUS = Path(__file__).parent / "entry_corpus"
RUNNER = Path(__file__).parent / "entry_corpus_run.py"
# CS-10's setting, and a max_unroll no file sets: the runtime proof that the inserted lines ran (and ran before the
# file's kernels created their module, which copies both)
SETTING = {"enable_backward": False, "max_unroll": 3}
RESET = {"enable_backward": True, "max_unroll": 16}
LINE = "config.enable_backward = False"
# how a file is started when `--help` is not the quick way out, and the package a __main__.py belongs to
ARGV = {"pytest__main__.py": ["--version"], "pip__main__.py": ["--version"], "pip_vendor_platformdirs__main__.py": []}
PACKAGE = {"idna__main__.py": "idna", "pip__main__.py": "pip", "pytest__main__.py": "pytest",
           "pip_vendor_distro__main__.py": "pip._vendor.distro", "numpy_f2py__main__.py": "numpy.f2py",
           "pip_vendor_platformdirs__main__.py": "pip._vendor.platformdirs", "uvicorn__main__.py": "uvicorn",
           "mcp_client__main__.py": "mcp.client", "jsonschema__main__.py": "jsonschema",
           "pygments__main__.py": "pygments"}
CRLF = {"shape_crlf.py"}  # stored with LF; the test gives it Windows line endings before editing


@dataclass
class Case:
    name: str
    original: Path
    edited: Path
    edits: list[Edit]


def _files() -> list[Path]:
    return sorted(CORPUS.glob("*.py"))


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    root = tmp_path_factory.mktemp("corpus")
    out = []
    for f in _files():
        orig_dir, edit_dir = root / "original" / f.stem, root / "edited" / f.stem
        orig_dir.mkdir(parents=True)
        edit_dir.mkdir(parents=True)
        data = f.read_bytes()
        if f.name in CRLF:
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        (orig_dir / f.name).write_bytes(data)
        (edit_dir / f.name).write_bytes(data)
        entry = EntryPoint(kind="script", name=f.name, file=str(edit_dir / f.name), owner="project")
        edits = settings_edits(SourceView(edit_dir), entry, SETTING, comment="warp-compile fix CS-10")
        if edits:
            apply_edits(edit_dir, edits)
        out.append(Case(f.name, orig_dir / f.name, edit_dir / f.name, edits))
    return out


def test_the_corpus_has_30_real_files_and_the_readme_names_the_source_and_license_of_each() -> None:
    readme = (CORPUS / "README.md").read_text()
    rows = {ln.split("|")[1].strip().strip("`"): ln for ln in readme.splitlines() if ln.startswith("| `")}
    names = [f.name for f in _files()]
    assert set(rows) == set(names), set(rows) ^ set(names)
    copied = [n for n in names if not n.startswith("shape_")]
    assert len(copied) >= 30, len(copied)
    for name in names:
        cells = [c.strip() for c in rows[name].split("|")[1:-1]]
        assert len(cells) == 3 and all(cells), rows[name]  # file | source | license


def _warp_binds(tree: ast.Module) -> list[ast.Import]:
    """Top-level statements that bind warp (`import warp [as X]`), also inside a top-level try."""
    out = []
    for node in tree.body:
        for stmt in [node, *(node.body if isinstance(node, ast.Try) else [])]:
            if isinstance(stmt, ast.Import) and any(a.name == "warp" for a in stmt.names):
                out.append(stmt)
    return out


def _setting_line(tree: ast.Module) -> int | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and ast.unparse(node).endswith(LINE):
            return node.lineno
    return None


def _future(tree: ast.Module) -> list[str]:
    return [a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__" for a in n.names]


def _problems(c: Case) -> list[str]:
    before_bytes, after_bytes = c.original.read_bytes(), c.edited.read_bytes()
    before = before_bytes.decode("utf-8-sig").replace("\r\n", "\n")
    after = after_bytes.decode("utf-8-sig").replace("\r\n", "\n")
    try:
        compile(after, c.name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return [f"does not parse: {exc}"]
    t0, t1 = ast.parse(before), ast.parse(after)
    out = []
    if not c.edits or after == before:
        out.append("no edit was made")
    if ast.get_docstring(t0, clean=False) != ast.get_docstring(t1, clean=False):
        out.append("the docstring changed or moved")
    if _future(t0) != _future(t1):
        out.append("the __future__ imports changed")
    head = 1 if ast.get_docstring(t1) is not None else 0
    n = len([x for x in t0.body if isinstance(x, ast.ImportFrom) and x.module == "__future__"])
    if any(not (isinstance(x, ast.ImportFrom) and x.module == "__future__") for x in t1.body[head:head + n]):
        out.append("the __future__ imports are no longer first")
    binds = _warp_binds(t1)
    if len(binds) != 1:
        out.append(f"warp is imported {len(binds)} times at top level")
    line = _setting_line(t1)
    if line is None:
        out.append("the setting is missing")
    else:
        late = [x.lineno for x in t1.body if x.lineno < line and risky(x) and x not in binds
                and not (isinstance(x, ast.Try) and set(x.body) & set(binds))]
        if late:
            out.append(f"the setting (line {line}) comes after line(s) {late} that could create a kernel module")
        if binds and binds[0].lineno > line:
            out.append("the setting comes before the import of warp it uses")
    if b"\r\n" in before_bytes and after_bytes.count(b"\n") != after_bytes.count(b"\r\n"):
        out.append("CRLF line endings were not kept")
    if before_bytes.startswith(b"\xef\xbb\xbf") != after_bytes.startswith(b"\xef\xbb\xbf"):
        out.append("the byte order mark was not kept")
    return out


def test_every_edited_file_parses_keeps_its_header_and_imports_warp_once(cases: list[Case]) -> None:
    bad = {c.name: p for c in cases if (p := _problems(c))}
    assert not bad, json.dumps(bad, indent=1)


def test_the_edits_land_where_the_shapes_need_them(cases: list[Case]) -> None:
    """A few shapes pinned by what the edited file says: the alias reused, the import moved out of a line."""
    text = {c.name: c.edited.read_text(encoding="utf-8-sig") for c in cases}
    assert "import warp\nwarp.config.enable_backward = False" in text["shape_import_warp_plain.py"]
    assert "import warp as warp_lib\nwarp_lib.config.enable_backward = False" in text["shape_warp_alias.py"]
    assert "    import warp as wp\n    wp.config.enable_backward = False" in text["shape_try_import.py"]
    risky_line = text["shape_multi_import_risky.py"]
    assert "import pydantic  # noqa: E401\n" in risky_line and "pydantic, warp" not in risky_line
    lic = text["shape_license_docstring_future_no_warp.py"]
    order = [lic.index(s) for s in ("from __future__ import annotations", "import warp as wp", "import argparse")]
    assert order == sorted(order)
    assert text["warp_example_dem.py"].count("import warp as wp\nwp.config.enable_backward = False") == 1


def _run(jobs: list[dict], tmp: Path) -> dict[str, dict]:
    path = tmp / "jobs.json"
    path.write_text(json.dumps(jobs))
    proc = subprocess.run([sys.executable, str(RUNNER), str(path)], capture_output=True, text=True, timeout=600,
                          cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["path"]: r for r in map(json.loads, proc.stdout.splitlines())}


@pytest.mark.slow
def test_every_edited_file_runs_like_the_original_and_its_setting_ran_first(cases: list[Case], tmp_path: Path) -> None:
    jobs = [{"path": str(p), "argv": ARGV.get(c.name, ["--help"]), "package": PACKAGE.get(c.name),
             "reset": RESET} for c in cases for p in (c.original, c.edited)]
    got = _run(jobs, tmp_path)
    bad = {}
    for c in cases:
        a, b = got[str(c.original)], got[str(c.edited)]
        why = []
        if a["status"] != b["status"]:
            why.append(f"ended {b['status']}, the original {a['status']}: {b.get('stderr', '')[-300:]}")
        if a.get("stdout") != b.get("stdout"):
            why.append(f"printed {b.get('stdout', '')[:200]!r}, the original {a.get('stdout', '')[:200]!r}")
        if not a["status"].startswith("exit:"):
            why.append(f"the original itself did not run: {a['status']} {a.get('stderr', '')[-300:]}")
        if b.get("config") != SETTING:
            why.append(f"the inserted settings did not run: {b.get('config')}")
        if (a.get("config") or {}).get("max_unroll") != RESET["max_unroll"]:
            why.append("the original sets max_unroll itself: the run proves nothing")
        if b.get("module_options") is not None and b["module_options"] != SETTING:
            why.append(f"its kernels' module was created before the settings ran: {b['module_options']}")
        if why:
            bad[c.name] = why
    assert not bad, json.dumps(bad, indent=1)
    # the proof reaches kernels: the files that define their own saw the setting at their module's creation
    with_kernels = [c.name for c in cases if got[str(c.edited)].get("module_options") is not None]
    assert len(with_kernels) >= 15, with_kernels
    assert all(got[str(c.original)]["module_options"]["max_unroll"] == RESET["max_unroll"] for c in cases
               if c.name in with_kernels)
    shutil.rmtree(tmp_path, ignore_errors=True)
