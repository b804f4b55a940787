"""Shape e (+g-t): operators that build vector types and kernels per precision policy.

Seen in Autodesk/XLB, xlb/operator/precision_caster/precision_caster.py:44-85 and
xlb/operator/stream/stream.py:53-100 (ba458b55), built from Operator.__init__ (operator.py:31): each
operator instance builds `wp.vec(q, dtype=...)` types from its precision policy and defines its
wp.func and kernel over them in its own file's module.

Here a simulation makes its cast and stream operators lazily, the first time each precision policy
(fp32/fp32, fp64/fp32, fp64/fp64) runs, so each new policy adds kernels to the already-loaded
`cast` and `stream` modules and both are built again. The three policies are known up front.
"""

__version__ = "0.2.0"
