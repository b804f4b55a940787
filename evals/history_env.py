"""A cached virtual environment per pinned release set, for the history suite.

A history case runs a library release as its users had it: installed from the package registry with pip, never
from this checkout. Each set of pinned requirements gets one venv under the cache directory (outside the repo,
`~/.cache/warp-compile/history` or $WARP_COMPILE_HISTORY_CACHE), keyed by the requirements and the interpreter,
built in a temporary folder and renamed into place only once pip succeeded, so a failed or interrupted install
leaves nothing half made. When the registry cannot be reached the caller gets one line, not pip's traceback.

A reference the registry lacks (the maintainers' change merged but never released) is the release before it with
their change as a patch: applied in the venv's own copy of the installed package, in the same temporary folder,
before the venv is marked complete, so it is keyed by the patch's bytes too and never touches a shared install.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..probe.errors import UsageError

CACHE_ENV = "WARP_COMPILE_HISTORY_CACHE"
MARKER = "warp-compile-history.json"  # written last: a venv without it is incomplete and is made again
_NETWORK = re.compile(
    r"(Could not fetch URL|Failed to establish a new connection|Name or service not known|Temporary failure in name "
    r"resolution|Network is unreachable|Connection refused|ConnectTimeout|ReadTimeout|Max retries exceeded|"
    r"No matching distribution found|Could not find a version that satisfies)", re.I)


def cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "warp-compile" / "history"


def _key(requirements: list[str], python: str, patch: bytes | None = None) -> str:
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=False).stdout.strip() or "unknown"
    spec: dict[str, object] = {"requirements": sorted(requirements), "python": version}
    if patch is not None:
        spec["patch"] = hashlib.sha256(patch).hexdigest()
    blob = json.dumps(spec, sort_keys=True)
    head = re.sub(r"[^A-Za-z0-9.]+", "-", requirements[0]).strip("-") if requirements else "env"
    if patch is not None:
        head += "-patched"
    return f"{head}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def cached_venv(requirements: list[str], python: str | None = None, progress=None,  # type: ignore[no-untyped-def]
                patch: Path | None = None) -> Path:
    """The interpreter of a venv holding exactly `requirements` (pip specs), made once and reused; with `patch` (a
    unified diff, -p1, paths relative to site-packages) applied to the venv's installed files.

    Raises UsageError (one line) when pip cannot install them: the registry unreachable, or a release it lacks; or
    when the patch cannot be read or does not apply."""
    python = python or sys.executable
    diff = None
    if patch is not None:
        try:
            diff = patch.read_bytes()
        except OSError as exc:
            raise UsageError(f"history: cannot read the patch {patch}: {exc.strerror or exc}") from None
    root = cache_root()
    venv = root / _key(requirements, python, diff)
    if (venv / MARKER).is_file() and venv_python(venv).exists():
        return venv_python(venv)
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / f".{venv.name}.lock", "w")  # noqa: SIM115 (held until the venv is in place)
    except OSError as exc:
        raise UsageError(f"history: cannot create the cache directory {root}: {exc.strerror or exc}") from None
    with lock:
        # one installer per venv: two test workers (or two evals) asking at once wait for one pip, not race two
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (venv / MARKER).is_file() and venv_python(venv).exists():
            return venv_python(venv)
        return _install(requirements, python, root, venv, progress, diff, patch)


def _install(requirements: list[str], python: str, root: Path, venv: Path, progress,  # type: ignore[no-untyped-def]
             diff: bytes | None = None, patch: Path | None = None) -> Path:
    if progress:
        progress(f"history: installing {' '.join(requirements)} into {venv} (once)"
                 + (f", patched with {patch.name}" if patch is not None else ""))
    tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
    try:
        made = subprocess.run([python, "-m", "venv", str(tmp)], capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise UsageError(f"history: cannot create a venv with {python}: {_last_line(made.stderr)}")
        pip = subprocess.run(
            [str(venv_python(tmp)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-input", *requirements],
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        ) if requirements else None  # a maintainer role whose release needs nothing besides: an empty venv
        if pip is not None and pip.returncode != 0:
            why = _last_line(pip.stderr or pip.stdout)
            if _NETWORK.search(pip.stderr + pip.stdout):
                raise UsageError(f"history: cannot install {' '.join(requirements)} from the package registry "
                                 f"(is it reachable?): {why}")
            raise UsageError(f"history: pip could not install {' '.join(requirements)}: {why}")
        record: dict[str, object] = {"requirements": requirements}
        if diff is not None:
            _apply_patch(tmp, diff, patch)
            name = patch.name if patch is not None else ""
            record["patch"] = {"file": name, "sha256": hashlib.sha256(diff).hexdigest()}
        (tmp / MARKER).write_text(json.dumps(record), encoding="utf-8")
        # a venv left without its marker (an older interrupted install) is replaced; the move itself is atomic
        if venv.exists():
            shutil.rmtree(venv)
        os.replace(tmp, venv)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _fix_paths(venv, tmp)
    return venv_python(venv)


def site_packages(venv: Path) -> Path:
    """The venv's purelib folder, asked of its own interpreter (its layout differs between platforms)."""
    got = subprocess.run([str(venv_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=False)
    path = Path(got.stdout.strip())
    if got.returncode != 0 or not path.is_dir():
        raise UsageError(f"history: cannot find the site-packages of {venv}: {_last_line(got.stderr)}")
    return path


def patch_folder(root: Path, diff: bytes, what: str) -> None:
    """Apply a -p1 unified diff to the files under `root`, or change nothing and raise UsageError (one line).

    A dry run first, so a diff that does not apply leaves every file as it was; `--fuzz=0`, so a hunk whose context
    moved is a stale patch (bad input), not one applied somewhere near. Both the user role's patched venv and the
    maintainer role's patched source go through here."""
    if shutil.which("patch") is None:
        raise UsageError(f"history: applying {what} needs the `patch` program, which is not on PATH")
    for dry in (True, False):
        run = subprocess.run(["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "--fuzz=0",
                              "-d", str(root), *(["--dry-run"] if dry else [])],
                             input=diff, capture_output=True, check=False)
        if run.returncode != 0:
            why = _last_line(run.stdout.decode(errors="replace") + run.stderr.decode(errors="replace"))
            raise UsageError(f"history: {what} does not apply to the release: {why}")


def _apply_patch(venv: Path, diff: bytes, patch: Path | None) -> None:
    """Apply a -p1 unified diff to the venv's own installed files (the venv is still the temporary folder)."""
    patch_folder(site_packages(venv), diff, patch.name if patch is not None else "the patch")


def _fix_paths(venv: Path, old: Path) -> None:
    """A venv moved after it was made still names its old folder in pyvenv.cfg and script shebangs; the
    interpreter itself does not depend on them (the suite runs `bin/python` only), but keep them truthful."""
    for f in [venv / "pyvenv.cfg", *(venv / "bin").glob("*")] if (venv / "bin").is_dir() else [venv / "pyvenv.cfg"]:
        try:
            if f.is_file() and not f.is_symlink() and f.stat().st_size < 1_000_000:
                text = f.read_text(encoding="utf-8")
                if str(old) in text:
                    f.write_text(text.replace(str(old), str(venv)), encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return ((errors or lines or ["no output"])[-1])[:300]
