"""The spec of a JIT kernel specialization, and the parameter list it implies: one owner for both sides.

cute-runtime derives a spec from a call's arguments; cute-ir builds the kernel from the same spec; both read
the kernel's parameters from `kernel_params` (the host packs them in that order, the kernel declares them).

    spec = {"kernel": "transpose", "source": "h0123...", "block": [32, 8, 1], "cluster": [1, 1, 1],
            "args": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [None, None],
                      "unit": 1, "align": 16, "index": 32}, ...,
                     {"name": "tile", "kind": "const", "value": 32},
                     {"name": "alpha", "kind": "scalar", "param": "f32"}]}

A tensor argument: `shape` holds each mode's static extent or None (dynamic: a kernel parameter);
`unit` is the mode whose stride is 1 (static) or None; every other stride is a kernel parameter; `align` is
the byte alignment proven for the address and for every dynamic stride (a power of two, <= 16); `index` (32
or 64) the width of the extents, strides and element offsets (32 when every offset fits in an int32).
Kernel parameters per tensor `x`: `x` (ptr), then `x_shape<m>` for each dynamic extent, then `x_stride<m>`
for each mode but `unit` (kind i32 or i64 by `index`). A "const" is compiled in (an int, bool, or a layout as
`{"shape": ..., "stride": ...}` / a swizzle `{"swizzle": [b, m, s]}`, an identifier-token string, or a frozen
dataclass as `{"fields": {...}}`); a "scalar" is a kernel parameter of its by-value `param` kind (a number,
or "tma": an encoded TMA descriptor).

A kernel's *signature* (what a bundle stores so that a host without the Python function dispatches calls) is
`{"name", "source", "block", "cluster", "args": [{"name", "kind": "tensor", "dtype", "rank", "static"} |
{"name", "kind": "const", "default"?} | {"name", "kind": "scalar", "param"}]}`; block or cluster is null when
it depends on compile-time arguments (a bundle then matches a call's spec on everything else, `spec_without_launch`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kernel_spec import check_spec, spec_digest
from .params import PARAM_KINDS, Param

__all__ = [
    "MAX_ALIGN",
    "TensorArg",
    "check_signature",
    "entry_symbol",
    "kernel_params",
    "spec_without_launch",
    "tensor_arg",
    "tensor_param_names",
]

MAX_ALIGN = 16  # bytes: the widest (128-bit) access a kernel proves alignment for


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument's specialization (see the module docstring)."""

    name: str
    dtype: str
    shape: tuple[int | None, ...]
    unit: int | None
    align: int
    index: int

    @property
    def rank(self) -> int:
        """Number of modes."""
        return len(self.shape)

    def to_spec(self) -> dict[str, Any]:
        """The spec object of this argument."""
        return {
            "name": self.name,
            "kind": "tensor",
            "dtype": self.dtype,
            "shape": list(self.shape),
            "unit": self.unit,
            "align": self.align,
            "index": self.index,
        }


def tensor_arg(d: dict[str, Any]) -> TensorArg:
    """The TensorArg of a spec's tensor object (ValueError naming a bad field)."""
    name = d.get("name")
    shape = d.get("shape")
    if not isinstance(shape, list) or any(
        not (e is None or (type(e) is int and e >= 0)) for e in shape
    ):
        raise ValueError(f"tensor {name!r}: shape must list static extents (int >= 0) or None, got {shape!r}")
    unit = d.get("unit")
    if unit is not None and (type(unit) is not int or not 0 <= unit < len(shape)):
        raise ValueError(f"tensor {name!r}: unit must be a mode index or None, got {unit!r}")
    align = d.get("align")
    if type(align) is not int or align < 1 or align & (align - 1) or align > MAX_ALIGN:
        raise ValueError(f"tensor {name!r}: align must be a power of two <= {MAX_ALIGN}, got {align!r}")
    index = d.get("index")
    if index not in (32, 64):
        raise ValueError(f"tensor {name!r}: index must be 32 or 64, got {index!r}")
    return TensorArg(str(name), str(d.get("dtype")), tuple(shape), unit, align, index)


def tensor_param_names(t: TensorArg) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """([(mode, param name)] of the dynamic extents, [(mode, param name)] of the dynamic strides)."""
    extents = [(m, f"{t.name}_shape{m}") for m, e in enumerate(t.shape) if e is None]
    strides = [(m, f"{t.name}_stride{m}") for m in range(t.rank) if m != t.unit]
    return extents, strides


def kernel_params(spec: dict[str, Any]) -> tuple[Param, ...]:
    """The kernel's parameters, in order, for a JIT spec."""
    out: list[Param] = []
    for d in spec["args"]:
        kind = d["kind"]
        if kind == "tensor":
            t = tensor_arg(d)
            ik = "i32" if t.index == 32 else "i64"
            extents, strides = tensor_param_names(t)
            out.append(Param(t.name, "ptr"))
            out += [Param(n, ik) for _, n in extents]
            out += [Param(n, ik) for _, n in strides]
        elif kind == "scalar":
            if d.get("param") not in PARAM_KINDS or d["param"] == "ptr":
                raise ValueError(f"scalar {d.get('name')!r}: param must be a by-value kind, got {d.get('param')!r}")
            out.append(Param(d["name"], d["param"]))
        elif kind != "const":
            raise ValueError(f"argument {d.get('name')!r}: kind must be tensor, scalar or const, got {kind!r}")
    return tuple(out)


def entry_symbol(spec: dict[str, Any]) -> str:
    """The PTX entry symbol of a specialization: `<kernel>_<first 8 hex digits of the spec digest>`."""
    check_spec(spec)
    return f"{spec['kernel']}_{spec_digest(spec)[:8]}"


def spec_without_launch(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec without its block and cluster (what identifies a specialization when they are derived)."""
    return {k: v for k, v in spec.items() if k not in ("block", "cluster")}


def check_signature(sig: Any, where: str = "signature") -> dict[str, Any]:
    """The signature itself after checking its fields (ValueError naming the first bad one)."""
    if not isinstance(sig, dict):
        raise ValueError(f"{where} must be an object, got {type(sig).__name__}")
    for key in ("name", "source", "block", "cluster", "args"):
        if key not in sig:
            raise ValueError(f"{where} lacks the field {key!r}")
    check_spec({k: sig[k] for k in ("name", "source", "block", "cluster")})
    for key in ("block", "cluster"):
        v = sig[key]
        if v is not None and (not isinstance(v, list) or len(v) != 3 or any(type(e) is not int or e < 1 for e in v)):
            raise ValueError(f"{where}.{key} must be a list of 3 ints >= 1 or null, got {v!r}")
    args = sig["args"]
    if not isinstance(args, list):
        raise ValueError(f"{where}.args must be a list")
    for i, a in enumerate(args):
        w = f"{where}.args[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not a["name"].isidentifier():
            raise ValueError(f"{w} must be an object with an identifier 'name'")
        kind = a.get("kind")
        if kind == "tensor":
            if a.get("rank") is not None and (type(a["rank"]) is not int or a["rank"] < 0):
                raise ValueError(f"{w}.rank must be an int >= 0 or null")
            if not isinstance(a.get("static", []), list) or any(type(m) is not int for m in a.get("static", [])):
                raise ValueError(f"{w}.static must list mode indices")
        elif kind == "scalar":
            if a.get("param") not in PARAM_KINDS or a["param"] == "ptr":
                raise ValueError(f"{w}.param must be a by-value parameter kind")
        elif kind != "const":
            raise ValueError(f"{w}.kind must be tensor, const or scalar, got {kind!r}")
        check_spec({"arg": a})
    return sig
