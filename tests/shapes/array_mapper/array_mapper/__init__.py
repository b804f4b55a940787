"""Shape i: kernels generated from source text by `wp.map`, one per mapped function and input types.

Seen in NVIDIA/warp, warp/_src/utils.py:891-930 (create_warp_function) and :976-1320 (map, with its
map_cache) (9934a4eb2): `wp.map` turns a lambda or Python function into a warp function, generates the
source of a `map_kernel` for the input array types, `exec`s it and creates
`wp.Kernel(..., key="map_kernel", source=..., module=...)` in a module named after the mapped function,
cached by the type descriptors.

Here a wp.func with float32, vec3 and float64 overloads and two lambdas are mapped over arrays; the
float64 pass comes in a second phase, after the func's map module has loaded, so a new map kernel joins
that module and it is built again. On warp 1.10 the lambdas' names come from the salted `hash()`
(NVIDIA/warp #1696, fixed by PR #1733), so their modules change name in every process.
"""

__version__ = "0.1.5"
