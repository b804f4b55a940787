"""Smooth a signal with a cache-hostile runtime set-up, and a documented `--rebuild` switch that clears it."""
