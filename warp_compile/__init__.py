"""warp-compile: measure, explain and fix Warp kernel compile time."""

__version__ = "0.1.0"
