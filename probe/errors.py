"""Errors the front ends turn into one clear line (CLI: exit code; MCP: a tool error)."""


class WarpCompileError(Exception):
    """A problem with the user's input or environment; the message is shown as is, without a traceback."""

    exit_code = 2


class UsageError(WarpCompileError):
    """Bad arguments, missing or unreadable files, unknown ids: exit 2."""


class ReportError(UsageError):
    """A report file that is missing, damaged, of another type or of another schema version: exit 2."""


class RunFailed(WarpCompileError):
    """The measured command failed in every sample: exit 1."""

    exit_code = 1
