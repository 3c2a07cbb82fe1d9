"""Command line: `python -m cute_runtime info` (GPUs) and `python -m cute_runtime bundle DIR` (a bundle)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __version__, driver
from ._cli import Parser
from .bundle import load_bundle
from .errors import BundleError


def _info() -> int:
    reason = driver.unavailable_reason()
    if reason is not None:
        print(f"cute-runtime {__version__}: {reason}")
        return 1
    from .device import device_properties

    for ordinal in range(driver.device_count()):
        print(json.dumps(device_properties(ordinal).as_dict(), indent=2))
    return 0


def _bundle(path: str) -> int:
    try:
        bundle = load_bundle(path)
    except BundleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{bundle.path}: {len(bundle)} kernels, sha256 verified")
    for item in bundle.items:
        sig = ", ".join(f"{p.name}: {p.kind}" for p in item.entry.params)
        launch = item.entry.launch
        payloads = "+".join(k for k, v in (("cubin", item.cubin), ("ptx", item.ptx)) if v is not None)
        print(
            f"  {item.entry.name}({sig})  arch={item.entry.target} [{payloads}] "
            f"block={list(launch.block)} cluster={list(launch.cluster)} smem={launch.dynamic_smem}"
        )
    for name, sig in sorted(bundle.signatures.items()):
        args = ", ".join(f"{a['name']}: {a['kind']}" for a in sig["args"])
        print(f"  JIT kernel {name}({args}): load_bundle(path)[{name!r}](...)")
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line: `info` and `bundle PATH`."""
    parser = Parser(
        prog="cute-runtime", description=__doc__,
        epilog="examples:\n  python -m cute_runtime info\n  python -m cute_runtime bundle build/aot",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=Parser, help="info or bundle (default: none, required; example: info)")
    sub.add_parser("info", help="print the properties of every visible GPU",
                   description="Print the properties of every visible GPU as JSON (exit status 1 without one).")
    b = sub.add_parser("bundle", help="verify an AOT bundle and list its kernels",
                       description="Verify an AOT bundle (format, version, sha256 of every file) and list its kernels.")
    b.add_argument("path", help="the bundle directory or zip file (default: none, required; example: build/aot)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parser().parse_args(argv)
    if args.command == "info":
        return _info()
    return _bundle(args.path)


if __name__ == "__main__":
    sys.exit(main())
