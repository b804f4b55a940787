"""Shape e (+h): a dispatcher that registers every int32/int64 index-type instance of a generic kernel.

Seen in isaac-sim/IsaacLab, source/isaaclab/isaaclab/utils/warp/index_kernel.py (0fa66475),
IndexKernelDispatcher: for a generic write kernel it calls `wp.overload` for every combination of
int32/int64 selector arrays when it is constructed (module-level constants in the asset modules), and
picks the instance by the dtypes of the index arrays at each call.

Here the generic kernels live in `kernels.py`; the body writers' dispatchers are built at import, but the
joint writers' module (with its dispatchers) is imported the first time the scene adds an articulation,
after the body writers have run, so its overloads land in the already-loaded `kernels` module and it is
built again. Importing the joint writers with the rest makes it one build.
"""

__version__ = "0.5.1"
