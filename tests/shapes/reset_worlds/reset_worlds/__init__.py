"""Shape f (+g-n): unique kernels defined inside a reset function called every episode.

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/io.py:2435-2700 (f76464fa), reset_data: the function
defines several `module="unique"` kernels (clear forces, restore positions, zero counters, ...) each with
`if wp.static(mask is not None)` so a masked reset skips worlds, launches them, and is called on every
episode reset.

Here `reset(model, data, mask=None)` defines four unique kernels per call; episodes alternate between a
full reset and a masked one, so eight unique modules are built (two variants of four stable kernels) and the
kernels are parsed again at every reset.
"""

__version__ = "0.6.0"
