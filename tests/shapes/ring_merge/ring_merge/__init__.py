"""Shape f (kernels created between launches): a merge kernel defined per call inside a loop over ranks.

Seen in NVIDIA/physicsnemo, physicsnemo/domain_parallel/shard_utils/point_cloud_ops.py:258-330
(merge_outputs) called in a loop at :497-512 (94b35510): the ring ball query gets one partial neighbour
result per rank and merges it into the running result with a ragged-concatenation kernel defined inside
the merge function, in point_cloud_ops' own module, which has no module-level kernel (the neighbour
kernels are imported from a sibling module).

Here `merge.merge_lists` defines its concat kernel on every call (one call per simulated rank), giving
`merge.py` a module of its own that is built once, and re-parsing the kernel every call.
"""

__version__ = "0.2.4"
