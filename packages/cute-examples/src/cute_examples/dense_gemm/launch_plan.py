"""gemm()'s launch plans: what shapes, strides, dtypes, device and address alignment decide, built once.

`plan_key(...)` is the key: the options, and per operand its shape, strides, dtype, device and whether its
address is 16-byte aligned (so a rotated buffer of the same geometry hits). A miss checks the problem,
decides staging, picks the config (the tuned table, read once per process, else the cost model), loads the
kernel for the tensors' device, schedules the grid, encodes the three TMA descriptors into a parameter block
of the plan's own and builds the launch (a cluster kernel's launch config included). A hit does the overlap
check, re-points the descriptors (`cuTensorMapReplaceAddress` on the `CUtensorMap` that lives in the
plan's parameter block, so there is nothing to copy) and makes one driver call. Plans are per thread.

Any shape and stride: an operand TMA cannot read as it is (a leading dimension or batch stride that is not
a multiple of 16 bytes, K = 127 or N = 1001 in fp16; a stride-0 broadcast batch; no unit stride; a base
address off 16 bytes) is staged through a padded copy (A K-major, B and C N-major, the leading dimension
rounded up to 16 bytes; C is computed there and copied out). The extra cost is one copy of that operand
(`bench.host_rows` measures it). Extents of 0 give an empty result (K = 0: zeros) without a launch.

Fused epilogue (`bias`, `input`, `alpha`, `beta`, `activation`, `pre_activation_out`; rules: `epilogue_args`):
the plan key adds the activation, the bias, input and pre-activation output geometry and whether alpha is 1 and
beta 0; the plan runs `dense_gemm_fused` with the bias/input/pre-activation addresses, strides and alpha/beta in
its parameter block, and a hit rewrites the addresses and the two floats in place (after checking that the
pre-activation output overlaps none of the other tensors). A call without any of them takes the plain path
(key and plan unchanged).

K decomposition: a plan without a tuned entry or a given tile/cluster/variant asks `k_choice.decomposed_config`
whether split-K or stream-K beats the data-parallel config (with two-level accumulation: on its tiles of N <= 128);
if so (and its kernel can be had: compiled here or in the bundle) the plan runs `dense_gemm_split`
(`dense_gemm_split_fused` with a fused epilogue, `dense_gemm_split_scaled` with device scales or an 8-bit C) with its
schedule (`decomposed`) and a
`Workspace` of its own: a call on another stream re-points the workspace and flag addresses in the block.
CUTE_GEMM_DECOMPOSE=0 (`cute_examples.config`) keeps every plan data-parallel.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from numbers import Real
from typing import Any

from cute_nvarch.numeric import numeric_type
from cute_runtime.stream import current_stream, stream_handle

from ..config import gemm_pdl
from ..tracing import compiling as _compiling
from ..tracing import traced_gemm as _traced_gemm
from .activation import check_activation
from .host import (
    _as3,
    _dtype_of,
    _operand,
    _store_spills_past,
    aux_operand,
    aux_tensor_map,
    choose_config,
    choose_epilogue_config,
    problem_of,
    resident_sms,
    schedule,
    tensor_maps,
    with_promotion,
)
from .spec import (
    AB_DTYPES,
    C_DTYPES,
    DTYPE_BYTES,
    FP8_C_DTYPES,
    FP8_C_EPILOGUE_DTYPE,
    FP8_DTYPES,
    canonical_dtype,
    padded_ld,
    runs_on,
)

__all__ = ["SIXTEEN_BIT_PINGPONG_TILES", "GemmPlan", "Layout", "PlanCache", "gemm", "gemm_picks", "loadable_picks",
           "pingpong_form", "plan_config", "plan_key", "plan_pick", "plans", "staged_layouts", "staged_problem"]


def plan_key(a: Any, pa: int, b: Any, pb: int, out: Any, pc: int, options: tuple) -> tuple:
    """The launch-plan key: options and each operand's shape, strides, dtype, device and 16-byte alignment."""
    return (
        options,
        a.shape, a.stride(), a.dtype, a.device, not pa & 15,
        b.shape, b.stride(), b.dtype, b.device, not pb & 15,
        None if out is None else (out.shape, out.stride(), out.dtype, out.device, not pc & 15),
    )


class Layout:
    """A tensor's geometry without its data (shape, strides, dtype, address), as `problem_of` reads it."""

    is_cuda = True

    def __init__(self, shape: tuple[int, ...], stride: tuple[int, ...], dtype: Any, address: int) -> None:
        self.shape, self._stride, self.dtype, self._address = tuple(shape), tuple(stride), dtype, address

    def dim(self) -> int:
        return len(self.shape)

    def stride(self) -> tuple[int, ...]:
        return self._stride

    def data_ptr(self) -> int:
        return self._address


def padded(shape: tuple[int, ...], dtype: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(storage shape, view strides) of a row-major copy of `shape` with its rows padded to 16 bytes."""
    e = numeric_type(str(dtype)).bytes
    *lead, rows, cols = shape
    ld = padded_ld(cols, e)
    strides = (rows * ld, ld, 1) if lead else (ld, 1)
    return (*lead, rows, ld), strides


def _readable(t: Any, what: str, unit_first: str, unit_second: str) -> bool:
    try:
        _operand(t, what, unit_first, unit_second)
    except ValueError:
        return False
    return True


def staged_layouts(
    a: Any, b: Any, out: Any | None, c_dtype: Any, n_out: int | None = None
) -> tuple[Any, Any, Any, tuple[bool, bool, bool]]:
    """The operands the kernel reads (the tensors, or `Layout`s of their padded copies) and which are staged.

    `out=None` is gemm()'s own padded allocation (its padding may take TMA's whole-chunk stores); `n_out`: C's
    columns when they are not b's N (SwiGLU).
    """
    def copy_of(t: Any, dtype: Any) -> Layout:
        # the descriptor is encoded once with this address and re-pointed at the copy before every launch
        return Layout(t.shape, padded(tuple(t.shape), dtype)[1], dtype, t.data_ptr() & ~15 or 16)

    stage_a = not _readable(a, "a", "m", "k")
    stage_b = not _readable(b, "b", "k", "n")
    ta = copy_of(a, a.dtype) if stage_a else a
    tb = copy_of(b, b.dtype) if stage_b else b
    if out is None:
        shape = (*a.shape[:-1], b.shape[-1] if n_out is None else n_out)
        tc, stage_c = Layout(shape, padded(shape, c_dtype)[1], c_dtype, a.data_ptr() & ~15 or 16), False
    else:
        stage_c = not _readable(out, "out", "m", "n") or _store_spills_past(problem_of(ta, tb, out, n_out))
        tc = copy_of(out, out.dtype) if stage_c else out
    return ta, tb, tc, (stage_a, stage_b, stage_c)


def staged_problem(a: Any, b: Any, out: Any | None, c_dtype: Any = None, n_out: int | None = None) -> Any:
    """The GemmProblem the kernel runs for these operands (after staging): what config choice looks at."""
    ta, tb, tc, _ = staged_layouts(a, b, out, a.dtype if c_dtype is None else c_dtype, n_out)
    return problem_of(ta, tb, tc, n_out)


def _span(shape: Any, stride: Any, itemsize: int) -> int:
    """Bytes from a tensor's first to just past its last element (0 when it has none)."""
    if 0 in tuple(shape):
        return 0
    return (sum((n - 1) * abs(s) for n, s in zip(shape, stride, strict=True)) + 1) * itemsize


def _check(a: Any, b: Any, out: Any, c_dtype: Any, swiglu: bool = False) -> tuple[int, Any]:
    """The rules no GEMM can break (ValueError naming the argument); returns (device index, C dtype)."""
    if a.dim() != b.dim() or a.dim() not in (2, 3):
        raise ValueError(f"a and b must both be 2-D or both 3-D, got {a.dim()}-D and {b.dim()}-D")
    for t, what in ((a, "a"), (b, "b"), (out, "out")):
        if t is not None and not getattr(t, "is_cuda", False):
            raise ValueError(f"{what} must be a CUDA tensor")
    devices = {t.device for t in (a, b, out) if t is not None}
    if len(devices) != 1:
        raise ValueError(f"a, b and out must be on one device, got {sorted(map(str, devices))}")
    ab, bd = _dtype_of(a, "a"), _dtype_of(b, "b")
    fp8 = ab in FP8_DTYPES and bd in FP8_DTYPES  # 8-bit pairs may mix E4M3 and E5M2
    if bd != ab and not fp8:
        raise ValueError(f"a and b must have the same dtype (or both be 8-bit), got {a.dtype} and {b.dtype}")
    if ab not in AB_DTYPES + FP8_DTYPES:
        raise ValueError(f"a and b must be {' or '.join(AB_DTYPES)} (or 8-bit: {', '.join(FP8_DTYPES)}), got {ab}")
    (la, m, k), _ = _as3(a, "a")
    (lb, kb, n), _ = _as3(b, "b")
    if kb != k:
        raise ValueError(f"b has {kb} rows but a has K = {k} columns")
    if fp8 and k % 16:
        raise ValueError(f"8-bit a and b need K a multiple of 16 (16-byte K-major rows; torch._scaled_mm's rule), "
                         f"got K = {k}")
    if out is None:
        # 8-bit inputs write bfloat16 unless told (torch._scaled_mm's out_dtype has no 8-bit default either)
        default = "bfloat16" if fp8 else str(a.dtype)
        cd = canonical_dtype(default if c_dtype is None else c_dtype, "c_dtype", C_DTYPES + FP8_C_DTYPES)
    else:
        cd = _dtype_of(out, "out")
        if c_dtype is not None and canonical_dtype(c_dtype, "c_dtype", C_DTYPES + FP8_C_DTYPES) != cd:
            raise ValueError(f"c_dtype {c_dtype} differs from out.dtype {out.dtype}")
        if out.dim() != a.dim():
            raise ValueError(f"out must be {a.dim()}-D like a and b, got {out.dim()}-D")
        (lc, mc, nc), _ = _as3(out, "out")
        n_c = n // 2 if swiglu else n
        if (mc, nc) != (m, n_c):
            raise ValueError(f"out must be ({m}, {n_c}) per batch, got ({mc}, {nc})"
                             + (" (SwiGLU: half of b's N)" if swiglu else ""))
        if lc != la:
            raise ValueError(f"a, b and out must have the same batch size, got {la}, {lb}, {lc}")
        if any(st == 0 and ext > 1 for ext, st in zip(out.shape, out.stride(), strict=True)):
            raise ValueError(f"out has a stride-0 mode (strides {tuple(out.stride())}): its elements overlap")
    if la != lb:
        raise ValueError(f"a and b must have the same batch size, got {la} and {lb}")
    if cd in FP8_C_DTYPES:
        what = "c_dtype" if out is None else "out"
        if not fp8:
            raise ValueError(f"{what}: an 8-bit C ({cd}) needs 8-bit a and b ({' or '.join(FP8_DTYPES)}), got {ab}")
        if out is not None and out.shape[-1] > 1 and out.stride()[-1] != 1:
            raise ValueError(f"out: an 8-bit out must be row-major (N contiguous, as torch._scaled_mm writes it), "
                             f"got strides {tuple(out.stride())}")
    device = next(iter(devices))
    return (device.index or 0), cd


@dataclass
class _Copy:
    """A staged operand: the padded storage to allocate and the view of it the kernel reads or writes."""

    storage: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: Any


class GemmPlan:
    """One launch configuration of gemm(): kernel, grid, parameter block, descriptor setters, staging."""

    def __init__(
        self, a: Any, b: Any, out: Any, options: tuple, tuned: Callable[[Any, str, str], Any], epi: tuple | None = None,
        scale_modes: tuple = (None, None),
    ) -> None:
        import torch
        from cute_runtime import device_properties, driver

        from ..torch_types import torch_dtype
        from .epilogue_args import check_epilogue
        from .kernel import kernel_of

        c_dtype, acc_dtype, tile, cluster, variant, *rest = options
        promotion = rest[0] if rest else 0
        swiglu = epi is not None and check_activation(epi[4]) == "swiglu"
        self.device, cd = _check(a, b, out, c_dtype, swiglu)
        self.epilogue = None
        self.fp8_out = cd in FP8_C_DTYPES
        if epi is not None:
            bias, inp, alpha, beta, activation, aux = epi
            if aux is not None and self.fp8_out:
                raise ValueError(f"pre_activation_out needs a 16- or 32-bit C (it is stored in C's dtype), got {cd}")
            # an 8-bit C's bias and input are bfloat16 (torch._scaled_mm's bias dtype)
            self.epilogue = check_epilogue(a, b, out, FP8_C_EPILOGUE_DTYPE if self.fp8_out else cd, bias=bias,
                                           input=inp, alpha=alpha, beta=beta, activation=activation,
                                           pre_activation_out=aux)
        n_out = None if self.epilogue is None else self.epilogue.n_out
        self.c_torch = torch_dtype(cd)
        self.out_shape = (*a.shape[:-1], b.shape[-1] if n_out is None else n_out)
        self.out_storage = padded(self.out_shape, self.c_torch)[0]
        self.spans = tuple(
            0 if t is None else _span(t.shape, t.stride(), numeric_type(str(t.dtype)).bytes)
            for t in (a, b, out)
        )
        self._torch = torch
        self.kernel = None
        self.trivial = min(self.out_shape) == 0 or a.shape[-1] == 0
        if self.trivial:
            return
        ta, tb, tc, stages = staged_layouts(a, b, out, self.c_torch, n_out)
        self.copies = tuple(
            _Copy(padded(tuple(t.shape), t.dtype)[0], tuple(t.shape), t.dtype) if s else None
            for t, s in zip((ta, tb, tc), stages, strict=True)
        )
        self.staged = any(stages)
        problem = problem_of(ta, tb, tc, n_out)
        props = device_properties(self.device)
        cc = tuple(props.compute_capability)
        if not runs_on(cc):
            raise ValueError(f"the Hopper GEMM needs a compute capability 9.0 GPU, got {cc[0]}.{cc[1]}")
        acc = canonical_dtype(acc_dtype, "acc_dtype")
        free = tile is None and cluster is None and variant is None and not promotion
        found = tuned(problem, acc, props.name) if free and self.epilogue is None else None
        order = (None, None)
        self.schedule = self.workspace = None
        splits = 1
        self.transposed = False  # the kernel runs C^T = B^T A^T (`transposed`): A' = b^T, B' = a^T, C' = out^T
        if found is not None:
            cfg, order = found.config, (found.raster_along_n, found.swizzle_log)
        else:
            fields = None
            if self.epilogue is not None:
                fields = {**self.epilogue.config_fields, "scale_a": scale_modes[0], "scale_b": scale_modes[1]}
            (cfg, splits), t_pick = plan_pick(problem, options, fields, props.sm_count,
                                              lambda c: _loadable(c, cc, self.device))
            # the transposed pick only where neither launch stages an operand (the staged copies are the direct one's)
            views = None if t_pick is None or self.staged else _transposed_views(a, b, out, self.out_shape,
                                                                                  self.c_torch)
            if views is not None:
                (cfg, splits), problem, self.transposed = t_pick, problem_of(*views), True
        self.config = cfg
        kernel = kernel_of(cfg, cc, self.device)
        maps = tensor_maps(problem, cfg)
        sms = resident_sms(kernel, cfg, props.sm_count)
        grid, raster_n, swz = schedule(problem, cfg, sms, *order)
        p = problem
        self.aux_copy = None  # the storage of pre_activation_out's staged copy (`aux_layout`), or None
        aux_map, aux_at = maps[2], []  # the pre-activation output's descriptor: C's without one (never read)
        if cfg.fused and cfg.has_aux:
            self.aux_copy, op = aux_layout(self.epilogue.aux, cfg.c_major)
            aux_map, aux_at = aux_tensor_map(cfg, op, p.m), [op.address]
        fused = () if not cfg.fused else _fused_values(self.epilogue, a.dim() == 3, aux_map)
        if cfg.scaled:
            fused += (0, 0, 0, 0, 1.0)  # the scales' and amax's addresses, out_scale: set per call
        split = ()
        if cfg.shares_k:
            from .decomposed import Workspace, schedule_of

            self.schedule = schedule_of(problem, cfg, sms, splits)
            self.workspace = Workspace()
            self._ws_stream = None
            grid = self.schedule.grid
            split = (0, 0, self.schedule.splits)  # workspace and flag addresses: set per stream at the call
        self.params = kernel.prepare(*maps, p.m, p.n, p.k, p.l, raster_n, swz, *fused, *split)
        # programmatic stream serialization: every GEMM kernel waits for its stream's previous kernel before its
        # first global access (`kernel._emit`), so its launch and prologue may overlap that kernel's tail
        self.launch = kernel.bound_launch(grid, self.params, programmatic=gemm_pdl())
        self.kernel, self.grid = kernel, grid
        drv = driver.init()
        slots = [o for prm, o in zip(kernel.layout.params, kernel.layout.offsets, strict=True) if prm.kind == "tma"]
        # the CUtensorMaps of the plan are the parameter block's own 128-byte slots (64-byte aligned)
        self.maps = [drv.CUtensorMap(_ptr=self.params.address + o) for o in slots]
        self._replace = drv.cuTensorMapReplaceAddress
        # the descriptors' addresses: a, b, c, and the pre-activation output's (re-pointed per call)
        self.addresses = [m.data_ptr() for m in (ta, tb, tc)] + aux_at
        self.bias_length = None
        if cfg.shares_k:
            offsets = dict(zip((prm.name for prm in kernel.layout.params), kernel.layout.offsets, strict=True))
            self._ws_ptr = ctypes.c_uint64.from_address(self.params.address + offsets["workspace"])
            self._flags_ptr = ctypes.c_uint64.from_address(self.params.address + offsets["flags"])
        if cfg.fused:
            self.bias_length = bias_length_to_stage(self.epilogue, *((p.n, p.m) if self.transposed else (p.m, p.n)))
            self.bias_align = bias_align(self.epilogue, DTYPE_BYTES[cfg.epilogue_dtype])
            self.epilogue_bias_length = p.n if cfg.bias == "n" else p.m
            offsets = dict(zip((prm.name for prm in kernel.layout.params), kernel.layout.offsets, strict=True))
            at = self.params.address
            self._bias_ptr = ctypes.c_uint64.from_address(at + offsets["bias_ptr"])
            self._input_ptr = ctypes.c_uint64.from_address(at + offsets["input_ptr"])
            self._alpha = ctypes.c_float.from_address(at + offsets["alpha"])
            self._beta = ctypes.c_float.from_address(at + offsets["beta"])
            if cfg.scaled:
                self._scale_ptrs = tuple(ctypes.c_uint64.from_address(at + offsets[f"scale_{x}_ptr"]) for x in "ab")
                self._out_scale_ptr = ctypes.c_uint64.from_address(at + offsets["out_scale_ptr"])
                self._amax_ptr = ctypes.c_uint64.from_address(at + offsets["amax_ptr"])
                self._out_scale = ctypes.c_float.from_address(at + offsets["out_scale"])
            self.epi_spans = tuple(
                0 if t is None else _span(t.shape, t.stride(), DTYPE_BYTES[cfg.epilogue_dtype])
                for t in (self.epilogue.bias, self.epilogue.input)
            )

    def point(self, i: int, address: int) -> None:
        """Re-point descriptor i (0 a, 1 b, 2 c, 3 the pre-activation output) at a new base address."""
        if address != self.addresses[i]:
            err = self._replace(self.maps[i], address)[0]
            if err:
                raise RuntimeError(f"cuTensorMapReplaceAddress({address:#x}) failed: {err!r}")
            self.addresses[i] = address

    def __call__(
        self, a: Any, pa: int, b: Any, pb: int, out: Any, pc: int, stream: Any, epi: tuple | None = None,
        scales: tuple = (None, None), outs: tuple = (None, None),
    ) -> Any:
        """Run the plan on these tensors (of the plan's key; `epi`: bias, input, alpha, beta, activation,
        pre_activation_out; `outs`: an 8-bit C's out_scale and amax, checked by gemm()); returns out."""
        torch = self._torch
        if out is None:
            out = torch.empty(self.out_storage, dtype=self.c_torch, device=a.device)[..., : self.out_shape[-1]]
            pc = out.data_ptr()
        else:
            sa, sb, sc = self.spans
            if (pc < pa + sa and pa < pc + sc) or (pc < pb + sb and pb < pc + sc):
                raise ValueError("out overlaps an input (a or b); gemm() needs a separate output")
        if self.epilogue is not None and self.epilogue.aux is not None:
            check_aux_overlap(epi, (pa, self.spans[0]), (pb, self.spans[1]), (pc, _tensor_span(out)))
        if self.kernel is None:  # an extent of 0
            if self.epilogue is not None and (out.numel() or outs[1] is not None):
                with _on(torch, stream):
                    d = _empty_k_epilogue(torch, self.epilogue, epi, a, b, out, self.out_shape)
                    out.copy_(_fp8_store(torch, d, *outs) if self.fp8_out else d.to(out.dtype))
            elif a.shape[-1] == 0 and out.numel():
                with _on(torch, stream):
                    out.zero_()
            return out
        staged_bias = None  # a contiguous copy of a strided or broadcast bias, alive until the launch is queued
        staged_aux = None  # the copy of pre_activation_out the kernel writes where it cannot write it as it is
        if self.epilogue is not None and self.config.fused:
            staged_bias = self._set_epilogue(epi, out, pc, stream)
            if self.epilogue.aux is not None:
                staged_aux = self._set_aux(epi[5], stream)
            if self.config.scaled:
                for ptr, t in zip(self._scale_ptrs, scales, strict=True):
                    ptr.value = 0 if t is None else t.data_ptr()
                if self.fp8_out:
                    self._set_fp8_out(out, pc, stream, *outs)
        if stream is None:
            s = current_stream(self.device)
        else:
            s = stream if type(stream) is int else stream_handle(stream)
        if self.workspace is not None and s != self._ws_stream:
            self._ws_ptr.value, self._flags_ptr.value = self.workspace.pointers(self.config, self.schedule,
                                                                                self.device, s)
            self._ws_stream = s
        if not self.staged:
            self.point(0, pb if self.transposed else pa)
            self.point(1, pa if self.transposed else pb)
            self.point(2, pc)
            self.launch(s)
            del staged_bias  # freed in stream order: the launch was queued first
            if staged_aux is not None:
                with _on(torch, stream):
                    epi[5].copy_(staged_aux)
            return out
        with _on(torch, stream):
            views = []
            for i, (t, cp) in enumerate(zip((a, b, out), self.copies, strict=True)):
                if cp is not None:
                    t_copy = torch.empty(cp.storage, dtype=cp.dtype, device=a.device)[..., : cp.shape[-1]]
                    if i < 2:
                        t_copy.copy_(t)
                    t = t_copy
                views.append(t)
                self.point(i, t.data_ptr())
            self.launch(s)
            if self.copies[2] is not None:
                out.copy_(views[2])
            if staged_aux is not None:
                epi[5].copy_(staged_aux)
        return out

    def _set_aux(self, aux: Any, stream: Any) -> Any:
        """Point the kernel's pre-activation descriptor at pre_activation_out, or at a copy of the form it takes
        (`aux_layout`'s; or of aux's own strides when only its address is off 16 bytes), returned to be copied
        back after the launch."""
        torch = self._torch
        if self.aux_copy is None and aux.data_ptr() % 16 == 0:
            self.point(3, aux.data_ptr())
            return None
        with _on(torch, stream):
            if self.aux_copy is None:
                t = torch.empty_strided(tuple(aux.shape), tuple(aux.stride()), dtype=aux.dtype, device=aux.device)
            else:
                storage = torch.empty(self.aux_copy[0], dtype=aux.dtype, device=aux.device)
                t = _staged_view(storage, self.aux_copy, tuple(aux.shape))
        self.point(3, t.data_ptr())
        return t

    def _set_fp8_out(self, out: Any, pc: int, stream: Any, out_scale: Any, amax: Any) -> None:
        """Write an 8-bit C's out_scale (by value, or a device scalar's address) and amax address into the parameter
        block; zero amax on the launch's stream (the kernel only raises it: an atomic max per warp)."""
        if _is_tensor(out_scale):
            self._out_scale_ptr.value, self._out_scale.value = out_scale.data_ptr(), 1.0
        else:
            self._out_scale_ptr.value, self._out_scale.value = 0, 1.0 if out_scale is None else float(out_scale)
        self._amax_ptr.value = 0
        if amax is not None:
            p = amax.data_ptr()
            if pc < p + 4 and p < pc + _span(out.shape, out.stride(), 1):
                raise ValueError("amax overlaps out; gemm() needs a separate amax")
            with _on(self._torch, stream):
                amax.zero_()
            self._amax_ptr.value = p

    def _set_epilogue(self, epi: tuple, out: Any, pc: int, stream: Any) -> Any:
        """Write this call's bias/input addresses and alpha/beta into the parameter block (overlaps checked);
        returns the contiguous copy of a bias the kernel cannot read as it is (else None)."""
        bias, inp, alpha, beta, _, aux = epi
        sc = self.spans[2]  # out's span (the key holds its geometry; 0 for a fresh out, which overlaps nothing)
        staged = None
        if bias is not None:
            p = bias.data_ptr()
            if pc < p + self.epi_spans[0] and p < pc + sc:
                raise ValueError("out overlaps bias; gemm() needs a separate output")
            if self.bias_length is not None or p % self.bias_align:
                length, storage = self.bias_length or (self.epilogue_bias_length, self.epilogue_bias_length)
                with _on(self._torch, stream):
                    staged = _bias_vector(bias, length, storage)
                p = staged.data_ptr()
            self._bias_ptr.value = p
        if self.epilogue.has_input:
            p = inp.data_ptr()
            same = p == pc and tuple(inp.shape) == tuple(out.shape) and tuple(inp.stride()) == tuple(out.stride())
            if not same and pc < p + self.epi_spans[1] and p < pc + sc:
                raise ValueError("out overlaps input (other than being it exactly); gemm() needs a separate output")
            self._input_ptr.value = p
            self._beta.value = float(beta if beta is not None else 1.0)
        self._alpha.value = float(alpha)
        return staged


def _t(t: Any) -> Layout:
    """The geometry of t's transpose (its last two modes swapped), at t's address."""
    return Layout((*t.shape[:-2], t.shape[-1], t.shape[-2]), (*t.stride()[:-2], t.stride()[-1], t.stride()[-2]),
                  t.dtype, t.data_ptr())


def _transposed_views(a: Any, b: Any, out: Any, out_shape: tuple[int, ...], c_dtype: Any) -> tuple | None:
    """(A', B', C') = (b^T, a^T, out^T) as the kernel reads and writes them (out None: gemm()'s padded allocation of
    `out_shape`), or None where one of them would need a staged copy."""
    c = out if out is not None else Layout(out_shape, padded(out_shape, c_dtype)[1], c_dtype,
                                           a.data_ptr() & ~15 or 16)
    ta, tb, tc = _t(b), _t(a), _t(c)
    stages = staged_layouts(ta, tb, tc, c_dtype)[3]
    # gemm()'s own allocation is padded: its whole-chunk stores stay inside it
    if any(stages[:2]) or (out is not None and stages[2]):
        return None
    return ta, tb, tc


def plan_config(problem: Any, options: tuple, fields: dict | None, num_sms: int,
                loadable: Callable[[Any], bool] = lambda cfg: True, min_tile: int = 0,
                rounds: bool = True) -> tuple[Any, int]:
    """(config, split-K parts) of a plan without a tuned entry: `options` as gemm() builds them (c_dtype, acc_dtype,
    tile, cluster, variant[, promotion]), `fields` the epilogue's GemmConfig fields (None: the plain path),
    `loadable(cfg)` whether a split-K / stream-K kernel can be had (else the data-parallel config), `min_tile` the
    least tile side a chosen tile may have, `rounds` whether k_choice may take stream-K past one round."""
    _, _, tile, cluster, variant, *_ = options
    cfg, splits = _host_config(problem, options, fields, num_sms, min_tile), 1
    if tile is None and cluster is None and variant is None:
        # split-K / stream-K (with or without a fused epilogue), then the ping-pong schedule where it pays
        cfg, splits = _decomposed(problem, cfg, num_sms, loadable, min_tile, rounds)
        cfg = pingpong_form(cfg)
    return cfg, splits


def _host_config(problem: Any, options: tuple, fields: dict | None, num_sms: int, min_tile: int = 0) -> Any:
    """`plan_config`'s data-parallel config before k_choice (the host's pick, with its promotion)."""
    _, acc_dtype, tile, cluster, variant, *rest = options
    acc = canonical_dtype(acc_dtype, "acc_dtype")
    if fields is not None:
        cfg = choose_epilogue_config(problem, fields, acc, tile, cluster, num_sms, variant or "fast", min_tile)
    else:
        cfg = choose_config(problem, acc, tile, cluster, num_sms, variant or "fast", min_tile)
    promotion = rest[0] if rest else 0
    return with_promotion(problem, cfg, promotion, acc, tile, num_sms) if promotion else cfg


def plan_pick(problem: Any, options: tuple, fields: dict | None, num_sms: int,
              loadable: Callable[[Any], bool] = lambda cfg: True) -> tuple[tuple[Any, int], tuple[Any, int] | None]:
    """(`plan_config`'s (config, split-K parts), the transposed problem's (`transposed.transposed_shape`, with
    `transposed.transposed_fields`, among tiles of sides `transposed.min_tile` or more) where `transposed.transposes`
    says gemm() runs that, else None) of a plan without a tuned entry; only calls without tile, cluster, variant or
    promotion may run transposed. `loadable` is asked about the transposed problem's kernels only where the pick
    would run them. Whether to transpose is decided on both problems' picks without k_choice's stream-K past one
    round (the rule `transposes` was measured with), which then applies to each."""
    from .transposed import (
        may_transpose,
        min_tile,
        only_quantises,
        quantises,
        transposed_fields,
        transposed_shape,
        transposes,
    )

    pick = plan_config(problem, options, fields, num_sms, loadable)
    t_fields = None if fields is None else transposed_fields(fields)
    if options[2:] != (None, None, None) or (fields is not None and t_fields is None) or not may_transpose(problem):
        return pick, None
    t_shape, least = transposed_shape(problem), min_tile(problem)
    within = _without_rounds(pick, problem, options, fields, num_sms, loadable)
    if only_quantises(problem):
        # asked first of the transposed problem's host pick (whose tile and cluster its data-parallel pick keeps),
        # which spares k_choice's work on the transposed problem where it does not hold
        t_host = _host_config(t_shape, options, t_fields, num_sms, least)
        if not quantises(problem, within[0], t_shape, t_host, num_sms):
            return pick, None
    for ask in (lambda cfg: True, loadable):  # decide first, then load only the kernel the transposed pick runs
        t_pick = plan_config(t_shape, options, t_fields, num_sms, ask, least)
        t_within = _without_rounds(t_pick, t_shape, options, t_fields, num_sms, ask, least)
        if not transposes(problem, within, t_shape, t_within, num_sms):
            return pick, None
    return pick, t_pick


def _without_rounds(pick: tuple[Any, int], problem: Any, options: tuple, fields: dict | None, num_sms: int,
                    loadable: Callable[[Any], bool], min_tile: int = 0) -> tuple[Any, int]:
    """`plan_config(..., rounds=False)` given its pick with `rounds`: that pick, unless it is stream-K (k_choice's
    stream-K past one round only ever moves a pick to stream-K)."""
    if pick[0].decomposition != "stream_k":
        return pick
    return plan_config(problem, options, fields, num_sms, loadable, min_tile, rounds=False)


def gemm_picks(problem: Any, num_sms: int, acc_dtype: str = "float32", decomposed: bool | None = None) -> list[Any]:
    """gemm()'s plain picks for a problem (anything with m, n, k, l, dtypes and majors) without tile, cluster,
    variant or tuned entry: `plan_config`'s data-parallel config (where no split-K / stream-K kernel can be had,
    `decomposed` False) and its decomposed one (where every kernel can, True); None: both, once where k_choice keeps
    the data-parallel config (`plan_pick`'s: the transposed problem's where gemm() may run that, then also the direct
    one)."""
    options = (problem.c_dtype, acc_dtype, None, None, None)
    picks: dict[str, Any] = {}
    for d in (False, True) if decomposed is None else (decomposed,):
        for cfg in loadable_picks(problem, options, None, num_sms, lambda _cfg, d=d: d):
            picks.setdefault(cfg.name, cfg)
    return list(picks.values())


def loadable_picks(problem: Any, options: tuple, fields: dict | None, num_sms: int,
                   loadable: Callable[[Any], bool] = lambda cfg: True) -> list[Any]:
    """The configs a plan of `problem` may load (`plan_pick`'s): the direct pick, and before it the transposed one
    where gemm() runs that (a call that would stage an operand of the transposed launch runs the direct pick)."""
    direct, t_pick = plan_pick(problem, options, fields, num_sms, loadable)
    return [direct[0]] if t_pick is None else [t_pick[0], direct[0]]


# 16-bit tiles whose ping-pong form runs faster than their cooperative one (the tests' `data/config_sweep_h200.json`,
# H200: 128x128 ping-pong / cooperative 0.975 / 0.977 / 0.966 of the time on geometric mean over 62 shapes without a
# cluster / 2x1 / 1x2; 128x64 and 128x96 0.97-1.00, the 64-row tiles 0.97-1.02)
SIXTEEN_BIT_PINGPONG_TILES = ((128, 128),)


def pingpong_form(cfg: Any) -> Any:
    """cfg on the ping-pong schedule where its tile allows it and pays, for a data-parallel decomposition without
    promotion or an 8-bit C: with 8-bit A and B on any tile (the H200 FP8 sweep, `tests/data/fp8_sweep_h200.json`:
    each config's ping-pong form ran a median 0.5-2.8% faster than its cooperative one at M 1..512, up to 31%; the
    choice's picks 0.963 -> 0.965 of the fastest config measured, on the decode sweep 0.956 -> 0.963), with 16-bit
    ones on `SIXTEEN_BIT_PINGPONG_TILES`; else cfg."""
    if cfg.mma_promotion_interval or cfg.shares_k or cfg.fp8_out or cfg.pingpong:
        return cfg
    if cfg.ab_bytes != 1 and (cfg.tile_m, cfg.tile_n) not in SIXTEEN_BIT_PINGPONG_TILES:
        return cfg
    try:
        return replace(cfg, schedule="pingpong")
    except ValueError:
        return cfg  # a tile over ping-pong's accumulator or input limits stays cooperative


def _loadable(cfg: Any, cc: tuple[int, int], device: int) -> bool:
    """Whether cfg's kernel can be had here (a host without a compiler or MLIR whose bundle lacks it: False)."""
    from cute_runtime.errors import CompilerError

    from .kernel import kernel_of

    try:
        kernel_of(cfg, cc, device)
    except (CompilerError, ImportError):
        return False
    return True


def _decomposed(problem: Any, cfg: Any, num_sms: int, loadable: Callable[[Any], bool],
                min_tile: int = 0, rounds: bool = True) -> tuple[Any, int]:
    """(config, split-K parts): k_choice's pick for the problem (a shared-K kind on a tile of sides `min_tile` or more,
    or the data-parallel config with a deeper pipeline, `k_choice.deepened`) when its kernel is loadable, else
    (cfg, 1)."""
    from ..config import gemm_decompose
    from .k_choice import decomposed_config

    if not gemm_decompose():
        return cfg, 1
    dcfg, choice = decomposed_config(problem, cfg, num_sms, min_tile=min_tile, rounds=rounds)
    if dcfg is cfg or not loadable(dcfg):
        return cfg, 1
    return dcfg, choice.splits


def _fused_values(e: Any, batched: bool, aux_map: Any) -> tuple:
    """The fused kernel's run-time arguments (FUSED_PARAMS) for the checked epilogue e and the pre-activation
    output's descriptor `aux_map` (a staged bias's and pre_activation_out's addresses are set per call)."""
    bias_ptr = input_ptr = 0
    sm = sn = sl = 0
    if e.bias is not None:
        bias_ptr = e.bias.data_ptr()
    if e.has_input:
        input_ptr = e.input.data_ptr()
        strides = e.input_strides
        sl, sm, sn = strides if batched else (0, *strides)
    return (bias_ptr, input_ptr, sm, sn, sl, e.alpha, e.beta if e.has_input else 0.0, aux_map)


def aux_layout(aux: Any, c_major: str) -> tuple[tuple | None, Any]:
    """(copy, operand): how the kernel writes pre_activation_out `aux` through TMA stores of C's major.

    copy None: as it is (`host.aux_operand` takes its geometry; its address is checked per call), else the copy it
    writes instead, (storage shape, major) of a padded tensor of C's major (`_staged_view`), copied into `aux` after
    the launch. `operand` is the geometry the descriptor is encoded with (re-pointed per call); `padded`'s layouts
    always make one (a CPU test holds that over shapes, dtypes and majors).
    """
    probe = Layout(tuple(aux.shape), tuple(aux.stride()), aux.dtype, 16)  # the geometry, at an aligned address
    op = aux_operand(probe, c_major)
    if op is not None:
        return None, op
    shape = tuple(aux.shape)
    if c_major == "n":
        storage, strides = padded(shape, aux.dtype)
    else:  # M contiguous: the transpose of a padded (.., N, M) tensor
        *lead, rows, cols = shape
        storage, t_strides = padded((*lead, cols, rows), aux.dtype)
        strides = (*t_strides[:-2], t_strides[-1], t_strides[-2])
    return (storage, c_major), aux_operand(Layout(shape, strides, aux.dtype, 16), c_major, padded=True)


def _staged_view(storage: Any, copy: tuple, shape: tuple[int, ...]) -> Any:
    """The (.., M, N) view of `shape` the kernel writes in a staged copy's storage (`aux_layout`)."""
    if copy[1] == "n":
        return storage[..., : shape[-1]]
    return storage.transpose(-1, -2)[..., : shape[-2], :]


def bias_length_to_stage(e: Any, m: int, n: int) -> tuple[int, int] | None:
    """(length, storage length) of the contiguous vector a bias of this geometry is copied to, or None when the
    kernel reads it as it is (its address is checked per call: `bias_align`).

    The kernel reads bias element i at `bias_ptr + i`, an N bias as pairs of elements (2j, 2j + 1): a bias with
    a non-unit stride along its mode or one value broadcast over N > 1 (M > 1) is copied, and an N bias of odd
    length too, into storage of even length (the pair of the last column stays inside it).
    """
    if e.bias is None:
        return None
    d, length = (-1, n) if e.bias_mode == "n" else (-2, m)
    ext, stride = e.bias.shape[d], e.bias.stride()[d]
    storage = length + (length % 2 if e.bias_mode == "n" else 0)
    readable = ext == length and (stride == 1 or ext == 1) and storage == length
    return None if readable else (length, storage)


def bias_align(e: Any, c_bytes: int) -> int:
    """The address alignment (bytes) the kernel needs of the bias: a pair of elements along N, one along M."""
    return 2 * c_bytes if e.bias_mode == "n" else c_bytes


def _bias_vector(bias: Any, length: int, storage: int) -> Any:
    """bias as a contiguous vector of `length` elements (a broadcast value repeated) in `storage` elements."""
    v = bias.reshape(-1)
    if v.numel() == 1 and length > 1:
        v = v.expand(length)
    out = v.new_zeros(storage)
    out[:length].copy_(v)
    return out


def _tensor_span(t: Any) -> int:
    """Bytes from a tensor's first to just past its last element."""
    return _span(t.shape, t.stride(), numeric_type(str(t.dtype)).bytes)


def check_aux_overlap(epi: tuple, *others: tuple[int, int]) -> None:
    """ValueError when pre_activation_out (epi[5]) overlaps a, b, out (`others`: (address, span) in that order), bias
    or input: the kernel writes it while they are read or written."""
    aux = epi[5]
    p, span = aux.data_ptr(), _tensor_span(aux)
    named = [("a", *others[0]), ("b", *others[1]), ("out", *others[2])]
    for what, t in (("bias", epi[0]), ("input", epi[1])):
        if t is not None:
            named.append((what, t.data_ptr(), _tensor_span(t)))
    for what, q, n in named:
        if span and n and q < p + span and p < q + n:
            raise ValueError(f"pre_activation_out overlaps {what}; gemm() needs a separate pre-activation output")


def _empty_k_epilogue(torch: Any, e: Any, epi: tuple, a: Any, b: Any, out: Any, shape: tuple) -> Any:
    """The epilogue of an empty product (K = 0: acc = 0), computed with torch in float32 (the pre-activation also
    into pre_activation_out when given)."""
    from .activation import reference

    bias, inp, _, beta, _, aux = epi
    x = torch.zeros(shape[:-1] + ((shape[-1] * 2,) if e.activation == "swiglu" else (shape[-1],)),
                    dtype=torch.float32, device=out.device)
    if bias is not None:
        x = x + bias.float()  # (N,), (1, N), (M, 1), ... broadcast as they are
    if e.has_input:
        x = x + float(beta if beta is not None else 1.0) * inp.float()
    if aux is not None:
        aux.copy_(x.expand(aux.shape))
    return reference(x, e.activation)


def _fp8_store(torch: Any, d: Any, out_scale: Any, amax: Any) -> Any:
    """float32 D as an 8-bit C: satfinite(D * out_scale) rounded to E4M3 (amax, when given, set to max |D|)."""
    if amax is not None:
        amax.copy_(d.abs().amax().reshape(amax.shape) if d.numel() else torch.zeros_like(amax))
    scale = 1.0 if out_scale is None else out_scale
    limit = torch.finfo(torch.float8_e4m3fn).max
    return (d * scale).clamp(-limit, limit).to(torch.float8_e4m3fn)


def _on(torch: Any, stream: Any) -> Any:
    """torch's work ordered on `stream` (a torch stream or raw handle), else on torch's current stream."""
    if stream is None:
        return contextlib.nullcontext()
    s = torch.cuda.ExternalStream(stream) if isinstance(stream, int) else stream
    return torch.cuda.stream(s)


class PlanCache:
    """Launch plans by `plan_key`, one table per thread (a plan's parameter block is rewritten per call)."""

    def __init__(self, build: Callable[..., Any]) -> None:
        self._build = build
        self._local = threading.local()

    def table(self) -> dict:
        """This thread's plans."""
        t = getattr(self._local, "plans", None)
        if t is None:
            t = self._local.plans = {}
        return t

    def get(self, key: tuple, *args: Any) -> Any:
        """The plan of key (built from args on a miss)."""
        t = self.table()
        plan = t.get(key)
        if plan is None:
            plan = t[key] = self._build(*args)
        return plan


def _build(a: Any, b: Any, out: Any, options: tuple, epi: tuple | None = None,
           scale_modes: tuple = (None, None)) -> GemmPlan:
    from .tune_cache import lookup_tuned_once

    return GemmPlan(a, b, out, options, lookup_tuned_once, epi, scale_modes)


plans = PlanCache(_build)
"""gemm()'s launch plans (`plans.table()` is this thread's)."""
_get = plans.get


def gemm(
    a: Any,
    b: Any,
    out: Any = None,
    *,
    bias: Any = None,
    input: Any = None,  # noqa: A002 - torch.addmm's name
    alpha: object = 1.0,
    beta: object = None,
    activation: str | None = None,
    pre_activation_out: Any = None,
    c_dtype: object = None,
    acc_dtype: object = "float32",
    tile_shape_mnk: tuple[int, int, int] | None = None,
    cluster_shape_mn: tuple[int, int] | None = None,
    variant: str | None = None,
    stream: Any = None,
    scale_a: Any = None,
    scale_b: Any = None,
    out_scale: Any = None,
    amax: Any = None,
    mma_promotion_interval: int = 0,
    allow_copy: bool = False,
) -> Any:
    """`out = a @ b` on CUDA torch tensors of any shape and strides with the Hopper persistent kernel; returns out.

    a is (M, K) or (L, M, K), b (K, N) or (L, K, N), out (M, N) or (L, M, N) (allocated with a 16-byte padded
    leading dimension when None). Without tile, cluster and variant a `--tune` result for this shape and
    device is used when there is one; else `choose_config` decides (variant "fast" unless given), and a call of few
    rows may run as the transposed problem C^T = B^T A^T on the same tensors (`transposed`). The first call of a
    geometry builds its launch plan; later calls only re-point the descriptors and launch.

    Fused epilogue: `out = act(alpha * a @ b + beta * input + bias)` in float32 before the one rounding to C
    (`epilogue_args` has the rules: bias a vector along N or M, input broadcast as torch.addmm's with beta
    defaulting to 1, activation one of `activation.ACTIVATIONS`; "swiglu" takes b with interleaved gate/up
    columns (`activation.interleave_gate_up`) and writes N/2 columns). `pre_activation_out`: a tensor of out's shape
    and dtype that also receives the pre-activation `alpha * a @ b + beta * input + bias` (cuBLASLt's
    EPILOGUE_AUX, CUTLASS's aux store; stored from registers, any non-overlapping strides; not with "swiglu" nor an
    8-bit C; it must not overlap out, a, b, bias or input).

    8-bit inputs (float8_e4m3fn / float8_e5m2, mixed pairs allowed) must both be K-major (a row-major, b a
    transposed row-major weight, as torch._scaled_mm takes them); C defaults to bfloat16.
    `scale_a`, `scale_b` multiply the float32 accumulators: Python floats (folded into alpha, passed by value)
    or float32 CUDA tensors the kernel reads
    (torch._scaled_mm's: one element, or (M, 1) for a and (1, N) for b; no host synchronization).
    `mma_promotion_interval` (k-blocks, a multiple of 4; 0: off): two-level accumulation (`GemmConfig`'s field), the
    accurate FP8 mode (torch._scaled_mm's use_fast_accum=False); it caps the tile N at 128. `allow_copy=True`:
    an 8-bit operand that is not K-major is copied K-major on the device first (else it is a ValueError).

    8-bit C (`out` float8_e4m3fn or `c_dtype=torch.float8_e4m3fn`, 8-bit inputs only, row-major out): the stored
    value is `satfinite(D * out_scale)` rounded to E4M3 (beyond +-448 it saturates to +-448; NaN stays NaN), D the
    epilogue's float32 result (its bias and input are bfloat16). `out_scale` (torch._scaled_mm's `scale_result`,
    multiplicative; default 1): a Python float passed by value or a 1-element float32 CUDA tensor the kernel
    reads. `amax`: a 1-element float32 CUDA tensor that receives max |D| over the output, before out_scale
    (cuBLASLt's AMAX_D; NaN when any D is NaN); gemm() zeroes it on the launch's stream first, so a captured CUDA
    graph replays the zeroing with the launch.

    Under torch.compile / torch.export it is the operator `torch.ops.cute.gemm` (`gemm_out` with out; `torch_ops`).
    """
    if allow_copy:
        a, b = k_major_copies(a, b)
    fp8_out = out.dtype.itemsize == 1 if out is not None else c_dtype is not None and _names_fp8(c_dtype)
    outs = (None, None)
    if fp8_out or out_scale is not None or amax is not None:
        outs = check_fp8_out(a, fp8_out, out_scale, amax)
    scales = (None, None)
    if _is_tensor(scale_a) or _is_tensor(scale_b):
        scales = (scale_a if _is_tensor(scale_a) else None, scale_b if _is_tensor(scale_b) else None)
        scale_a, scale_b = (None if _is_tensor(s) else s for s in (scale_a, scale_b))
    if scale_a is not None or scale_b is not None:
        alpha = _scaled_alpha(alpha, scale_a, scale_b)
    if _compiling():
        if scales != (None, None):
            raise ValueError("scale_a / scale_b as device tensors are not traced (torch.compile): pass floats")
        if fp8_out:
            raise ValueError("an 8-bit out (out_scale, amax) is not traced (torch.compile): call gemm() eagerly")
        if pre_activation_out is not None:
            raise ValueError("pre_activation_out is not traced (torch.compile): call gemm() eagerly")
        return _traced_gemm(a, b, out, stream, dict(
            bias=bias, input=input, alpha=alpha, beta=beta, activation=activation,
            pre_activation_out=None,  # refused above: gemm() writes it eagerly only
            c_dtype=c_dtype,
            acc_dtype=acc_dtype, tile_shape_mnk=tile_shape_mnk, cluster_shape_mn=cluster_shape_mn, variant=variant,
            scale_a=None, scale_b=None,  # the scales are in alpha
            out_scale=None, amax=None,  # an 8-bit C is refused above
            mma_promotion_interval=mma_promotion_interval, allow_copy=False))  # the copies are made
    options = (
        c_dtype,
        acc_dtype,
        None if tile_shape_mnk is None else tuple(tile_shape_mnk),
        None if cluster_shape_mn is None else tuple(cluster_shape_mn),
        variant,
    ) + ((int(mma_promotion_interval),) if mma_promotion_interval else ())
    pa, pb = a.data_ptr(), b.data_ptr()
    pc = 0 if out is None else out.data_ptr()
    key = plan_key(a, pa, b, pb, out, pc, options)
    if bias is None and input is None and activation is None and beta is None and alpha.__class__ is float \
            and alpha == 1.0 and scales == (None, None) and not fp8_out and pre_activation_out is None:
        return _get(key, a, b, out, options)(a, pa, b, pb, out, pc, stream)
    epi = (bias, input, alpha, beta, activation, pre_activation_out)
    modes = scale_modes(a, b, *scales)
    key = (key, _epilogue_key(epi), modes)
    return _get(key, a, b, out, options, epi, modes)(a, pa, b, pb, out, pc, stream, epi, scales, outs)


def _names_fp8(c_dtype: object) -> bool:
    """Whether c_dtype names an 8-bit C (an unknown name is left to the plan's check)."""
    try:
        return canonical_dtype(c_dtype, "c_dtype", C_DTYPES + FP8_C_DTYPES) in FP8_C_DTYPES
    except ValueError:
        return False


def check_fp8_out(a: Any, fp8_out: bool, out_scale: Any, amax: Any) -> tuple:
    """(out_scale, amax) of an 8-bit C, checked (ValueError/TypeError naming the argument and the rule): only with an
    8-bit out; out_scale a real number or a 1-element float32 CUDA tensor on a's device, amax a 1-element float32
    CUDA tensor there."""
    if not fp8_out:
        what = "out_scale" if out_scale is not None else "amax"
        raise ValueError(f"{what} is only for an 8-bit C: pass out= of dtype float8_e4m3fn or "
                         "c_dtype=torch.float8_e4m3fn")
    if out_scale is not None and not _is_tensor(out_scale):
        if isinstance(out_scale, bool) or not isinstance(out_scale, Real):
            raise TypeError(f"out_scale must be a real number or a float32 CUDA tensor, got {type(out_scale).__name__}")
        if math.isnan(float(out_scale)):
            raise ValueError("out_scale must not be NaN")
    for what, t in (("out_scale", out_scale), ("amax", amax)):
        if t is None or (what == "out_scale" and not _is_tensor(t)):
            continue
        if not _is_tensor(t):
            raise TypeError(f"{what} must be a float32 CUDA tensor, got {type(t).__name__}")
        if str(t.dtype) != "torch.float32" or not getattr(t, "is_cuda", False) or t.device != a.device:
            raise ValueError(f"{what} must be a float32 CUDA tensor on a's device, got {t.dtype} on {t.device}")
        if t.numel() != 1:
            raise ValueError(f"{what} must have one element, got shape {tuple(t.shape)}")
    return out_scale, amax


def k_major_copies(a: Any, b: Any) -> tuple[Any, Any]:
    """(a, b) with an 8-bit operand whose K mode is not unit-stride copied K-major (a row-major, b as the transpose
    of a row-major (N, K)) on the device; others unchanged."""
    fp8 = ("torch.float8_e4m3fn", "torch.float8_e5m2")
    if str(a.dtype) in fp8 and a.shape[-1] > 1 and a.stride(-1) != 1:
        a = a.contiguous()
    if str(b.dtype) in fp8 and b.shape[-2] > 1 and b.stride(-2) != 1:
        b = b.transpose(-1, -2).contiguous().transpose(-1, -2)
    return a, b


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "data_ptr") and hasattr(x, "dtype")


def scale_modes(a: Any, b: Any, scale_a: Any, scale_b: Any) -> tuple:
    """(scale_a mode, scale_b mode) of device scales (`spec.SCALE_A_MODES`/`SCALE_B_MODES`): float32 CUDA tensors on
    a's device, one element ("tensor"), or (M, 1) for a ("m") and (1, N) for b ("n") with unit stride along it
    (ValueError naming the scale otherwise)."""
    out = []
    for what, t, axis, extent in (("scale_a", scale_a, -2, a.shape[-2]), ("scale_b", scale_b, -1, b.shape[-1])):
        if t is None:
            out.append(None)
            continue
        if str(t.dtype) != "torch.float32" or not getattr(t, "is_cuda", False) or t.device != a.device:
            raise ValueError(f"{what} must be a float32 CUDA tensor on a's device, got {t.dtype} on {t.device}")
        if t.numel() == 1:
            out.append("tensor")
            continue
        want = (extent, 1) if axis == -2 else (1, extent)
        if a.dim() != 2 or tuple(t.shape) != want or (extent > 1 and t.stride()[axis] != 1):
            raise ValueError(f"{what} must have one element or shape {want} with unit stride (rowwise scales need "
                             f"2-D a and b), got shape {tuple(t.shape)} strides {tuple(t.stride())}")
        out.append("m" if axis == -2 else "n")
    return tuple(out)


def _scaled_alpha(alpha: object, scale_a: object, scale_b: object) -> float:
    """alpha * scale_a * scale_b for Python-number scales (ValueError naming a scale of another kind)."""
    out = alpha
    for what, v in (("scale_a", scale_a), ("scale_b", scale_b)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{what} must be a Python float or a float32 CUDA tensor, got {type(v).__name__}")
        if not isinstance(out, (int, float)):
            raise ValueError(f"{what} needs a Python-number alpha, got {type(out).__name__}")
        out = float(out) * float(v)
    return float(out)


def _geometry(t: Any) -> Any:
    """A bias/input tensor's part of the plan key (its type alone for what is not a tensor: refused on a miss)."""
    if t is None:
        return None
    try:
        return (tuple(t.shape), tuple(t.stride()), t.dtype, t.device)
    except (AttributeError, TypeError):
        return (type(t),)


def _epilogue_key(epi: tuple) -> tuple:
    """The epilogue's part of the plan key: activation, bias, input and pre_activation_out geometry, alpha == 1 and
    beta == 0."""
    bias, inp, alpha, beta, activation, aux = epi
    return (
        activation if activation.__class__ is str or activation is None else (type(activation),),
        _geometry(bias),
        _geometry(inp),
        _is(alpha, 1.0),
        _is(beta, 0.0),
        _geometry(aux),
    )


def _is(v: Any, x: float) -> tuple:
    """(True, v == x) for a real number v, else (type(v),) (check_epilogue refuses it on the miss)."""
    if isinstance(v, Real) and not isinstance(v, bool):
        return (True, float(v) == x)
    return (type(v),)
