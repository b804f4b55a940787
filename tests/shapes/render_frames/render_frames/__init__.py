"""Shape f (+g-f, g-n, options): a render call that builds its ray and shading funcs and a unique
megakernel every frame.

Seen in google-deepmind/mujoco_warp, mujoco_warp/_src/render.py:656-700 (f76464fa), render(): each call
builds a ray-cast wp.func from the model's tuple of geometry types, a shading wp.func around it, and a
`module="unique"` megakernel with `module_options={"fast_math": ...}` from the render context, capturing
the light count, then launches it.

The shape depends on run-time data: the scene's geometry types change when a box is added at frame 3, so
a second megakernel module is built; frames with the same types find their module again by its hash, but
re-parse the funcs and the kernel. On warp 1.10, which has no `module_options=`, the option is set on the
kernel's unique module before its first launch.
"""

__version__ = "0.7.0"
