"""Cast populations from the storage precision to the compute precision and relax them."""

import warp as wp

from .policy import Policy, Q


class CastRelax:
    def __init__(self, policy: Policy, omega: float):
        self.policy = policy
        self.omega = omega
        self.func, self.kernel = self._construct()

    def _construct(self):
        compute = self.policy.compute
        Stored = wp.types.vector(length=Q, dtype=self.policy.store)
        Computed = wp.types.vector(length=Q, dtype=compute)
        omega = self.omega

        @wp.func
        def to_compute(x: Stored) -> Computed:
            return Computed(x)

        @wp.kernel
        def relax(f: wp.array(dtype=Stored), out: wp.array(dtype=Stored)):
            i = wp.tid()
            v = to_compute(f[i])
            rho = v[0] + v[1] + v[2]
            u = (v[1] - v[2]) / rho
            w0 = compute(2.0) / compute(3.0)
            w1 = compute(1.0) / compute(6.0)
            eq = Computed(
                w0 * rho * (compute(1.0) - compute(1.5) * u * u),
                w1 * rho * (compute(1.0) + compute(3.0) * u + compute(3.0) * u * u),
                w1 * rho * (compute(1.0) - compute(3.0) * u + compute(3.0) * u * u),
            )
            out[i] = Stored(v + compute(omega) * (eq - v))

        return to_compute, relax
