"""Transformations composed into one plan, in the order they need.

Fixes that are traps for each other become one plan instead of a refusal: sharing a module (CS-9) is worse than
nothing while kernels are still created after that module first loads, so the plan creates them at import first; an
option the shared module has would start to apply late, so the plan moves it before the first load too. Each step
carries its edits, what a person must check (`review`), and, when its precondition failed, which (`why_not`); a
plan with a failed step has no edits and says which step stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...models.diagnosis import Edit
from ..edits import merge_edits

# the order steps apply in (a plan lists them so): kernels exist first, then they share a module, then that module
# gets its options, then the process-wide header
ORDER = ("cache the factory", "create at import", "move to module scope", "arguments", "module", "option", "header")


@dataclass
class Step:
    what: str  # one of ORDER
    edits: list[Edit] = field(default_factory=list)
    review: list[str] = field(default_factory=list)  # what a person must check; empty: meaning kept exactly
    why_not: str = ""  # the precondition that failed (no edits then)
    done: str = ""  # one clause saying what the step does, for the finding's text

    @property
    def ok(self) -> bool:
        return not self.why_not and bool(self.edits)


def failed(what: str, why: str) -> Step:
    return Step(what=what, why_not=why)


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)

    def add(self, step: Step | None) -> Plan:
        if step is not None:
            self.steps.append(step)
        return self

    @property
    def why_not(self) -> str:
        """The first failed step's precondition, named by its step; "" when every step can be made."""
        bad = next((s for s in self.steps if s.why_not), None)
        if bad is not None:
            return f"{bad.what}: {bad.why_not}"
        return "" if any(s.edits for s in self.steps) else "no step of the plan has an edit"

    @property
    def edits(self) -> list[Edit]:
        if self.why_not:
            return []
        ordered = sorted(self.steps, key=lambda s: ORDER.index(s.what) if s.what in ORDER else len(ORDER))
        return merge_edits([e for s in ordered for e in s.edits])

    @property
    def applicability(self) -> str:
        if self.why_not:
            return "manual"
        return "review" if any(s.review for s in self.steps) else "automatic"

    @property
    def review(self) -> str:
        return "; ".join(r for s in self.steps for r in s.review)

    @property
    def summary(self) -> str:
        """The steps in order, as one sentence: what the plan does."""
        done = [s.done for s in sorted(self.steps, key=lambda s: ORDER.index(s.what) if s.what in ORDER else 9)
                if s.done and s.edits]
        return "; then ".join(done)
