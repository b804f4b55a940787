import warp as wp


@wp.kernel
def to_points(x: wp.array(dtype=wp.vec3), scale: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = x[i] * scale
