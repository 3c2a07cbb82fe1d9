"""cute-examples tests: the compile paths need MLIR; tests that build kernels skip where it cannot be imported."""
