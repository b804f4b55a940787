"""A small field library shared by two entry points: a forward simulation and a calibration that differentiates."""
