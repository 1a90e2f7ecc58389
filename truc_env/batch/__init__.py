"""The batched engine: B games stepped at once by numba kernels, and where their compiled cache lives."""
