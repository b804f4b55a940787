"""Shape e (+i): one kernel family per precision, kernels renamed before decoration.

Seen in NVIDIA/physicsnemo, physicsnemo/nn/functional/geometry/deform/_warp_impl/energy_kernels.py:127-135,
955-1060 (94b35510), with the dtype table in energy_op.py:53-80: generic energy kernels are made per
(coordinate dimension, simplex dimension) by factories, renamed through a small helper before `wp.kernel`,
and turned into float32 and float64 families with `wp.overload`; a dict keyed by the tensor dtype picks one.

Here the float32 family is registered at import, and the float64 family is registered the first time a
float64 mesh is evaluated, after the float32 kernels have run, so the module of `energies.py` is built twice.
Both families could be registered up front.
"""

__version__ = "0.3.0"
