"""Memoization of pure layout-algebra functions on static arguments.

`memoize` caches a function's result keyed on its positional arguments when every one is static: a
Python ``int``, a ``str``, a tuple of static values (``None`` allowed inside), a ``Layout`` whose leaves
are all static, or another object whose ``_cute_static`` attribute is true (a swizzle, say). A layout
enters the key as a token shared by all equal layouts, so lookups hash in C. Calls with a run-time
value (an object with ``__cute_int__``), a float or a bool (which would match an equal int), or a
top-level ``None`` (a no-op tiler, returned as is) are computed every time and never stored.

Results must be immutable (layouts, tuples, ints); every cached function in this package returns such.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .layout import _TOKENS, Layout

__all__ = ["memoize", "clear_caches", "cache_sizes", "is_static_arg", "MAX_ENTRIES"]

F = TypeVar("F", bound=Callable[..., Any])

#: Per-function bound; a full cache is emptied and refilled (cheap, and bounded memory).
MAX_ENTRIES = 1 << 16

_CACHES: dict[str, dict[Any, Any]] = {}




def is_static_arg(x: Any) -> bool:
    """Whether `x` is made only of static values and may serve as part of a cache key."""
    t = type(x)
    if t is int or x is None:
        return True
    if t is Layout:
        st = x._st
        return x._cute_static if st is None else st
    if t is tuple:
        for e in x:
            if type(e) is not int and not is_static_arg(e):
                return False
        return True
    if t is str:
        return True
    if t is bool or t is float:
        return False
    return bool(getattr(x, "_cute_static", False))


_MISS = object()


def memoize(fn: F) -> F:
    """Decorate `fn` so repeated calls with the same static arguments return the cached result.

    Only calls whose arguments are all static are looked up and stored (see `is_static_arg`); layouts
    enter the key as tokens shared by equal layouts, so a lookup hashes in C only.
    """
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
        # The key maps each layout to its token (C-level hashing); any non-static argument (a run-time
        # value, a float or a bool, which would match an equal int) skips the cache.
        ks = []
        for a in args:
            t = type(a)
            if t is Layout:
                k = a._k
                if k is None:
                    k = a._key()
                if k is False:
                    return fn(*args)
                ks.append(k)
            elif t is int:
                ks.append(a)
            elif a is None:  # a no-op tiler: the callee returns its input as is, uncached
                return fn(*args)
            elif t is tuple:  # a tiler or a shape: inlined for the common flat case
                kt = []
                for e in a:
                    te = type(e)
                    if te is Layout:
                        k = e._k
                        if k is None:
                            k = e._key()
                        if k is False:
                            return fn(*args)
                    elif te is int or e is None:
                        k = e
                    else:
                        k = _tuple_key(e) if te is tuple else (e if static(e) else None)
                        if k is None:
                            return fn(*args)
                    kt.append(k)
                ks.append(tuple(kt))
            elif static(a):
                ks.append(a)
            else:
                return fn(*args)
        key = tuple(ks)
        try:
            result = get(key, miss)
        except TypeError:  # an unhashable argument
            return fn(*args)
        if result is miss:
            result = fn(*args)
            if len(cache) >= limit:
                cache.clear()
            cache[key] = result
        return result

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    wrapper.cache = cache  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _tuple_key(t: tuple) -> Any:
    """The cache-key form of a tuple argument (layouts replaced by their tokens), or None if not static."""
    out = []
    for e in t:
        te = type(e)
        if te is int or e is None:
            out.append(e)
        elif te is Layout:
            k = e._k
            if k is None:
                k = e._key()
            if k is False:
                return None
            out.append(k)
        elif te is tuple:
            k = _tuple_key(e)
            if k is None:
                return None
            out.append(k)
        elif is_static_arg(e):
            out.append(e)
        else:
            return None
    return tuple(out)


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
    """Empty every memoization cache of this package (and the table of layout tokens that keys them)."""
    for c in _CACHES.values():
        c.clear()
    _TOKENS.clear()


def cache_sizes() -> dict[str, int]:
    """Number of cached entries per memoized function (for benchmarks and tests)."""
    return {name: len(c) for name, c in _CACHES.items()}
