"""The pytest entry point."""

from __future__ import annotations

from _pytest.config import _console_main


if __name__ == "__main__":
    raise SystemExit(_console_main())
