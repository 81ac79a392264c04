"""The Pyodide `Transport` of the OpenAI-compatible provider: the browser's ``fetch``.

The body streams through ``response.body.getReader()``, piece by piece as bytes. An
``AbortController`` aborts the request whenever the generator stops early — the consuming
task was cancelled, the provider closed it, or a timeout fired — so the browser drops the
connection and the server sees the client go. Only JSON text and bytes cross: the request's
init object is built by ``JSON.parse``, the headers come back through ``JSON.stringify``,
and no Python object is lent to JavaScript (no proxy to destroy).

A page calling a server on another origin needs CORS from it, and ``Retry-After`` is only
visible if the server lists it in ``Access-Control-Expose-Headers``.

The request starts from a microtask of its own, not from under the interpreter's frames:
Chromium records the JavaScript stack every request starts from (its initiator) while
DevTools is attached, as it is whenever Playwright drives the page, and from Python that
stack runs through the whole interpreter. Measured in the page, a ``fetch()`` called from
Python took 1.8 ms under DevTools against 0.7 from a microtask, and 0.8-1.0 against 0.6
without DevTools (docs/performance.md). boot.js gives the JS helper that starts it
(``_agrun_js.fetchSoon``).

The JS globals are looked up at each call, never held by the module: boot.js imports it
before it makes its memory snapshot, while Python's ``js`` is the proxy Pyodide records paths
through, and what a module takes from it then stays behind that proxy for the life of the
page (docs/performance.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from pyodide.ffi import JsException

from ..openai._transport import HttpHead, TransportError, TransportRefused

__all__ = ["FetchTransport"]


class FetchTransport:
    """Posts with ``fetch`` and streams the body as it arrives."""

    def __repr__(self) -> str:
        return "FetchTransport()"

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str]
    ) -> AsyncGenerator[HttpHead | bytes, None]:
        """Yield the head, then the body's chunks; stopping early aborts the request."""
        from js import JSON, AbortController, Object  # at the call: see above

        controller = AbortController.new()
        init = JSON.parse(
            json.dumps({"method": "POST", "headers": dict(headers), "body": body.decode("utf-8")})
        )
        init.signal = controller.signal
        complete = False
        try:
            try:
                response = await _fetch_soon(url, init)
            except JsException as error:
                if getattr(error, "name", "") == "PolicyRefusal":  # boot.js: the page's policy
                    raise TransportRefused(_describe(error)) from None
                raise TransportError(_describe(error)) from None
            names = json.loads(JSON.stringify(Object.fromEntries(response.headers)))
            yield HttpHead(int(response.status), {k.lower(): str(v) for k, v in names.items()})
            if response.body:  # null for a body-less status (204)
                reader = response.body.getReader()
                while True:
                    try:
                        result = await reader.read()
                    except JsException as error:
                        raise TransportError(_describe(error)) from None
                    if result.done:
                        break
                    yield result.value.to_bytes()
            complete = True
        finally:
            if not complete:
                # Cancelled, closed early or failed: the request must not live on in the page.
                controller.abort()


def _fetch_soon(url: str, init: Any) -> Any:
    """``fetch(url, init)`` from a microtask of its own: a promise of the response.

    boot.js gives the helper (a promise made here would reach Python as a future, and a
    Python callback would be a proxy to destroy); a Pyodide booted some other way fetches
    from here, as before.
    """
    try:
        from _agrun_js import fetchSoon  # type: ignore[import-not-found]  # boot.js gives it
    except ImportError:
        from js import fetch as fetchSoon
    return fetchSoon(url, init)


def _describe(error: Any) -> str:
    name = str(getattr(error, "name", "") or "Error")
    message = str(getattr(error, "message", "") or "")
    return f"{name}: {message}" if message else name
