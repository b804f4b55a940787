"""What the server's tools return beyond the core models: the server's own handles (a kept report's id)."""

from __future__ import annotations

from warp_compile.probe.models.diagnosis import Diagnosis


class ServedDiagnosis(Diagnosis):
    """A Diagnosis plus the id under which the server keeps its measurement (warp-compile://reports/{report_id})."""

    report_id: str | None = None

    @classmethod
    def of(cls, diagnosis: Diagnosis, report_id: str | None) -> ServedDiagnosis:
        return cls.model_validate({**diagnosis.model_dump(), "report_id": report_id})
