"""What the MCP server's tools return beyond the core results: the same models plus the server's own handles.

Here with every other result type, so the schema docs, the tests and any other front end read one definition; the
server (server/app.py) only fills them.
"""

from __future__ import annotations

from pydantic import Field

from .diagnosis import Diagnosis
from .knowledge import MechanismFields


class ServedDiagnosis(Diagnosis):
    """A Diagnosis plus the id under which the server keeps its measurement (warp-compile://reports/{report_id})."""

    report_id: str | None = None

    @classmethod
    def of(cls, diagnosis: Diagnosis, report_id: str | None) -> ServedDiagnosis:
        return cls.model_validate({**diagnosis.model_dump(), "report_id": report_id})


class MechanismResult(MechanismFields):
    """A mechanism for an agent: the structured fields here, the Markdown text once, in the text content.

    `sections` (the Markdown split by heading) is filled only when asked for; the text content then lists the
    headings instead of repeating the text (server/lean.py's explain_text).
    """

    sections: dict[str, str] | None = Field(default=None, description="'## ' heading -> text, when asked for")
    note: str | None = Field(default=None, description="which mechanism a keyword query matched")
