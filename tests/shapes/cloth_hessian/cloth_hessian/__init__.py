"""Shape f (kernels created between launches): a kernel defined inside a method called every solver iteration.

Seen in newton-physics/newton, newton/_src/solvers/style3d/collision/collision.py:249-270 (v1.0.0),
Collision.hessian_multiply: the method defines a small block-diagonal Hessian-times-vector kernel and
launches it, on every PCG iteration, in collision.py's module, which has no other kernel (the solver's
kernels are imported from collision/kernels.py). Fixed in 99ddcef3e (#3243), which moved the kernel to
kernels.py at module scope.

Here `ClothContacts.hessian_times` does the same: its kernel is re-declared 40 times (5 steps x 8 PCG
iterations) and gives `contacts.py` a module of its own, built once beside `kernels.py`.
"""

__version__ = "0.9.0"
