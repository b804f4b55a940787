"""The one pydantic base of the schema models: unknown keys are ignored, so a report from a newer tool still loads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore")
