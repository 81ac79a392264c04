"""dist/agrun.js and the worker's entry are bundles (build.sh's bundle_entries): a first visit
asks for agrun.js, then for the few modules it shares with other entries and pages (the boot's,
the error classes, the heartbeat), all at once, before its boot starts; and the bundle and
those modules are one copy each, so an error class, the page's interpreter and the heartbeat
are the same whichever file a page reaches them through."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from conftest import BOOT_TIMEOUT_MS, DIST, boot_runtime, guard_context, guard_page
from serve import serve_in_background

# What build.sh leaves out of the bundles (SHARED_MODULES), as paths in dist/.
SHARED = {
    "errors.js",
    "boot/boot.js",
    "boot/snapshot.js",
    "boot/site-files.js",
    "engine/heartbeat.js",
}

_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;'"\n]*?(?:from\s+)?["']([^"']+)["']""", re.M)

# Each script this page asked for before its boot started: [path, asked at, arrived at].
SCRIPTS_BEFORE_BOOT = """() => {
    const [boot] = performance.getEntriesByName('agrun:boot');
    return performance.getEntriesByType('resource')
        .filter((e) => e.name.endsWith('.js') && e.startTime < boot.startTime)
        .map((e) => [new URL(e.name).pathname.slice(1), e.startTime, e.responseEnd]);
}"""


def imported_files(entry: str) -> set[str]:
    """The dist/ files a built entry imports, as paths in dist/."""
    module = DIST / entry
    found = set()
    for spec in _IMPORT.findall(module.read_text(encoding="utf-8")):
        found.add((module.parent / spec).resolve().relative_to(DIST.resolve()).as_posix())
    return found


def test_the_built_entries_import_only_the_shared_modules() -> None:
    assert imported_files("agrun.js") == SHARED
    assert imported_files("engine/worker.js") == SHARED - {"engine/heartbeat.js"}
    for path in SHARED:
        assert (DIST / path).is_file(), path


def test_a_first_visit_asks_for_its_scripts_in_two_rounds_before_the_boot(page: Page) -> None:
    boot_runtime(page, "{ provider: agrun.testModel() }")
    asked: list[list[Any]] = page.evaluate(SCRIPTS_BEFORE_BOOT)
    by_path = {path: (start, end) for path, start, end in asked}
    assert set(by_path) == {"agrun.js"} | SHARED, sorted(by_path)
    # The shared modules are named by the bundle itself, flat: each was asked for before any
    # of them arrived (a module found only inside another is asked for a round trip later).
    shared = [by_path[path] for path in SHARED]
    assert max(start for start, _ in shared) < min(end for _, end in shared), by_path
    assert page.evaluate("async () => (await rt.run('hello')).state.status") == "succeeded"


def test_the_bundle_and_the_modules_beside_it_are_one_copy_each(page: Page) -> None:
    boot_runtime(page, "{ provider: agrun.testModel() }")
    result = page.evaluate(
        """async () => {
            const errors = await import('/errors.js');
            const boot = await import('/boot/boot.js');
            // The runtime's interpreter has imported agrun's bridge; one booted afresh has not.
            const py = await boot.bootPyodide(boot.resolveIndexURL(), () => {});
            let refused = null;
            try { await agrun.createRuntime({ sessionId: '' }); } catch (e) { refused = e; }
            return {
                sameClass: errors.AgrunError === agrun.AgrunError,
                refusedIsShared: refused instanceof errors.AgrunConfigError,
                sameInterpreter: py.runPython(
                    "import sys\\n'agrun.adapters.pyodide.bridge' in sys.modules"),
                bootKind: boot.bootKind(py),
            };
        }"""
    )
    assert result == {
        "sameClass": True,
        "refusedIsShared": True,
        "sameInterpreter": True,
        "bootKind": "saved-snapshot",
    }


@pytest.fixture
def folder_page(browser: Browser, tmp_path: Path, problems: Any) -> Iterator[Page]:
    """A page of a site that serves dist/ under /app/, not at its root."""
    (tmp_path / "app").symlink_to(DIST.resolve(), target_is_directory=True)
    server, url = serve_in_background(tmp_path)
    context = browser.new_context(base_url=url)
    context.set_default_timeout(BOOT_TIMEOUT_MS)
    guard_context(context, url, problems)
    page = context.new_page()
    guard_page(page, problems)
    try:
        yield page
        assert problems.unexpected_errors() == [], "the page reported errors"
    finally:
        context.close()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_site_that_serves_agrun_in_a_folder_boots_it_from_there(
    folder_page: Page, worker: bool
) -> None:
    """A bundle's `import.meta.url` is the bundle's, not its modules': Pyodide's folder and the
    worker's script are found from boot.js, so they are the folder's too."""
    missing: list[str] = []
    folder_page.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    folder_page.goto("/app/blank.html")
    result = folder_page.evaluate(
        """async (worker) => {
            const agrun = await import('/app/agrun.js');
            const rt = await agrun.createRuntime({ worker, storage: 'memory', provider: agrun.testModel() });
            const turn = await rt.run('hello');
            const scripts = performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);
            return { status: turn.state.status, outside: scripts.filter((p) => !p.startsWith('/app/')) };
        }""",
        worker,
    )
    assert result == {"status": "succeeded", "outside": []}
    assert missing == []
