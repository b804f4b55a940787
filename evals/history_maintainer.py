"""The maintainer role of a history case: the release's own source as the project, judged against the maintainers' fix.

The user role runs the library installed and asks what an application can do; a maintainer owns the library's code,
so here the release wheel (pure Python) is downloaded once (`pip download --no-deps`, cached beside the venvs) and
unpacked, its package folders and the case's driver become the project, and the agent edits that source. The venv
holds the release's dependencies only (`maintainer.deps`): the unpacked tree is found on sys.path from the driver's
folder. The reference is the maintainers' own change, as a third arm of the same run on the same interpreter: the
fixed release unpacked the same way, or the release before it with a patch written from the merged change.

Scored as every history case (evals/history.py, evals/scorer.py) with two differences: the diagnosis is judged
against the maintainers' lines in their own files (`maintainer.expected`), and there is no upstream report (the
agent is upstream). The case folder stays what MANIFEST.json guards; the unpacked trees are checked by pip's hashes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..probe.errors import UsageError
from .history_env import _NETWORK, _last_line, cache_root, cached_venv, patch_folder
from .models import Case, CaseResult, Expected, History, Maintainer

ROLE_SUFFIX = ":maintainer"  # a maintainer-role result's id: the case id and this
MARKER = ".warp-compile-unpacked"  # written last: an unpacked folder without it is incomplete


def roles(case: Case, wanted: str) -> list[str]:
    """The roles of `case` to run for --role (user|maintainer|both): a case without a maintainer block has the user
    role only, so `both` and `user` run it and `maintainer` skips it."""
    has = case.history is not None and case.history.maintainer is not None
    if wanted == "both":
        return ["user", "maintainer"] if has else ["user"]
    if wanted == "maintainer":
        return ["maintainer"] if has else []
    return ["user"]


def _safe(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", spec).strip("-") or "release"


def unpack(spec: str, python: str | None = None, progress=None) -> Path:  # type: ignore[no-untyped-def]
    """The folder holding the unpacked wheel of `spec` (a pinned pip requirement), downloaded and unpacked once.

    Raises UsageError (one line) when pip cannot download it or it is not a wheel."""
    root = cache_root() / "unpacked"
    dest = root / _safe(spec)
    if (dest / MARKER).is_file():
        return dest
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"history: cannot create the cache directory {root}: {exc.strerror or exc}") from None
    if progress:
        progress(f"history: downloading and unpacking {spec} into {dest} (once)")
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    try:
        wheels = tmp / "wheel"
        got = subprocess.run(
            [python or sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-input", "--no-deps", "--only-binary", ":all:", "--dest", str(wheels), spec],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )
        if got.returncode != 0:
            why = _last_line(got.stderr or got.stdout)
            if _NETWORK.search(got.stderr + got.stdout):
                raise UsageError(f"history: cannot download {spec} from the package registry (is it reachable?): "
                                 f"{why}")
            raise UsageError(f"history: pip could not download {spec}: {why}")
        found = sorted(wheels.glob("*.whl"))
        if not found:
            raise UsageError(f"history: {spec} has no wheel to unpack (the maintainer role needs one)")
        tree = tmp / "tree"
        try:
            with zipfile.ZipFile(found[0]) as zf:
                for name in zf.namelist():
                    target = (tree / name).resolve()
                    if not str(target).startswith(str(tree.resolve()) + os.sep):
                        raise UsageError(f"history: {found[0].name} holds a path outside its folder: {name[:200]}")
                zf.extractall(tree)
        except zipfile.BadZipFile as exc:
            raise UsageError(f"history: {found[0].name} is not a readable wheel: {exc}") from None
        (tree / MARKER).write_text(spec + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tree, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def package_files(folder: Path) -> dict[str, bytes]:
    """The unpacked wheel's source as project files: every file but its metadata (*.dist-info, *.data) and bytecode."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        top = rel.split("/")[0]
        if not p.is_file() or rel == MARKER or top.endswith((".dist-info", ".data")) or "__pycache__" in rel:
            continue
        out[rel] = p.read_bytes()
    return out


def apply_patch(files: dict[str, bytes], patch: bytes, what: str) -> dict[str, bytes]:
    """`files` with a -p1 unified diff applied (the `patch` program, in a temporary copy); UsageError when it does
    not apply cleanly, so a stale patch is bad input, not a reference that quietly changes nothing."""
    with tempfile.TemporaryDirectory(prefix="warp-compile-patch-") as tmp:
        root = Path(tmp) / "tree"
        for rel, data in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        patch_folder(root, patch, what)
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _driver(case: Case, m: Maintainer) -> dict[str, bytes]:
    """The driver from the case folder (its project/ or the folder itself), copied beside the unpacked package."""
    base = Path(case.path)
    for where in (base / m.driver, base / "project" / m.driver):
        if where.is_file():
            return {Path(m.driver).name: where.read_bytes()}
    raise UsageError(f"history: case {case.id}: the maintainer driver {m.driver} is not in the case folder")


def trees(case: Case, progress=None) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """project/ (the release before the fix, unpacked, and the driver) and fixed/ (the maintainers' change: the
    fixed release unpacked, or the patch applied), as the harness's file map."""
    assert case.history is not None and case.history.maintainer is not None
    m = case.history.maintainer
    driver = _driver(case, m)
    before = package_files(unpack(m.unpack, progress=progress))
    ref = m.reference
    if ref.kind == "release":
        if not ref.unpack:
            raise UsageError(f"history: case {case.id}: the maintainer reference of kind release names no release")
        after = package_files(unpack(ref.unpack, progress=progress))
    else:
        diff = Path(case.path) / ref.file
        if not ref.file or not diff.is_file():
            raise UsageError(f"history: case {case.id}: the maintainer patch {ref.file or '(none)'} is missing")
        after = apply_patch(before, diff.read_bytes(), f"{case.id}'s {ref.file}")
    files = {f"project/{k}": v for k, v in {**before, **driver}.items()}
    files.update({f"fixed/{k}": v for k, v in {**after, **driver}.items()})
    return files


def maintainer_case(case: Case) -> Case:
    """The case as the maintainer role sees it: its command, expectation and clock; the user role's output."""
    assert case.history is not None and case.history.maintainer is not None
    h, m = case.history, case.history.maintainer
    ref = m.reference.unpack if m.reference.kind == "release" else f"{m.unpack} + {m.reference.file}"
    history = History(library=h.library, before=[m.unpack], after=[ref], source=m.reference.source or h.source,
                      upstream=Expected(), clock=m.clock, role="maintainer", what_it_shows=h.what_it_shows)
    return case.model_copy(update={
        "id": case.id + ROLE_SUFFIX, "command": list(m.command), "expected": m.expected, "history": history,
        "expected_output": m.expected_output if m.expected_output is not None else case.expected_output,
        "version_overrides": {}, "reference": None, "prompt": m.prompt or case.prompt,
    })


def interpreter(case: Case, progress=None) -> str:  # type: ignore[no-untyped-def]
    """The venv of the release's dependencies (without the library), installed once."""
    assert case.history is not None and case.history.maintainer is not None
    return str(cached_venv(case.history.maintainer.deps, progress=progress))


def pinned_warp(case: Case) -> str:
    assert case.history is not None and case.history.maintainer is not None
    for r in case.history.maintainer.deps:
        name, _, version = r.partition("==")
        if name.strip().lower().replace("_", "-") == "warp-lang":
            return version.strip()
    return ""


def run_maintainer(case: Case, agent, settings, files: dict[str, bytes], trial: int = 0,  # type: ignore[no-untyped-def]
                   progress=None) -> CaseResult:
    """One trial of the maintainer role: the agent on the unpacked release, judged against the maintainers' change
    measured as a third arm of the same run (settings: the deps venv as `python`, no reference interpreter)."""
    from .harness import run_case

    return run_case(maintainer_case(case), agent, settings, trial=trial, progress=progress, files=files)
