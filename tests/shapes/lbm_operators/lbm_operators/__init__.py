"""Shape g-t (+g-f, h): a stepper kernel that captures other operators' funcs and a lattice vector type through `self`.

Seen in Autodesk/XLB, xlb/operator/stepper/nse_stepper.py:245-380 and xlb/operator/stream/stream.py:53-100
(ba458b55): each operator builds its wp.func over a `wp.vec(q, dtype=compute)` type it captures; the
stepper's kernel calls `self.stream.warp_functional`, `self.macroscopic.warp_functional` and
`self.equilibrium.warp_functional`, and takes its population arrays as `wp.array4d(dtype=Any)`, so the
instance is made from the storage dtype at launch.

Here a D2Q9 run stores populations in float32 for the first phase and in float64 for the second, so the
float64 instances of the generic stepper and initialiser arrive after their modules loaded and both
modules are built again. The storage dtypes are known up front.
"""

__version__ = "0.3.0"
