"""Text for `warp-compile try`: the settings, whether they took, the comparison, and what to paste if it won."""

from __future__ import annotations

from ..models.experiment import TryResult, describe
from .comparison import render_comparison as comparison_text


def render_try(r: TryResult) -> str:
    lines = [f"warp-compile try: {describe(r.settings)}"]
    took = ", ".join(f"{k} {v}" for k, v in r.applied.items()) or "nothing reported by the hook"
    lines.append(f"  in the measured process: {took}")
    lines.append("")
    lines.append(comparison_text(r.comparison))
    if r.comparison.verdict == "IMPROVED" and r.paste:
        lines.append("")
        lines.append("To keep it, at the entry point before anything imports the kernel modules:")
        lines.extend(f"    {line}" for line in r.paste)
    elif r.comparison.verdict == "NO_EFFECT":
        lines.append("")
        lines.append("Nothing to keep: with these settings Warp compiled exactly the same modules (same hashes and "
                     "source), so they cannot change this application's compile time.")
    return "\n".join(lines)
