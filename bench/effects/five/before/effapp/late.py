import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def shade(p: wp.vec3, s: float):
    r = p
    for k in range(6):
        r = wp.normalize(r + wp.vec3(wp.sin(r[1] * s), wp.cos(r[2] - s), wp.exp(-r[0] * r[0]))) * (1.0 + s)
    return r


@wp.kernel
def tone0(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 0.0)


KERNELS = [tone0]


def precise():
    """Switches fast_math on after the module loaded: its next launch rebuilds it (the late option, CS-3)."""
    wp.set_module_options({"fast_math": True})
