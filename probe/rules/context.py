"""What every rule reads: the measurement, the static scan and the hash diffs, plus small shared helpers.

Rules are pure functions `evaluate(ctx) -> RuleResult`; they read facts only, never a project's name or path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from warp_compile.probe.diagnosis_models import HashChange, Location
from warp_compile.probe.models import Build, Report
from warp_compile.probe.scan_models import ScanFacts


@dataclass
class RuleContext:
    report: Report
    scan: ScanFacts | None
    changes: list[HashChange] = field(default_factory=list)
    root: Path | None = None  # the scanned source root; locations are made relative to it

    @property
    def samples(self) -> int:
        return max(0, self.report.samples - self.report.failed_samples)

    @property
    def loads(self) -> list[Build]:
        """Cold-run builds that produced a loaded module (compiled or cached)."""
        return [b for b in self.report.builds if b.status in ("compiled", "cached")]

    @property
    def compiled(self) -> list[Build]:
        return [b for b in self.report.builds if b.status == "compiled"]

    @property
    def devices(self) -> set[str]:
        return {b.device for b in self.report.builds if b.device}

    @property
    def cpu_only(self) -> bool:
        devs = self.devices
        return bool(devs) and all(d == "cpu" or d.startswith("cpu") for d in devs)

    def rel(self, file: str) -> str:
        """A path relative to the source root when it lies inside it, else as recorded."""
        if self.root is None:
            return file
        try:
            p = Path(file)
            if not p.is_absolute():
                return file
            rel = os.path.relpath(p, self.root)
        except ValueError:
            return file
        return file if rel.startswith("..") else Path(rel).as_posix()

    def loc(self, file: str, line: int, note: str = "") -> Location:
        return Location(file=self.rel(file), line=line, note=note)
