"""A mechanism of the knowledge base as text: one entry in full (`explain CS-3`), or the list (`explain --list`)."""

from __future__ import annotations

from ..models.knowledge import Mechanism


def render_text(m: Mechanism) -> str:
    """The mechanism for people at a terminal: header, the Markdown body, then how to verify."""
    out = [f"{m.id}  {m.title}", f"backends: {', '.join(m.backends)}", ""]
    out.append(m.body.rstrip())
    out += ["", "## Verify the fix"]
    out += [f"- {v}" for v in m.verification]
    return "\n".join(out) + "\n"


def render_list(rows: list[tuple[Mechanism, float | None]]) -> str:
    """One line per mechanism: id, title, backends (and the search score when given)."""
    width = max((len(m.id) for m, _ in rows), default=5)
    lines = []
    for m, score in rows:
        prefix = f"{score:4.2f}  " if score is not None else ""
        lines.append(f"{prefix}{m.id:<{width}}  {m.title}  [{', '.join(m.backends)}]")
    return "\n".join(lines) + "\n"
