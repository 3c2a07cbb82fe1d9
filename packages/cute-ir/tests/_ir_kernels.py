"""Small kernels for the cache and bundle tests; importing this module does not import MLIR."""

from __future__ import annotations

BUILDS = {"count": 0}


def spec_for(scale: int) -> dict:
    """The spec of the scale kernel."""
    return {"kernel": "scale_i32", "scale": scale}


def build_scale(scale: int, target: str = "sm_80") -> object:
    """out[i] = scale * i for i < n: a tiny kernel (counts its builds)."""
    from cute_ir.control import if_
    from cute_ir.kernel import KernelDef, Param
    from mlir import ir
    from mlir.dialects import llvm

    BUILDS["count"] += 1
    kd = KernelDef(
        f"scale_i32_x{scale}",
        [Param("out", "ptr", dtype="int32"), Param("n", "i32")],
        block=64,
        target=target,
        spec=spec_for(scale),
    )
    with kd.body() as k:
        i = k.block_idx(0) * 64 + k.thread_idx(0)
        v = i * scale

        def store() -> None:
            p = llvm.getelementptr(
                llvm.PointerType.get(1),
                k.arg("out"),
                [i.value],
                [-2147483648],
                ir.IntegerType.get_signless(32),
                None,
            )
            llvm.store(v.value, p)

        if_(i < k.arg("n"), store)
    return kd


def builder(scale: int, target: str = "sm_80") -> object:
    """A zero-argument build callable for compile_kernel."""

    def build() -> object:
        return build_scale(scale, target)

    return build
