"""Run a blocking core call (measure, diagnose) from an async tool: worker thread, progress, cancellation, lock.

- The core runs in a worker thread with a `threading.Event` cancel flag. When the request is cancelled (the client
  cancels, or its request times out), a watcher task sets the flag; the sandbox then kills the child's process
  tree, removes its `warp-compile-*` temp root and raises `Cancelled`, and only then does the request end.
- The core's progress strings ("sample 1: cold run", ...) are forwarded as MCP progress notifications, numbered
  1, 2, ... of an expected total; a last one says "done".
- One measurement at a time per process (parallel runs corrupt each other's timing): a second caller waits and its
  progress says so. The lock is a `threading.Lock` polled from the event loop, so it holds across event loops
  and server instances in one process, and a caller cancelled while waiting never holds it.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

T = TypeVar("T")
Work = Callable[[Callable[[str], None], threading.Event], T]

WAITING = "waiting for another measurement to finish"
POLL_S = 0.1

log = logging.getLogger("warp_compile.server")
_MEASUREMENT = threading.Lock()


class Progress:
    """Numbered progress notifications for one request (a no-op when the caller asked for none)."""

    def __init__(self, ctx: Context | None, expected: int) -> None:
        self.ctx = ctx
        self.expected = max(1, expected)
        self.sent = 0
        self.extra = 0  # notifications beyond the core's own steps (waiting)

    @property
    def total(self) -> int:
        return max(self.expected + self.extra + 1, self.sent + 1)

    async def say(self, message: str) -> None:
        self.sent += 1
        await self._send(self.sent, message)

    async def note(self, message: str) -> None:
        """A notification that is not one of the core's steps (e.g. waiting for the lock)."""
        self.extra += 1
        await self.say(message)

    async def done(self, message: str = "done") -> None:
        total = self.total
        self.sent = total
        await self._send(total, message, total)

    async def _send(self, progress: int, message: str, total: int | None = None) -> None:
        total = self.total if total is None else total
        log.info("progress %s/%s: %s", progress, total, message)
        if self.ctx is None:
            return
        try:
            await self.ctx.report_progress(progress, total, message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # the client went away: keep working
            pass


@asynccontextmanager
async def one_measurement(progress: Progress) -> AsyncIterator[None]:
    if not _MEASUREMENT.acquire(blocking=False):
        await progress.note(WAITING)
        while not _MEASUREMENT.acquire(blocking=False):
            await anyio.sleep(POLL_S)
    try:
        yield
    finally:
        _MEASUREMENT.release()


def measurement_running() -> bool:
    return _MEASUREMENT.locked()


async def run_core(work: Work[T], progress: Progress, *, exclusive: bool = True) -> T:
    """`work(progress_callback, cancel_event)` in a worker thread; see the module docstring."""
    from ..probe.sandbox import Cancelled

    cancel = threading.Event()
    send, receive = anyio.create_memory_object_stream[str](max_buffer_size=math.inf)

    def report(message: str) -> None:  # called in the worker thread
        try:
            anyio.from_thread.run_sync(send.send_nowait, message)
        except Exception:  # the request is over or the loop is gone: progress is best effort
            pass

    async def pump() -> None:
        async with receive:
            async for message in receive:
                await progress.say(message)

    watch_scope = anyio.CancelScope()

    async def watch() -> None:
        try:
            with watch_scope:
                await anyio.sleep_forever()
        finally:
            if not watch_scope.cancel_called:  # the request itself was cancelled: stop the core
                cancel.set()

    result: Any = None
    error: Exception | None = None  # raised after the task group, so it is not wrapped in an ExceptionGroup
    async with _maybe_exclusive(exclusive, progress):
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump)
            tg.start_soon(watch)
            try:
                result = await anyio.to_thread.run_sync(work, report, cancel)
            except Cancelled:
                log.info("core call cancelled: child tree killed, temp root removed")
                await anyio.lowlevel.checkpoint()  # re-raises the request's cancellation
                error = ToolError("cancelled")
            except Exception as exc:
                error = exc
            finally:
                watch_scope.cancel()
                send.close()
        if error is not None:
            raise error
        await progress.done()
    return result


@asynccontextmanager
async def _maybe_exclusive(exclusive: bool, progress: Progress) -> AsyncIterator[None]:
    if exclusive:
        async with one_measurement(progress):
            yield
    else:
        yield
