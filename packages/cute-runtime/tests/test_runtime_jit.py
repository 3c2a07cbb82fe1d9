"""The JIT front end without cute-ir: specialization, spec, compile-once, the fast-path key (CPU only).

A fake compiler (registered with `register_compiler`) returns hand-written PTX for the spec's entry, so these
tests exercise everything from the arguments to a `Kernel` without MLIR and without a GPU.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest
from cute_nvarch.entry import KernelEntry, Launch
from cute_nvarch.jit_spec import entry_symbol, kernel_params
from cute_runtime import CompilerError, JitKernel, Scalar, Tensor, TensorMap, kernel, register_compiler
from cute_runtime.jit import source_digest

TARGET = "sm_90a"


class Art:
    """What a compiler returns: entry, cubin, ptx."""

    def __init__(self, spec: dict[str, Any], target: str) -> None:
        name = entry_symbol(spec)
        params = kernel_params(spec)
        decl = ", ".join(f".param .u64 {p.name}" for p in params)
        self.ptx = f".version 7.8\n.target sm_80\n.address_size 64\n.visible .entry {name}({decl})\n{{\n ret;\n}}\n"
        self.cubin = None
        self.entry = KernelEntry(name, target, params, Launch(tuple(spec["block"]), tuple(spec["cluster"])), spec)


@pytest.fixture
def compiled() -> Any:
    calls: list[dict[str, Any]] = []

    def fake(fn: Any, spec: dict[str, Any], target: str) -> Art:
        calls.append(spec)
        return Art(spec, target)

    register_compiler(fake)
    copy2d._kernels.clear()
    yield calls
    register_compiler(None)


class CAI:
    """A __cuda_array_interface__ object with a fake device pointer."""

    def __init__(self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...] | None = None,
                 typestr: str = "<f4") -> None:
        self.__cuda_array_interface__ = {
            "data": (ptr, False), "shape": shape, "typestr": typestr, "strides": strides, "version": 3
        }


class DLPackOnDevice:
    """A DLPack producer that claims CUDA memory: a CPU tensor's capsule (its address is the fake pointer)."""

    def __init__(self, t: Any) -> None:
        self.t = t

    def __dlpack__(self, stream: Any = None) -> Any:
        return self.t.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)


@kernel(block=(32, 8))
def copy2d(k, x: Tensor(rank=2), y: Tensor(rank=2, static=(1,)), alpha: Scalar("f32"), tile: int = 32):
    raise AssertionError("the fake compiler never builds")


def test_dynamic_extent_compiles_once(compiled: list) -> None:
    k1 = copy2d.compile(CAI(1 << 20, (100, 64)), CAI(1 << 24, (100, 64)), 1.0, target=TARGET)
    k2 = copy2d.compile(CAI(1 << 20, (333, 64)), CAI(1 << 24, (333, 64)), 2.0, target=TARGET)
    assert k1 is k2 and len(compiled) == 1
    spec = compiled[0]
    x, y, alpha, tile = spec["args"]
    assert x == {"name": "x", "kind": "tensor", "dtype": "float32", "shape": [None, None], "unit": 1,
                 "align": 16, "index": 32}
    assert y["shape"] == [None, 64]  # the static mode's extent is compiled in
    assert alpha == {"name": "alpha", "kind": "scalar", "param": "f32"}
    assert tile == {"name": "tile", "kind": "const", "value": 32}
    assert spec["block"] == [32, 8, 1] and spec["source"] == copy2d.digest
    assert [p.name for p in k1.entry.params] == [
        "x", "x_shape0", "x_shape1", "x_stride0", "y", "y_shape0", "y_stride0", "alpha"
    ]


def test_static_extent_and_const_specialize(compiled: list) -> None:
    copy2d.compile(CAI(1 << 20, (100, 64)), CAI(1 << 24, (100, 64)), 1.0, target=TARGET)
    copy2d.compile(CAI(1 << 20, (100, 64)), CAI(1 << 24, (100, 65)), 1.0, target=TARGET)
    copy2d.compile(CAI(1 << 20, (100, 64)), CAI(1 << 24, (100, 64)), 1.0, tile=16, target=TARGET)
    assert len(compiled) == 3


def test_misaligned_view_is_a_second_specialization(compiled: list) -> None:
    copy2d.compile(CAI(1 << 20, (8, 64)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)
    copy2d.compile(CAI((1 << 20) + 4, (8, 64)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)  # x[0, 1:] style
    assert [s["args"][0]["align"] for s in compiled] == [16, 4]
    # rows of 63 floats: 4-byte aligned rows, the same specialization as the offset view
    copy2d.compile(CAI(1 << 20, (8, 63), (63 * 4, 4)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)
    copy2d.compile(CAI(1 << 20, (8, 62), (62 * 4, 4)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)
    assert [s["args"][0]["align"] for s in compiled] == [16, 4, 8]


def test_contiguous_mode_and_index_width(compiled: list) -> None:
    copy2d.compile(CAI(1 << 20, (64, 8), (4, 256)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)  # column-major
    copy2d.compile(CAI(1 << 20, (1 << 16, 1 << 16)), CAI(1 << 24, (8, 64)), 1.0, target=TARGET)  # 2**32 elements
    (a,), (b,) = ([s["args"][0] for s in compiled[i : i + 1]] for i in range(2))
    assert a["unit"] == 0 and a["index"] == 32
    assert b["unit"] == 1 and b["index"] == 64
    assert [p.kind for p in kernel_params(compiled[1])][:4] == ["ptr", "i64", "i64", "i64"]


def test_dlpack_input_with_a_fake_device_pointer(compiled: list) -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(10, 64, dtype=torch.float16)
    k = copy2d.compile(DLPackOnDevice(x), CAI(1 << 24, (10, 64), typestr="<f2"), 1.0, target=TARGET)
    spec = compiled[0]
    assert spec["args"][0]["dtype"] == "float16" and spec["args"][0]["unit"] == 1
    assert k.entry.spec == spec
    _, packed, device = copy2d.specialize(DLPackOnDevice(x), CAI(1 << 24, (10, 64), typestr="<f2"), 1.0)
    assert packed[:4] == [x.data_ptr(), 10, 64, 64] and device == 0


def test_bad_arguments_name_the_rule(compiled: list) -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="argument 'x': tensor is on cpu, expected a CUDA tensor"):
        copy2d.compile(torch.zeros(4, 4), CAI(1 << 24, (4, 4)), 1.0, target=TARGET)
    with pytest.raises(ValueError, match="argument 'x': rank must be 2"):
        copy2d.compile(CAI(1 << 20, (4,)), CAI(1 << 24, (4, 4)), 1.0, target=TARGET)
    with pytest.raises(TypeError, match="'tile': expects a compile-time int"):
        copy2d.compile(CAI(1 << 20, (4, 4)), CAI(1 << 24, (4, 4)), 1.0, tile=2.0, target=TARGET)
    with pytest.raises(TypeError, match="missing argument 'alpha'"):
        copy2d.compile(CAI(1 << 20, (4, 4)), CAI(1 << 24, (4, 4)), target=TARGET)
    with pytest.raises(TypeError, match="argument 'y': expected a CUDA tensor"):
        copy2d.compile(CAI(1 << 20, (4, 4)), [1, 2], 1.0, target=TARGET)
    assert compiled == []


def test_no_compiler_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    register_compiler(None)
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    with pytest.raises(CompilerError, match="no kernel compiler is installed"):
        copy2d.compile(CAI(1 << 20, (4, 4)), CAI(1 << 24, (4, 4)), 1.0, tile=8, target=TARGET)


def test_fast_path_key_matches_the_slow_path(compiled: list) -> None:
    """The generated __call__ finds the plan the slow path stores under call_key (CPU tensors stand in)."""
    torch = pytest.importorskip("torch")

    @kernel
    def k3(k, a: Tensor(), b: Tensor(), c: Tensor(), n: int = 4):
        pass

    a, b, c = (torch.zeros(8, 8) for _ in range(3))
    k3._install_fast_call()
    assert type(k3) is not JitKernel and isinstance(k3, JitKernel)
    seen = []
    k3.plans[k3.call_key([a, b, c, 4])] = lambda grid, stream, *packed: seen.append((grid, stream, packed))
    k3(a, b, c, grid=(1, 2, 3), stream=7)
    k3(a, b, c=c, n=4, grid=5)
    assert [s[:2] for s in seen] == [((1, 2, 3), 7), (5, None)]
    assert seen[0][2] == (a.data_ptr(), a.shape, a.stride(), b.data_ptr(), b.shape, b.stride(),
                          c.data_ptr(), c.shape, c.stride())
    with pytest.raises(ValueError, match="tensor is on cpu"):  # a miss goes to the checked path
        k3(a, b, c, n=5, grid=1)


def test_source_digest_follows_what_the_kernel_reaches() -> None:
    ns: dict[str, Any] = {}
    code = "SIDE = 4\ndef helper(v):\n    return v * SIDE\ndef body(k, x):\n    return helper(x)\n"
    exec(compile(code, "<jit-test>", "exec"), ns)
    d1 = source_digest(ns["body"])
    ns["SIDE"] = 8
    assert source_digest(ns["body"]) != d1
    ns["SIDE"] = 4
    ns["unrelated"] = 99
    assert source_digest(ns["body"]) == d1


def test_importing_the_front_end_imports_no_compiler() -> None:
    import subprocess

    code = "import sys, cute_runtime; print(any(m == 'mlir' or m.startswith('cute_ir') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def _bundle_of_copy2d(directory: Any) -> KernelEntry:
    """Write a bundle (PTX only) of copy2d's spec for (100, 64) float32 matrices, with its signature."""
    from cute_nvarch.bundle_format import dump_manifest, make_manifest, manifest_kernel
    from cute_runtime import Placeholder

    art = Art(copy2d.specialize(Placeholder((100, 64)), Placeholder((100, 64)), 1.0)[0], TARGET)
    entry = art.entry.with_build({"registers": 1}, {"test": "1"})
    kernel_obj, files = manifest_kernel(entry, b"not a cubin", art.ptx.encode())
    kernel_obj.pop("cubin")  # PTX only (the fake compiler's)
    for name, data in files.items():
        if name.endswith(".ptx"):
            (directory / name).write_bytes(data)
    manifest = make_manifest([kernel_obj], {"copy2d": copy2d.signature()})
    (directory / "manifest.json").write_bytes(dump_manifest(manifest))
    return entry


def test_a_bundle_dispatches_by_the_stored_signature(compiled: list, tmp_path: Any) -> None:
    """A bundle written with the kernel's signature serves calls without the Python function or a compiler."""
    from cute_runtime import KernelNotFoundError, Placeholder, load_bundle

    entry = _bundle_of_copy2d(tmp_path)
    register_compiler(None)
    bundle = load_bundle(tmp_path)
    hosted = bundle["copy2d"]
    assert hosted.fn is None and hosted.digest == copy2d.digest
    k = hosted.compile(Placeholder((7, 64)), Placeholder((7, 64)), 2.0, target=TARGET)  # another extent: a hit
    assert k.name == entry.name and compiled == []
    with pytest.raises(KernelNotFoundError, match="no kernel for spec"):
        hosted.compile(Placeholder((7, 64), align=4), Placeholder((7, 64)), 2.0, target=TARGET)
    with pytest.raises(KernelNotFoundError, match="no JIT kernel 'nope'"):
        bundle["nope"]


def test_the_bundle_command_lists_jit_kernels(tmp_path: Any, capsys: pytest.CaptureFixture) -> None:
    from cute_runtime.__main__ import main

    _bundle_of_copy2d(tmp_path)
    assert main(["bundle", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "JIT kernel copy2d(x: tensor, y: tensor, alpha: scalar, tile: const)" in out


def test_source_digest_covers_closures() -> None:
    def make(tile: int) -> Any:
        def body(k, x):
            return x * tile

        return body

    assert source_digest(make(32)) != source_digest(make(16))
    assert source_digest(make(32)) == source_digest(make(32))

    marker = object()

    def bad(k, x):
        return marker

    with pytest.raises(TypeError, match="closes over 'marker'"):
        source_digest(bad)


def test_launch_plan_packs_and_launches(compiled: list) -> None:
    """The generated plan packs ptr, dynamic extents and strides in kernel_params order and calls the driver."""
    import threading

    x, y = CAI(1 << 20, (100, 64)), CAI(1 << 24, (100, 64))
    spec = copy2d.specialize(x, y, 1.5)[0]
    k = copy2d.kernel_for(spec, TARGET, 0)
    calls = []
    k._launch_fn = lambda *a: calls.append(a) or (0,)  # what load() binds: cuLaunchKernel
    k._f, k._owner, k.device = "F", threading.get_ident(), 0
    plan = copy2d._make_plan(k, spec)
    plan((3, 2, 1), 99, 1 << 20, (100, 64), (64, 1), 1 << 24, (100, 64), (64, 1), 1.5)
    plan((4, 6), 98, 1 << 20, (100, 64), (64, 1), 1 << 24, (100, 64), (64, 1), 1.5)
    plan([2], 97, 1 << 20, (100, 64), (64, 1), 1 << 24, (100, 64), (64, 1), 1.5)
    plan(5, 7, 1 << 20, (9, 64), (64, 1), 1 << 24, (9, 64), (64, 1), 2.5)
    assert [c[:10] for c in calls] == [
        ("F", 3, 2, 1, 32, 8, 1, 0, 99, k._buffer.kernel_params),
        ("F", 4, 6, 1, 32, 8, 1, 0, 98, k._buffer.kernel_params),
        ("F", 2, 1, 1, 32, 8, 1, 0, 97, k._buffer.kernel_params),
        ("F", 5, 1, 1, 32, 8, 1, 0, 7, k._buffer.kernel_params),
    ]
    k._launch_fn = lambda *a: (_ for _ in ()).throw(OverflowError("negative"))  # what cuda-bindings raises
    plan = copy2d._make_plan(k, spec)
    with pytest.raises(ValueError, match="every extent must be in"):
        plan((-1, 2), 0, 1 << 20, (9, 64), (64, 1), 1 << 24, (9, 64), (64, 1), 2.5)
    with pytest.raises(TypeError, match="grid must be an int or a tuple"):
        plan((1.5, 2), 0, 1 << 20, (9, 64), (64, 1), 1 << 24, (9, 64), (64, 1), 2.5)
    assert k._buffer.packed() == k.layout.struct.pack(1 << 20, 9, 64, 64, 1 << 24, 9, 64, 2.5)
    assert [p.name for p in k.entry.params] == ["x", "x_shape0", "x_shape1", "x_stride0", "y", "y_shape0",
                                                  "y_stride0", "alpha"]


def test_misses_look_in_cute_bundle_dir_first(compiled: list, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from cute_runtime import Placeholder

    entry = _bundle_of_copy2d(tmp_path)
    monkeypatch.setenv("CUTE_BUNDLE_DIR", str(tmp_path))
    k = copy2d.compile(Placeholder((5, 64)), Placeholder((5, 64)), 1.0, target=TARGET)
    assert k.name == entry.name and compiled == []  # served by the bundle, the compiler never asked
    copy2d.compile(Placeholder((5, 64)), Placeholder((5, 64)), 1.0, tile=8, target=TARGET)
    assert len(compiled) == 1  # a spec the bundle lacks goes to the compiler


@dataclasses.dataclass(frozen=True)
class TileConfig:
    """A compile-time dataclass argument (as the GEMM's GemmConfig)."""

    tile: int = 64
    major: str = "k"
    stages: int | None = None


@kernel(block=lambda cfg, mode: (cfg.tile, 1, 1), cluster=lambda cfg, mode: (2, 1, 1) if mode == "pair" else 1)
def tma_copy(k, src: TensorMap, n: Scalar("i32"), cfg: TileConfig, mode: str = "single"):
    raise AssertionError("the fake compiler never builds")


def test_tensor_maps_strings_and_dataclass_constants(compiled: list) -> None:
    """A TensorMap parameter is a by-value "tma" kernel parameter; a str and a frozen dataclass are compiled in,
    the launch shape may depend on them, and equal values are one specialization."""
    k1 = tma_copy.compile(None, 7, TileConfig(), target=TARGET)
    k2 = tma_copy.compile(TensorMap(bytes(128)), 9, TileConfig(), target=TARGET)
    assert k1 is k2 and len(compiled) == 1
    src, n, cfg, mode = compiled[0]["args"]
    assert src == {"name": "src", "kind": "scalar", "param": "tma"} and n["param"] == "i32"
    assert cfg["value"] == {"fields": {"tile": 64, "major": "k", "stages": None}}
    assert mode == {"name": "mode", "kind": "const", "value": "single"}
    assert [(p.name, p.kind) for p in k1.entry.params] == [("src", "tma"), ("n", "i32")]
    k3 = tma_copy.compile(None, 7, TileConfig(tile=128, major="m"), mode="pair", target=TARGET)
    assert k3 is not k1 and compiled[-1]["block"] == [128, 1, 1] and compiled[-1]["cluster"] == [2, 1, 1]
    with pytest.raises(TypeError, match="'cfg': expects a compile-time TileConfig"):
        tma_copy.compile(None, 7, {"tile": 64}, target=TARGET)
    with pytest.raises(ValueError, match="'mode': compile-time strings must be identifier tokens"):
        tma_copy.compile(None, 7, TileConfig(), mode="two words", target=TARGET)
    with pytest.raises(ValueError, match="'cfg': compile-time strings must be identifier tokens"):
        tma_copy.compile(None, 7, TileConfig(major="k-major"), target=TARGET)
    with pytest.raises(TypeError, match="field 'tile' must be None, an int, bool, str or tuple"):
        tma_copy.compile(None, 7, TileConfig(tile=1.5), target=TARGET)


def test_source_digest_covers_classes_of_user_modules(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class the kernel reaches (by name or as a parameter's annotation) keys it by its module's source."""
    mod = tmp_path / "jit_digest_cls.py"
    src = ("import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass Cfg:\n    tile: int = 1\n"
           "    def rows(self):\n        return self.tile * {}\n")
    mod.write_text(src.format(2))
    monkeypatch.syspath_prepend(str(tmp_path))
    import jit_digest_cls

    def body(k, n, cfg):  # noqa: ANN001
        return n

    body.__annotations__ = {"n": Scalar("i32"), "cfg": jit_digest_cls.Cfg}  # as evaluated annotations are
    d1 = source_digest(body)
    mod.write_text(src.format(3))
    assert source_digest(body) != d1


def test_a_bundle_dispatches_kernels_whose_launch_shape_is_derived(compiled: list, tmp_path: Any) -> None:
    """block/cluster computed from compile-time arguments: the signature stores null, and the bundle matches a
    call's spec on everything else (the GEMM's case: its block and cluster come from its GemmConfig)."""
    from cute_nvarch.bundle_format import dump_manifest, make_manifest, manifest_kernel
    from cute_runtime import KernelNotFoundError, load_bundle

    cfg = TileConfig(tile=128)
    art = Art(tma_copy.specialize(None, 1, cfg, mode="pair")[0], TARGET)
    entry = art.entry.with_build({"registers": 1}, {"test": "1"})
    kernel_obj, files = manifest_kernel(entry, b"not a cubin", art.ptx.encode())
    kernel_obj.pop("cubin")
    for name, data in files.items():
        if name.endswith(".ptx"):
            (tmp_path / name).write_bytes(data)
    sig = tma_copy.signature()
    assert sig["block"] is None and sig["cluster"] is None
    (tmp_path / "manifest.json").write_bytes(dump_manifest(make_manifest([kernel_obj], {"tma_copy": sig})))
    register_compiler(None)
    hosted = load_bundle(tmp_path)["tma_copy"]
    k = hosted.compile(TensorMap(bytes(128)), 5, cfg, mode="pair", target=TARGET)
    assert k.name == entry.name and k.entry.launch.block == (128, 1, 1) and k.entry.launch.cluster == (2, 1, 1)
    with pytest.raises(KernelNotFoundError, match="no kernel for spec"):
        hosted.compile(None, 5, cfg, target=TARGET)


def test_source_digest_covers_modules_imported_inside_functions(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Builder code a kernel imports inside its body (the recommended style: importing the kernel's module
    imports no MLIR) keys it too: an edit of such a module, or of one it imports, changes the digest."""
    pkg = tmp_path / "jitpkg_fn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("from .deep import SCALE\n\ndef emit(x):\n    return x * SCALE\n")
    (pkg / "deep.py").write_text("SCALE = 2\n")
    (pkg / "kern.py").write_text("def body(k, x):\n    from .helpers import emit\n    return emit(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from jitpkg_fn.kern import body

    d1 = source_digest(body)
    (pkg / "deep.py").write_text("SCALE = 3\n")
    d2 = source_digest(body)
    (pkg / "helpers.py").write_text("from .deep import SCALE\n\ndef emit(x):\n    return x + SCALE\n")
    assert len({d1, d2, source_digest(body)}) == 3


def test_a_miss_without_a_compiler_is_recorded(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """CUTE_RECORD_MISSES: the spec that nothing could serve is appended (one JSON line) before the error."""
    import json

    from cute_runtime import Placeholder

    path = tmp_path / "misses.jsonl"
    monkeypatch.setenv("CUTE_RECORD_MISSES", str(path))
    register_compiler(None)
    monkeypatch.setattr("cute_runtime.jit.compiler", lambda: (_ for _ in ()).throw(CompilerError("no compiler")))
    copy2d._kernels.clear()
    with pytest.raises(CompilerError):
        copy2d.compile(Placeholder((5, 64)), Placeholder((5, 64)), 1.0, target=TARGET)
    (rec,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert rec["kernel"] == "copy2d" and rec["target"] == TARGET
    assert rec["spec"] == copy2d.specialize(Placeholder((5, 64)), Placeholder((5, 64)), 1.0)[0]
