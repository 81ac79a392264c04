"""Runs ``async def`` tests on CPython and inside Pyodide alike.

Pyodide's own event loop (WebLoop) cannot block, so ``asyncio.run`` does not work there
without JSPI, which Node 20 lacks. The core's tests never wait on real I/O, only on
timers and each other, so inside Pyodide they run on `TimerLoop`: an asyncio loop whose
"selector" just sleeps until the next timer is due.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest

import agrun
from agrun.context._request import Author
from agrun.testing import FixedClock, SequentialIds

IN_PYODIDE = sys.platform == "emscripten"
# agrun's source tree, for tests that read the code itself: in Pyodide agrun is the page's
# wheel, which ships bytecode only.
AGRUN_SOURCE = Path(__file__).resolve().parent.parent / "py" / "agrun"

# Every kind of user-role message the library writes itself (spec 003), read from the code.
LIBRARY_FRAMES = tuple(author for author in get_args(Author) if author != "person")


class _SleepSelector:
    """The selector `TimerLoop` hands to asyncio: there are no file descriptors to watch."""

    def select(self, timeout: float | None) -> list[Any]:
        if timeout:
            time.sleep(timeout)
        return []

    def close(self) -> None:
        pass


class TimerLoop(asyncio.BaseEventLoop):
    """An asyncio loop that only runs callbacks and timers (enough for the pure core)."""

    def __init__(self) -> None:
        super().__init__()
        self._selector = _SleepSelector()

    def _process_events(self, event_list: list[Any]) -> None:
        pass

    def _write_to_self(self) -> None:
        pass


def run_async(coro: Any) -> Any:
    if not IN_PYODIDE:
        with asyncio.Runner() as runner:
            return runner.run(coro)
    # Pyodide marks its WebLoop as running for the life of the interpreter; step aside
    # from it while the test's own loop runs, then put it back.
    web_loop = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        with asyncio.Runner(loop_factory=TimerLoop) as runner:
            return runner.run(coro)
    finally:
        asyncio.events._set_running_loop(web_loop)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    run_async(pyfuncitem.obj(**kwargs))
    return True


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cpython_only: needs a CPython-only adapter (e.g. sqlite)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # In Pyodide the CPython-only tests are deselected (not skipped): they belong to the
    # CPython run, which always runs them.
    if not IN_PYODIDE:
        return
    kept = [item for item in items if item.get_closest_marker("cpython_only") is None]
    dropped = [item for item in items if item.get_closest_marker("cpython_only") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def make_runtime(
    *skills: Any, clock: agrun.Clock | None = None, ids: agrun.Ids | None = None, **options: Any
) -> agrun.Runtime:
    """A runtime on fixed ports (`FixedClock`, `SequentialIds`) with ``skills``: what most
    tests start from (``from conftest import make_runtime``)."""
    return agrun.create_runtime(
        clock=FixedClock() if clock is None else clock,
        ids=SequentialIds() if ids is None else ids,
        skills=skills,
        **options,
    )


def _openai_double(*, keep_alive: bool) -> Iterator[Any]:
    tools = str(Path(__file__).resolve().parent.parent / "tools")
    sys.path.insert(0, tools)
    try:
        from openai_double import serve_openai_double
    finally:
        sys.path.remove(tools)
    server, _ = serve_openai_double(keep_alive=keep_alive)
    yield server
    server.close()


@pytest.fixture
def double() -> Iterator[Any]:
    """A real OpenAI-compatible server on 127.0.0.1 that can misbehave on request
    (tools/openai_double.py), for the CPython tests of the OpenAI adapter."""
    yield from _openai_double(keep_alive=False)


@pytest.fixture
def keep_alive_double() -> Iterator[Any]:
    """`double`, keeping each connection open after its response for the client's next
    request (HTTP/1.1's default), and counting connections."""
    yield from _openai_double(keep_alive=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A real PostgreSQL server for this test run (tools/pg_server.py: `initdb` into a
    temporary folder, a unix socket there, stopped at the end); its conninfo. CPython only.
    A machine without PostgreSQL fails these tests, with how to install it: never a skip."""
    tools = str(Path(__file__).resolve().parent.parent / "tools")
    sys.path.insert(0, tools)
    try:
        from pg_server import PgServerError, throwaway_server
    finally:
        sys.path.remove(tools)
    try:
        import psycopg  # noqa: F401
    except ImportError as error:
        pytest.fail(f"psycopg is not installed ({error}): ./build.sh test installs it")
    try:
        with throwaway_server() as server:
            yield server.conninfo
    except PgServerError as error:
        pytest.fail(f"no PostgreSQL server for the tests: {error}")


_schemas = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_conninfo(postgres_server: str) -> str:
    """A conninfo on the test server whose tables go into a new, empty schema of their own
    (as a fresh file does for SQLite)."""
    import psycopg

    schema = f"test_{next(_schemas)}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}".encode())
    return f"{postgres_server}&options=-csearch_path%3D{schema}"
