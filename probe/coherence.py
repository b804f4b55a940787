"""Does a finding say one thing? Checks that its parts agree: the applicability with the edits, the fix text with
who owns the code, the advice with itself.

Texts are assembled from pieces per rule, per ownership and per code shape; a piece that fits one shape can be
left in by another (a dependency's closure kernel told "register the instances" beside "the application cannot
register them"). The checks are pure and cheap, so the test suite runs them over every rule's findings in both
ownerships, and the engine can keep a finding from leaving with a contradiction.
"""

from __future__ import annotations

import re

from .dependency_advice import installed_paths
from .models.diagnosis import Finding

# (a claim, a claim it cannot stand beside): both in one finding's fix and review is a contradiction
_EXCLUSIVE = (
    (re.compile(r"cannot register its instances"), re.compile(r"resolve to the registered overloads"),
     "it says the instances cannot be registered and that launches resolve to the registrations"),
    (re.compile(r"not yours to edit|do not edit it|does not own"), re.compile(r"^(?:Add|Move|Replace) .* in /"),
     "it says the code is not the project's and tells the user to change it"),
)


def contradictions(f: Finding) -> list[str]:
    """What in `f` contradicts something else in it (empty when it reads as one claim)."""
    out: list[str] = []
    advice = f"{f.fix}\n{f.review}"
    if f.applicability == "manual" and f.edits:
        out.append("applicability is manual but the finding carries edits")
    if f.edits and re.search(r"\bno edit\b", f.review):
        out.append('the review says "no edit" beside the edits it carries')
    if f.applicability in ("automatic", "review") and not f.edits:
        out.append(f"applicability is {f.applicability} but the finding has no edit")
    for a, b, why in _EXCLUSIVE:
        if a.search(advice) and b.search(advice):
            out.append(why)
    for path in installed_paths(f.fix):
        out.append(f"the fix text points at an installed file ({path})")
    deps = {loc.file for loc in f.locations if loc.owner == "dependency"}
    for e in f.edits:
        if e.file in deps or "site-packages/" in e.file or "dist-packages/" in e.file:
            out.append(f"an edit changes an installed file ({e.file})")
    if f.upstream is not None and f.upstream.edits and f.edits:
        shared = {e.file for e in f.upstream.edits} & {e.file for e in f.edits}
        if shared:
            out.append(f"the same file is both the library's change and the application's edit ({sorted(shared)})")
    return out
