"""Memoization of pure layout-algebra functions on static arguments.

`memoize` caches a function's result keyed on its arguments, but only when every argument is
static: a Python ``int``, ``None``, ``str``, ``bool``-free tuples of those, or an object whose
``_cute_static`` attribute is true (``Layout`` and ``ScaledBasis`` provide it; a swizzle or a composed
layout may provide it too). An argument holding a run-time value (an object with ``__cute_int__``)
is never cached, so its symbolic arithmetic is replayed on every call.

Results must be immutable (layouts, tuples, ints); every cached function in this package returns such.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["memoize", "clear_caches", "cache_sizes", "is_static_arg", "MAX_ENTRIES"]

F = TypeVar("F", bound=Callable[..., Any])

#: Per-function bound; a full cache is emptied and refilled (cheap, and bounded memory).
MAX_ENTRIES = 1 << 16

_CACHES: dict[str, dict[Any, Any]] = {}


def is_static_arg(x: Any) -> bool:
    """Whether `x` is made only of static values and may serve as part of a cache key."""
    t = type(x)
    if t is int or t is str or x is None:
        return True
    if t is tuple:
        for e in x:
            if not is_static_arg(e):
                return False
        return True
    if t is bool or t is float:
        return False
    return bool(getattr(x, "_cute_static", False))


_MISS = object()


def memoize(fn: F) -> F:
    """Decorate `fn` so repeated calls with the same static arguments return the cached result.

    The cache is looked up first (a Layout holding run-time values is unhashable, so such a call
    never hits); on a miss the result is stored only if every argument is static.
    """
    from .layout import Layout  # imported here: layout does not import this module

    cache: dict[Any, Any] = {}
    _CACHES[f"{fn.__module__}.{fn.__qualname__}"] = cache
    static = is_static_arg
    limit = MAX_ENTRIES
    get = cache.get
    miss = _MISS

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return _call_kw(fn, cache, static, args, kwargs)
        try:
            result = get(args, miss)
        except TypeError:  # an unhashable argument (or a layout holding run-time values)
            return fn(*args)
        if result is not miss:
            return result
        for a in args:
            t = type(a)
            if t is Layout:
                st = a._st
                if st is None:
                    st = a._cute_static
                if not st:
                    return fn(*args)
            elif t is not int and a is not None and not static(a):
                return fn(*args)
        result = fn(*args)
        if len(cache) >= limit:
            cache.clear()
        cache[args] = result
        return result

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    wrapper.cache = cache  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _call_kw(
    fn: Callable[..., Any], cache: dict, static: Callable[[Any], bool], args: tuple, kwargs: dict
) -> Any:
    """The keyword-argument path of a memoized call (rare): value cache only."""
    if not static(args) or not static(tuple(kwargs.values())):
        return fn(*args, **kwargs)
    key = (args, tuple(sorted(kwargs.items())))
    try:
        result = cache.get(key, _MISS)
    except TypeError:
        return fn(*args, **kwargs)
    if result is _MISS:
        result = fn(*args, **kwargs)
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        cache[key] = result
    return result


def clear_caches() -> None:
    """Empty every memoization cache of this package."""
    for c in _CACHES.values():
        c.clear()


def cache_sizes() -> dict[str, int]:
    """Number of cached entries per memoized function (for benchmarks and tests)."""
    return {name: len(c) for name, c in _CACHES.items()}
