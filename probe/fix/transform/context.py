"""What a transformation reads of the diagnosis it serves: the project's sources, the scan and the run's record.

A protocol, so the layer (transform/, place/) needs no rule module: rules/context.py's RuleContext has them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from ...models import KernelInfo, Report
    from ...models.diagnosis import Location
    from ...models.scan import KernelDef, ScanFacts
    from ..edits import SourceView


class Project(Protocol):
    report: Report
    scan: ScanFacts | None
    sources: SourceView
    root: Path | None

    def rel(self, file: str) -> str: ...

    def loc(self, file: str, line: int, note: str = "") -> Location: ...

    def scan_kernel(self, info: KernelInfo) -> KernelDef | None: ...
