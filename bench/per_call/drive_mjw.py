"""Step a small MuJoCo model with mujoco_warp on the CPU: 20 steps, one world (bench/PER_CALL.md).

The import order is the one measured; ruff's sorting is switched off for it.
"""
# ruff: noqa: I001

import sys
import time

import mujoco
import numpy as np
import warp as wp

import mujoco_warp as mjw

XML = """
<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.5"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0.3 0 0.6"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="-0.3 0 0.7"><freejoint/><geom type="capsule" size="0.05 0.1"/></body>
  </worldbody>
</mujoco>
"""

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def main() -> None:
    wp.set_device("cpu")
    mjm = mujoco.MjModel.from_xml_string(XML)
    mjd = mujoco.MjData(mjm)
    m = mjw.put_model(mjm)
    d = mjw.put_data(mjm, mjd)
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter()
        mjw.step(m, d)
        wp.synchronize()
        times.append((time.perf_counter() - t0) * 1000.0)
    print("qpos", np.round(d.qpos.numpy()[0, :3], 4).tolist())
    if "--times" in sys.argv:
        print("step ms", [round(t, 1) for t in times], file=sys.stderr)


if __name__ == "__main__":
    main()
