"""Shape f (+i, g-n): a cost object that rebuilds a named unique kernel when the goal-set size changes.

Seen in NVlabs/curobo, curobo/_src/cost/cost_tool_pose.py:105-116 with the kernel builder in
curobo/_src/cost/wp_tool_pose.py:438-695 (snapshot of 2026-06-15): the pose cost keeps the compile-time
constants (goal-set size, rotation method) of its current kernel, and when a call brings other values it
builds a new kernel, renamed `pose_dist_{n}_{method}` before `wp.kernel(module="unique")`.

The shape depends on run-time data: the goal-set size comes with each call (1, 3, 1, 5 here), so each
new size builds one more unique module and a repeated size is found again by its hash. Sizes known in
advance could be built up front.
"""

__version__ = "0.4.0"
