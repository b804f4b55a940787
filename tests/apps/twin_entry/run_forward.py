"""Forward simulation: the command users run every day."""
from fieldlib.sim import step

dst, energy = step()
print("energy %.4f" % float(energy.numpy()[0]))
