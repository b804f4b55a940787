"""Shape g-n (+i, g-f): a kernel builder that bakes a config's numbers in as constants and names its
unique kernels by a hash of them.

Seen in NVlabs/curobo, curobo/_src/perception/mapper/kernel/builder/builder_camera_integrate.py:24-110
with the naming helpers of curobo/_src/util/warp.py:24-56 (snapshot of 2026-06-15): the builder turns the
grid, voxel and camera numbers into `wp.constant`s, tags every kernel name with a sha1 of those numbers,
creates the kernels with `module="unique"` and calls hash/transform helper funcs passed in as arguments;
each call builds a fresh bundle, with no Python cache.

Here two mapper configs are integrated, and the first one is built a second time: four unique modules are
built (two kernels x two configs) and the rebuilt bundle finds its modules again by hash. The configs are
fixed, so both bundles could be built up front.
"""

__version__ = "0.8.1"
