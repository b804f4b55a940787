"""Measure each case's original output and launch count and store them in its case.json.

    python -m warp_compile.evals.record_outputs [--root evals/fixtures] [--case ID ...] [--check]

(--root evals/history: a history case runs on its release before the fix, from the cached venv.)

Runs the project once (cold, in the measurement sandbox, from a fresh copy), keeps the app's stdout lines (Warp's
banner and module load lines removed) as `expected_output` and the kernel launches as `launches`. The two keys
are written in place of, or just before, the `"prompt"` line so the hand-written layout of case.json is kept.
With --check: run and compare only. Regenerate MANIFEST.json afterwards (python -m warp_compile.evals.manifest
--write).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from ..probe.fix.behaviour import app_lines
from . import manifest
from .harness import _write_tree, bind_python
from .scorer import load_cases


def observe(case_dir: Path, command: list[str], timeout_s: float = 900.0, python: str | None = None
            ) -> tuple[list[str], int]:
    from ..probe.measure import run_sample

    files = manifest.files_of(case_dir)
    with tempfile.TemporaryDirectory(prefix="warp-compile-eval-") as tmp:
        copy = Path(tmp) / "a" / "project"
        _write_tree(files, "project/", copy)
        sample = run_sample(bind_python(command, python), copy, 0, timeout_s=timeout_s)
    if not sample.ok:
        raise RuntimeError(f"{case_dir.name}: {sample.failure}")
    return app_lines(sample.cold.stdout), int(sample.cold.result.launches)


def _set_key(text: str, key: str, value: object) -> str:
    line = f'  "{key}": {json.dumps(value)},\n'
    pattern = re.compile(rf'^  "{key}": .*\n', re.MULTILINE)
    if pattern.search(text):
        return pattern.sub(lambda _m: line, text, count=1)
    anchor = re.compile(r'^  "prompt": ', re.MULTILINE)
    m = anchor.search(text)
    if not m:
        raise RuntimeError('case.json has no top-level "prompt" line to insert before')
    return text[: m.start()] + line + text[m.start():]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m warp_compile.evals.record_outputs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent / "fixtures")
    p.add_argument("--case", action="append", default=[])
    p.add_argument("--check", action="store_true")
    ns = p.parse_args(argv)
    bad = 0
    for case in load_cases(ns.root):
        if ns.case and case.id not in ns.case:
            continue
        python = None
        if case.history is not None:  # a history case prints what it prints on the release before the fix
            from .history import interpreters

            python = interpreters(case, progress=print)[0]
        lines, launches = observe(Path(case.path), case.command, python=python)
        meta = Path(case.path) / "case.json"
        if ns.check:
            same = lines == case.expected_output and launches == case.launches
            bad += not same
            print(f"{case.id}: {'same' if same else 'DIFFERS'} ({launches} launches, {lines})")
            continue
        text = _set_key(meta.read_text(encoding="utf-8"), "expected_output", lines)
        text = _set_key(text, "launches", launches)
        json.loads(text)  # still valid JSON
        meta.write_text(text, encoding="utf-8")
        print(f"{case.id}: {launches} launches, {lines}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
