"""A small contact simulator laid out like a physics engine's collision pipeline (a test project of warp-compile)."""
