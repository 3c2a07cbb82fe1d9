"""Flags and parsing shared by the example CLIs."""

from __future__ import annotations

import argparse
import os

__all__ = ["add_bundle_flag", "apply_bundle_flag", "parse_dtype"]

_CANON = {
    "float32": "float32", "f32": "float32", "float": "float32",
    "float16": "float16", "f16": "float16", "half": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "int32": "int32", "i32": "int32", "int": "int32",
    "tfloat32": "tfloat32", "tf32": "tfloat32",
    "float8e4m3fn": "float8_e4m3fn", "float8_e4m3fn": "float8_e4m3fn",
    "float8e5m2": "float8_e5m2", "float8_e5m2": "float8_e5m2",
    "int8": "int8", "uint8": "uint8",
}


def parse_dtype(text: str, allowed: tuple[str, ...], flag: str) -> str:
    """torch's lower-case dtype name for `Float32`/`float32`-style text; SystemExit naming the flag otherwise."""
    name = _CANON.get(text.strip().lower().replace("torch.", ""))
    if name is None or name not in allowed:
        raise SystemExit(f"error: {flag} must be one of {', '.join(allowed)} (CuTeDSL or torch spelling), got {text!r}")
    return name


def add_bundle_flag(parser: argparse.ArgumentParser) -> None:
    """Add `--bundle DIR` (default: CUTE_BUNDLE_DIR) to a CLI."""
    parser.add_argument("--bundle", default=None, metavar="DIR",
                        help="serve kernels from this AOT bundle (default: $CUTE_BUNDLE_DIR, else compile)")


def apply_bundle_flag(args: argparse.Namespace) -> None:
    """Make the examples load kernels from args.bundle when it is given."""
    if args.bundle is not None:
        if not os.path.exists(args.bundle):
            raise SystemExit(f"error: --bundle {args.bundle!r} does not exist")
        from ._compiled import use_bundle

        use_bundle(args.bundle)
