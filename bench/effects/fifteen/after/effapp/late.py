import warp as wp

wp.set_module_options({"enable_backward": False, "fast_math": True})


@wp.func
def shade(p: wp.vec3, s: float):
    r = p
    for k in range(14):
        r = wp.normalize(r + wp.vec3(wp.sin(r[1] * s), wp.cos(r[2] - s), wp.exp(-r[0] * r[0]))) * (1.0 + s)
    return r


@wp.kernel
def tone0(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 0.0)

@wp.kernel
def tone1(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 1.0)

@wp.kernel
def tone2(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 2.0)

@wp.kernel
def tone3(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 3.0)

@wp.kernel
def tone4(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 4.0)

@wp.kernel
def tone5(x: wp.array(dtype=wp.vec3), s: float, out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = shade(x[i], s + 5.0)


KERNELS = [tone0, tone1, tone2, tone3, tone4, tone5]
