"""A toy engine: its solver and contact kernels are defined when the package is imported."""
from engine import contacts, solver  # noqa: F401
