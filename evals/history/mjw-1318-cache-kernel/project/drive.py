"""Step a small MuJoCo scene with mujoco_warp on the CPU: a sphere, a box and a capsule falling onto a plane."""

import mujoco
import mujoco_warp as mjw
import numpy as np
import warp as wp

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

STEPS = 20


def main() -> None:
    wp.set_device("cpu")
    mjm = mujoco.MjModel.from_xml_string(XML)
    m = mjw.put_model(mjm)
    d = mjw.put_data(mjm, mujoco.MjData(mjm))
    for _ in range(STEPS):
        mjw.step(m, d)
    wp.synchronize()
    print("steps", STEPS, "qpos", np.round(d.qpos.numpy()[0, :3], 4).tolist())


if __name__ == "__main__":
    main()
