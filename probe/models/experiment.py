"""What `warp-compile try` returns: the command against the command with the settings, and the lines to paste."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .comparison import Comparison


class TryResult(BaseModel):
    """`warp-compile try`: the command as it is against the command with the settings, and what to paste."""

    kind: str = "warp-compile-try"
    command: list[str]
    cwd: str
    settings: dict[str, bool | int | str | None]
    applied: dict[str, str] = Field(default_factory=dict)  # as the hook reported it in the "with" arm
    paste: list[str] = Field(default_factory=list)  # the lines that make the experiment permanent
    comparison: Comparison

    @property
    def exit_code(self) -> int:
        return self.comparison.exit_code


def describe(settings: dict[str, bool | int | str | None]) -> str:
    """Settings as they are written on the command line: `enable_backward=False, max_unroll=4`."""
    return ", ".join(f"{k}={v!r}" for k, v in settings.items())
