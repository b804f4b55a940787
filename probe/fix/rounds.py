"""Fixes that compose: after the fixes `fix` keeps, diagnose the fixed copy again and offer what now applies.

A fix changes what the others are worth. Merging four small modules into one leaves a process whose precompiled
header now serves a single module (CS-12 applies where it did not); moving an option leaves the backward code of the
merged module as the largest cost (CS-10 on it). The first round's kept tree was measured anyway, so its samples
are a measurement of the fixed program: diagnosing them against the fixed copy's sources costs no extra run and
names what the next round can try. Each new finding's edits are measured on top of the kept tree against the same
original baseline, so every saving in the result is against the program as the user has it. A new finding is kept
only when the stacked tree saves more than the kept tree alone; `--write` then writes both layers as one diff.
With no proven fix in the first round, the undecided one that kept behaviour and points the right way is the base
(`fix_plan.tentative_base`): the stack's proof against the original covers both layers (curobo's pose cost: CS-9's
split saves little alone, CS-12 on the one module it leaves saves a third).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..compare.multiarm import Arm
from ..models.diagnosis import Edit, Finding
from ..models.fix import CandidateFix
from .edits import EditConflict, patched
from .policy import BELOW_LINE, fix_clock, fix_findings

Progress = Callable[[str], None]


def layered(files: dict[str, bytes], layers: list[list[Edit]]) -> dict[str, bytes]:
    """`files` with each layer of edits applied in turn (a layer's lines refer to the tree the layers before it
    left). EditConflict when one does not apply."""
    out = dict(files)
    for layer in layers:
        by_file: dict[str, list[Edit]] = {}
        for e in layer:
            by_file.setdefault(e.file, []).append(e)
        for rel, group in by_file.items():
            created = [e for e in group if e.create]
            if created:
                if rel in out:
                    raise EditConflict(f"{rel}: the file to create already exists")
                out[rel] = created[0].new.encode("utf-8")
                continue
            if rel not in out:
                raise EditConflict(f"{rel}: no such file in the tree")
            text = out[rel].decode("utf-8").splitlines(keepends=True)
            out[rel] = "".join(patched(text, group)).encode("utf-8")
    return out


def tree_diff(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """What changed between two trees, as one unified diff with git's a/ and b/ prefixes."""
    chunks = []
    for rel in sorted(set(before) | set(after)):
        a, b = before.get(rel), after.get(rel)
        if a == b:
            continue
        old = a.decode("utf-8").splitlines(keepends=True) if a is not None else []
        new = b.decode("utf-8").splitlines(keepends=True) if b is not None else []
        diff = difflib.unified_diff(old, new, fromfile=f"a/{rel}" if a is not None else "/dev/null", tofile=f"b/{rel}")
        chunks.append("".join(ln if ln.endswith("\n") else ln + "\n" for ln in diff))
    return "".join(chunks)


def new_findings(
    first: list[Finding], again: list[Finding], kept: list[str], priced_out: set[str] | None = None
) -> tuple[list[Finding], list[str]]:
    """(findings of the fixed copy worth a next round, notes on the first round's findings that are gone).

    A next-round finding is one with edits that the first round did not already measure: a mechanism it did not
    report, or the same mechanism on other modules (backward code of a module a merge made). A first-round finding
    the fixed copy no longer shows is named, so nothing disappears between rounds unexplained."""
    measured = {(f.mechanism, m) for f in first for m in f.modules or ["*"]}
    fresh = [f for f in again if f.edits and f.mechanism not in kept and f.mechanism not in (priced_out or set())
             and not all((f.mechanism, m) in measured for m in f.modules or ["*"])]
    still = {f.mechanism for f in again}
    gone = [f"{f.mechanism}: no longer fires on the tree the kept fixes leave" for f in first
            if f.mechanism not in kept and f.mechanism not in still]
    return fresh, gone


def stacked_candidate(f: Finding, key: str, on_top_of: CandidateFix) -> CandidateFix:
    """A next-round candidate: `f`'s edits (relative to the kept tree) on top of `on_top_of`'s."""
    mechs = [*on_top_of.mechanisms, f.mechanism]
    where = f"found on the tree {on_top_of.key} leaves"
    if f.below_line:
        where += f"; {BELOW_LINE}"
    if not on_top_of.improved:  # a tentative base: only the stack is judged, against the original like every arm
        where += (f"; {on_top_of.key} did not decide alone ({on_top_of.verdict}), so this measures both layers "
                  "together against the original")
    applicability = "review" if "review" in (f.applicability, on_top_of.applicability) else f.applicability
    return CandidateFix(
        key=key, mechanisms=mechs, title=f"{f.title} ({where})",
        applicability=applicability, review=f.review, edits=list(f.edits), clock=fix_clock(mechs),
        estimated_saving_ms=f.estimated_saving_ms, status="measured", on_top_of=on_top_of.key,
        below_line=f.below_line,
    )


def diagnose_kept(arm: Arm, tree: Path, engine: Any, progress: Progress | None,
                  with_below_line: bool = False) -> list[Finding]:
    """Diagnose the kept tree from the samples its arm already ran (no extra program run); with_below_line adds the
    edits it ruled out as small (fix_plan.fix_findings)."""
    from ..diagnose import diagnose_sources
    from ..measure import attach_places

    ok = [s for s in arm.samples if getattr(s, "ok", False)]
    if not ok:
        return []
    report = engine.build_report(arm.command, arm.cwd, ok, label="kept", requested=len(ok))
    if report.all_failed:
        return []
    events = getattr(getattr(ok[0], "cold", None), "events", None)
    if events is not None:
        attach_places(report, events)
    return fix_findings(diagnose_sources(report, tree, progress), with_below_line)
