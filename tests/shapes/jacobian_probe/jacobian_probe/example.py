"""A planar four-link arm: kinematics kernels and a Jacobian helper, as in an example script."""

import numpy as np
import warp as wp

DEVICE = "cpu"
NBODY = 4
Z_AXIS = wp.constant(wp.vec3(0.0, 0.0, 1.0))


@wp.kernel
def arm_pose(q: wp.array(dtype=float), lengths: wp.array(dtype=float), body_q: wp.array(dtype=wp.transform)):
    tf = wp.transform_identity()
    for b in range(wp.static(NBODY)):
        tf = wp.transform_multiply(tf, wp.transform(wp.vec3(0.0, 0.0, 0.0), wp.quat_from_axis_angle(Z_AXIS, q[b])))
        body_q[b] = tf
        tf = wp.transform_multiply(tf, wp.transform(wp.vec3(lengths[b], 0.0, 0.0), wp.quat_identity()))


@wp.kernel
def arm_twist(
    q: wp.array(dtype=float),
    qd: wp.array(dtype=float),
    lengths: wp.array(dtype=float),
    body_qd: wp.array(dtype=wp.spatial_vector),
):
    angle = float(0.0)
    omega = float(0.0)
    v = wp.vec3(0.0, 0.0, 0.0)
    for b in range(wp.static(NBODY)):
        angle = angle + q[b]
        omega = omega + qd[b]
        w = wp.vec3(0.0, 0.0, omega)
        body_qd[b] = wp.spatial_vector(w, v)
        v = v + wp.cross(w, lengths[b] * wp.vec3(wp.cos(angle), wp.sin(angle), 0.0))


def body_jacobian(q, qd, lengths, body: int, offset=None, velocity: bool = True, with_rotation: bool = False):
    """Rows of d(out)/d(q) (pose) or d(out)/d(qd) (velocity) for one point of one body."""
    if offset is None:
        offset = wp.vec3(0.0, 0.0, 0.0)
    rows = 6 if with_rotation else 3
    out = wp.zeros(rows, dtype=float, device=DEVICE, requires_grad=True)
    if velocity:
        body_qd = wp.zeros(NBODY, dtype=wp.spatial_vector, device=DEVICE, requires_grad=True)

        @wp.kernel
        def body_out(body_qd: wp.array(dtype=wp.spatial_vector), out: wp.array(dtype=float)):
            tw = body_qd[body]
            w = wp.vec3(tw[0], tw[1], tw[2])
            v = wp.vec3(tw[3], tw[4], tw[5]) + wp.cross(w, offset)
            for k in range(3):
                out[k] = v[k]
            if wp.static(with_rotation):
                for k in range(3):
                    out[3 + k] = w[k]

        tape = wp.Tape()
        with tape:
            wp.launch(arm_twist, dim=1, inputs=[q, qd, lengths], outputs=[body_qd], device=DEVICE)
            wp.launch(body_out, dim=1, inputs=[body_qd], outputs=[out], device=DEVICE)
        wrt = qd
    else:
        body_q = wp.zeros(NBODY, dtype=wp.transform, device=DEVICE, requires_grad=True)

        @wp.kernel
        def body_out(body_q: wp.array(dtype=wp.transform), out: wp.array(dtype=float)):
            tf = body_q[body]
            p = wp.transform_point(tf, offset)
            for k in range(3):
                out[k] = p[k]
            if wp.static(with_rotation):
                axis = wp.quat_rotate(wp.transform_get_rotation(tf), wp.vec3(1.0, 0.0, 0.0))
                for k in range(3):
                    out[3 + k] = axis[k]

        tape = wp.Tape()
        with tape:
            wp.launch(arm_pose, dim=1, inputs=[q, lengths], outputs=[body_q], device=DEVICE)
            wp.launch(body_out, dim=1, inputs=[body_q], outputs=[out], device=DEVICE)
        wrt = q

    jac = np.zeros((rows, NBODY))
    for r in range(rows):
        seed = np.zeros(rows, dtype=np.float32)
        seed[r] = 1.0
        tape.backward(grads={out: wp.array(seed, dtype=float, device=DEVICE)})
        jac[r] = wrt.grad.numpy()
        tape.zero()
    return jac


def run(seed: int):
    rng = np.random.default_rng(seed)
    q = wp.array(rng.uniform(-0.8, 0.8, size=NBODY).astype(np.float32), dtype=float, device=DEVICE, requires_grad=True)
    qd = wp.array(rng.normal(size=NBODY).astype(np.float32), dtype=float, device=DEVICE, requires_grad=True)
    lengths = wp.array(rng.uniform(0.5, 1.0, size=NBODY).astype(np.float32), dtype=float, device=DEVICE)

    # the example's own kinematics run first: this file's module is loaded from here on
    body_q = wp.zeros(NBODY, dtype=wp.transform, device=DEVICE)
    body_qd = wp.zeros(NBODY, dtype=wp.spatial_vector, device=DEVICE)
    wp.launch(arm_pose, dim=1, inputs=[q, lengths], outputs=[body_q], device=DEVICE)
    wp.launch(arm_twist, dim=1, inputs=[q, qd, lengths], outputs=[body_qd], device=DEVICE)

    j_end = body_jacobian(q, qd, lengths, body=3, offset=wp.vec3(0.6, 0.0, 0.0), velocity=False, with_rotation=True)
    j_mid = body_jacobian(q, qd, lengths, body=1, offset=wp.vec3(0.3, 0.1, 0.0), velocity=False)
    j_vel = body_jacobian(q, qd, lengths, body=3, offset=wp.vec3(0.2, 0.0, 0.0), velocity=True)
    return [
        ("pose body 3 (with rotation)", j_end.sum(axis=0)),
        ("pose body 1", j_mid.sum(axis=0)),
        ("velocity body 3", j_vel.sum(axis=0)),
    ]
