"""Shape d (a ``functools.cache`` factory keyed on a number), with h (the kernels are ``Any``-typed and
``module="unique"``, so their float32/float64 instances are made at launch), g-n (the tile size is captured
as a compile-time number) and i (the kernel function is renamed per tile size before ``wp.kernel``).

Seen in NVIDIA/warp, warp/_src/optim/linear.py:579-612 ``_create_tiled_dot_kernels(tile_size)`` (HEAD
snapshot 9934a4eb2), with the segmented variant at :614-697 and the module-level ``batch_dot_kernel`` at :699:
the cached factory defines generic ``module="unique"`` block-dot and block-sum kernels for one tile size; the
solvers call it when they are built, and the array dtype picks the instance at the first launch.

Here: ``dot_kernels(tile)`` makes a generic unique ``block_dot_<tile>`` per tile size (no tile ops: the size
bounds a ``wp.static`` loop), and ``reduce_parts`` is a module-level generic unique kernel that never
changes. The size goes into the function's name because on Warp 1.10 generic unique kernels that differ
only in a captured number share one module (NVIDIA/warp issue #1231). Tile sizes 16 and 32 are used on
float32 arrays, then on float64 arrays: each of the three unique modules is built for float32 and built
again when its float64 instance arrives. Tile sizes and dtypes are fixed in the program.
"""

__version__ = "0.4.0"
