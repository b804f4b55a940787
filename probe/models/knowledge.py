"""A compile-time mechanism (CS-n) as the knowledge pages describe it: the schema every view of it carries."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MechanismFields(BaseModel):
    """The structured fields of a mechanism's front matter: what every view of it (file, tool result) carries."""

    id: str
    number: int
    title: str
    backends: list[str]
    signals: list[str]
    applies_when: list[str]
    does_not_apply_when: list[str]
    fix: list[str]
    verification: list[str]
    observed: list[str]


class Mechanism(MechanismFields):
    """One compile-time mechanism (CS-n): when it applies, what shows it, how to fix and verify the fix."""

    keywords: list[str]
    body: str = Field(description="the Markdown body after the front matter")
    sections: dict[str, str] = Field(default_factory=dict, description="'## ' heading -> section text")
