"""Process set-up: a private scratch cache removed at exit, and caching off (so nothing is ever reused)."""

import atexit
import shutil
import tempfile

import warp as wp


def prepare() -> None:
    scratch = tempfile.mkdtemp(prefix="keeper-")
    wp.config.kernel_cache_dir = scratch
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    wp.config.cache_kernels = False
