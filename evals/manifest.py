"""Hashes of the shipped fixtures, so a baseline is measured from the files as shipped, never from an edited copy.

`evals/fixtures/MANIFEST.json` maps each fixture file (posix path under fixtures/) to its sha256. Bytecode
(`__pycache__`, `*.pyc`), which pip writes at install, is not part of a fixture. Regenerate with
`python -m warp_compile.evals.manifest --write` after editing a fixture; tests/test_eval.py checks it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

NAME = "MANIFEST.json"


def _skip(rel: Path) -> bool:
    return "__pycache__" in rel.parts or rel.suffix in (".pyc", ".pyo") or rel.as_posix() == NAME


def files_of(root: Path) -> dict[str, bytes]:
    """Every fixture file under `root` (bytecode and the manifest itself left out), read into memory."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and not _skip(rel):
            out[rel.as_posix()] = p.read_bytes()
    return out


def digest(files: dict[str, bytes]) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in sorted(files.items())}


def build(root: Path) -> dict:
    return {"algorithm": "sha256", "files": digest(files_of(root))}


def load(root: Path) -> dict[str, str] | None:
    path = root / NAME
    if not path.is_file():
        return None
    return dict(json.loads(path.read_text(encoding="utf-8"))["files"])


def differences(want: dict[str, str], got: dict[str, str], prefix: str = "") -> list[str]:
    """Files under `prefix` that were changed, added or removed (sorted, posix paths)."""
    keys = {k for k in set(want) | set(got) if k.startswith(prefix)}
    return sorted(k for k in keys if want.get(k) != got.get(k))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m warp_compile.evals.manifest", description=__doc__)
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent / "fixtures")
    p.add_argument("--write", action="store_true", help="write MANIFEST.json (default: check it)")
    ns = p.parse_args(argv)
    fresh = build(ns.root)
    if ns.write:
        (ns.root / NAME).write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {ns.root / NAME}: {len(fresh['files'])} files")
        return 0
    diff = differences(load(ns.root) or {}, fresh["files"])
    for d in diff:
        print(f"differs: {d}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
