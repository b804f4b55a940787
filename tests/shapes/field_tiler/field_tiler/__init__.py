"""Shape h: a unique generic kernel whose instances are made one field dtype at a time, in a loop.

Seen in newton-physics/newton, newton/_src/solvers/mujoco/kernels.py:1954-1962 (repeat_array_kernel) with
the loop in newton/_src/solvers/mujoco/solver_mujoco.py:7616-7645 (41a5392c1), and the same code in
mujocolab/mjlab, src/mjlab/sim/randomization.py:9-55 (0eda4e73, expand_model_fields): a
`module="unique"` kernel over `wp.array(dtype=Any)` repeats each per-body model field for every world,
launched once per dataclass field to expand.

Here the fields are float32, vec3, quat, mat33 and int32 arrays, so every new field dtype adds an
instance to the already-loaded unique module, which is built five times, each time with all instances so
far. The dtypes are fixed by the model class and could be instantiated up front.
"""

__version__ = "0.2.0"
