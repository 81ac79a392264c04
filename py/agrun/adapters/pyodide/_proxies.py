"""Every proxy agrun hands to JavaScript, made and destroyed in one place.

A `create_proxy` that is never destroyed keeps its Python object alive for the life of the
page. `lent_proxies` makes callbacks that live exactly as long as a ``with`` block, and counts
the live ones so a test can check that none outlive their call (``rt.diagnostics()``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyodide.ffi import JsProxy, create_proxy

__all__ = ["lent_proxies", "live_proxies"]

_live = 0


def live_proxies() -> int:
    """How many proxies made here are alive now (0 between calls)."""
    return _live


@contextmanager
def lent_proxies(*callbacks: Callable[..., Any]) -> Iterator[tuple[JsProxy, ...]]:
    """JS-callable proxies of ``callbacks``, destroyed when the block ends, however it ends."""
    global _live
    proxies = tuple(create_proxy(callback) for callback in callbacks)
    _live += len(proxies)
    try:
        yield proxies
    finally:
        for proxy in proxies:
            proxy.destroy()
        _live -= len(proxies)
