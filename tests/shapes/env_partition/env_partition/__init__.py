"""Shape b (a method that defines a differently-typed kernel in each branch of an ``if`` on an attribute),
with d (the kernels go through a dictionary cache keyed on a suffix string) and g-f (the kernels call
methods and use argument struct types taken from ``self``'s topology and partition objects).

Seen in NVIDIA/warp, warp/_src/fem/space/partition.py:168-265 ``NodePartition.rebuild()`` (HEAD snapshot
9934a4eb2): depending on whether the geometry partition is the whole geometry, ``rebuild`` declares one of
two ``@cache.dynamic_kernel(suffix=...)`` kernels whose signatures use ``self.geo_partition.CellArg`` and
``self.space_topology.TopologyArg`` and whose bodies call the topology's functions; the cache (fem/cache.py)
makes one ``<file>.dyn.<key>`` module per suffix.

Here: ``EnvPartition.rebuild()`` does the same with a small ``specialized_kernel`` cache. Two topologies (quad
and triangle grids) x two partitions (whole and a cell subset) are each rebuilt twice; the second rebuild is a
cache hit, the first builds one small ``.dyn.`` module per (topology, partition kind), next to the file's own
module, so the stable kernels are spread over five modules. Every combination is known when the partitions
are made.
"""

__version__ = "0.9.2"
