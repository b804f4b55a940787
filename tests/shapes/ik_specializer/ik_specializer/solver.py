"""A batched Levenberg-Marquardt IK solver, specialised per (dof count, point count) on first use."""

from typing import ClassVar

import numpy as np
import warp as wp

from .common import residual_cost

DEVICE = "cpu"
JOINT_LIMIT = wp.constant(2.5)


@wp.kernel
def accept_step(
    cost_trial: wp.array(dtype=float),
    cost: wp.array(dtype=float),
    lam: wp.array(dtype=float),
    accept: wp.array(dtype=int),
):
    b = wp.tid()
    if cost_trial[b] < cost[b]:
        accept[b] = 1
        cost[b] = cost_trial[b]
        lam[b] = wp.max(lam[b] * 0.5, 1.0e-4)
    else:
        accept[b] = 0
        lam[b] = wp.min(lam[b] * 3.0, 1.0e3)


@wp.kernel
def commit(q: wp.array2d(dtype=float), q_trial: wp.array2d(dtype=float), accept: wp.array(dtype=int)):
    b, j = wp.tid()
    if accept[b] != 0:
        q[b, j] = q_trial[b, j]


class LMSolver:
    _specs: ClassVar[dict] = {}

    def __new__(cls, ndof: int, npoints: int, batch: int):
        key = (ndof, npoints)
        spec = cls._specs.get(key)
        if spec is None:
            spec = cls._specs.setdefault(key, cls._specialize(key))
        return super().__new__(spec)

    @classmethod
    def _specialize(cls, key):
        ndof, npoints = key
        nres = 2 * npoints

        def _template(
            q: wp.array2d(dtype=float),
            lengths: wp.array(dtype=float),
            targets: wp.array2d(dtype=wp.vec2),
            lam: wp.array(dtype=float),
            jac: wp.array3d(dtype=float),
            res: wp.array2d(dtype=float),
            lhs: wp.array3d(dtype=float),
            rhs: wp.array2d(dtype=float),
        ):
            b = wp.tid()
            for k in range(wp.static(npoints)):
                last = (k + 1) * ndof // npoints - 1
                r = link_point(q, lengths, b, last, ndof) - targets[b, k]
                res[b, 2 * k] = r[0]
                res[b, 2 * k + 1] = r[1]
                for j in range(wp.static(ndof)):
                    theta = float(0.0)
                    d = wp.vec2(0.0, 0.0)
                    for m in range(wp.static(ndof)):
                        theta += q[b, m]
                        if m >= j and m <= last:
                            d += lengths[m] * wp.vec2(-wp.sin(theta), wp.cos(theta))
                    jac[b, 2 * k, j] = d[0]
                    jac[b, 2 * k + 1, j] = d[1]
            for i in range(wp.static(ndof)):
                g = float(0.0)
                for r in range(wp.static(nres)):
                    g += jac[b, r, i] * res[b, r]
                rhs[b, i] = -g
                for j in range(wp.static(ndof)):
                    s = float(0.0)
                    for r in range(wp.static(nres)):
                        s += jac[b, r, i] * jac[b, r, j]
                    if i == j:
                        s += lam[b]
                    lhs[b, i, j] = s

        from .joints import integrate_joint, link_point  # late: joints.py imports JOINT_LIMIT from here

        _template.__name__ = _template.__qualname__ = f"lm_normal_{ndof}_{nres}"
        normal_equations = wp.kernel(enable_backward=False, module="unique")(_template)

        @wp.kernel
        def step_joints(q: wp.array2d(dtype=float), dq: wp.array2d(dtype=float), q_trial: wp.array2d(dtype=float)):
            b = wp.tid()
            for j in range(wp.static(ndof)):
                q_trial[b, j] = integrate_joint(q[b, j], dq[b, j])

        @wp.kernel(module="unique")
        def trial_residual(
            q: wp.array2d(dtype=float),
            lengths: wp.array(dtype=float),
            targets: wp.array2d(dtype=wp.vec2),
            res: wp.array2d(dtype=float),
        ):
            b = wp.tid()
            for k in range(wp.static(npoints)):
                r = link_point(q, lengths, b, (k + 1) * ndof // npoints - 1, ndof) - targets[b, k]
                res[b, 2 * k] = r[0]
                res[b, 2 * k + 1] = r[1]

        class Spec(cls):
            NDOF = ndof
            NRES = nres
            normal_kernel = normal_equations
            step_kernel = step_joints
            trial_kernel = trial_residual

        Spec.__name__ = f"LMSolver_{ndof}_{npoints}"
        return Spec

    def __init__(self, ndof: int, npoints: int, batch: int):
        self.batch = batch
        self.npoints = npoints

    def solve(self, q, lengths, targets, iterations: int):
        b, ndof, nres = self.batch, self.NDOF, self.NRES
        lam = wp.full(b, 0.1, dtype=float, device=DEVICE)
        jac = wp.zeros((b, nres, ndof), dtype=float, device=DEVICE)
        res = wp.zeros((b, nres), dtype=float, device=DEVICE)
        lhs = wp.zeros((b, ndof, ndof), dtype=float, device=DEVICE)
        rhs = wp.zeros((b, ndof), dtype=float, device=DEVICE)
        q_trial = wp.zeros_like(q)
        cost = wp.zeros(b, dtype=float, device=DEVICE)
        cost_trial = wp.zeros(b, dtype=float, device=DEVICE)
        accept = wp.zeros(b, dtype=int, device=DEVICE)

        wp.launch(self.trial_kernel, dim=b, inputs=[q, lengths, targets], outputs=[res], device=DEVICE)
        wp.launch(residual_cost, dim=b, inputs=[res], outputs=[cost], device=DEVICE)
        start = float(cost.numpy().astype(np.float64).mean())
        for _ in range(iterations):
            wp.launch(
                self.normal_kernel,
                dim=b,
                inputs=[q, lengths, targets, lam],
                outputs=[jac, res, lhs, rhs],
                device=DEVICE,
            )
            dq_np = np.linalg.solve(lhs.numpy().astype(np.float64), rhs.numpy().astype(np.float64)[..., None])[..., 0]
            dq = wp.array(dq_np.astype(np.float32), dtype=float, device=DEVICE)
            wp.launch(self.step_kernel, dim=b, inputs=[q, dq], outputs=[q_trial], device=DEVICE)
            wp.launch(self.trial_kernel, dim=b, inputs=[q_trial, lengths, targets], outputs=[res], device=DEVICE)
            wp.launch(residual_cost, dim=b, inputs=[res], outputs=[cost_trial], device=DEVICE)
            wp.launch(accept_step, dim=b, inputs=[cost_trial, cost, lam, accept], device=DEVICE)
            wp.launch(commit, dim=(b, ndof), inputs=[q, q_trial, accept], device=DEVICE)
        return start, float(cost.numpy().astype(np.float64).mean())


def _problem(ndof: int, npoints: int, batch: int, rng):
    lengths = rng.uniform(0.4, 0.8, size=ndof)
    reach = lengths.sum()
    angle = rng.uniform(-np.pi, np.pi, size=(batch, npoints))
    radius = rng.uniform(0.2, 1.15, size=(batch, npoints)) * reach * (np.arange(1, npoints + 1) / npoints)
    targets = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=-1)
    q0 = rng.uniform(-0.5, 0.5, size=(batch, ndof))
    return (
        wp.array(q0.astype(np.float32), dtype=float, device=DEVICE),
        wp.array(lengths.astype(np.float32), dtype=float, device=DEVICE),
        wp.array(targets.astype(np.float32), dtype=wp.vec2, device=DEVICE),
    )


def run(batch: int, iterations: int, seed: int):
    rng = np.random.default_rng(seed)
    # a warm-up residual check through the shared cost kernel
    probe = wp.array(rng.normal(size=(batch, 4)).astype(np.float32), dtype=float, device=DEVICE)
    probe_cost = wp.zeros(batch, dtype=float, device=DEVICE)
    wp.launch(residual_cost, dim=batch, inputs=[probe], outputs=[probe_cost], device=DEVICE)

    out = []
    for ndof, npoints in ((3, 1), (4, 2)):
        solver = LMSolver(ndof, npoints, batch)
        q, lengths, targets = _problem(ndof, npoints, batch, rng)
        out.append((f"{ndof} dof / {2 * npoints} residuals", *solver.solve(q, lengths, targets, iterations)))
    return out
