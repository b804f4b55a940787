"""Cache maintenance behind --rebuild: the user's documented way to force a clean build."""

import warp as wp


def clear_caches() -> None:
    wp.clear_kernel_cache()
    wp.clear_lto_cache()
