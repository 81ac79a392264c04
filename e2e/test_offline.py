"""Offline-first through agrun's service worker (web/sw.js, web/offline.js, precache.json).

Each test serves its own copy of the build (the files precache.json lists, the manifest and
the worker) from a server of its own on 127.0.0.1, a secure context, so it can take the
site offline, stop the server, or deploy a changed build under the same origin.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Worker, expect

from conftest import (
    BOOT_TIMEOUT_MS,
    DIST,
    TINY_MODEL_ENGINE_ERRORS,
    PageProblems,
    guard_context,
    guard_page,
)
from make_precache import MANIFEST, NOT_PRECACHED, TEST_ONLY, WORKER, excluded, write_precache
from serve import serve_in_background
from widget_fixtures import chat

PREFIX = "agrun-precache-"

# Runs in a page of the site: register, and wait for the worker to be active.
REGISTER = """async () => {
    const { registerOffline } = await import('/offline.js');
    const registration = await registerOffline();
    if (registration === null) return null;
    const { active } = await navigator.serviceWorker.ready;
    // ready settles once a worker is active, which may still be activating.
    while (active.state !== 'activated') {
        await new Promise((resolve) => active.addEventListener('statechange', resolve, { once: true }));
    }
    return { scope: registration.scope, state: active.state,
             controlled: navigator.serviceWorker.controller !== null,
             caches: await caches.keys() };
}"""

# Runs in a page of the site: every entry of agrun's caches, with its body's sha256.
CACHED = """async () => {
    const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
    const out = {};
    for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        out[name] = {};
        for (const request of await cache.keys()) {
            const body = await (await cache.match(request)).arrayBuffer();
            out[name][new URL(request.url).pathname.slice(1)] = hex(await crypto.subtle.digest('SHA-256', body));
        }
    }
    return out;
}"""

# Runs in a page of the site: every entry of agrun's caches, with the sha256 the worker marked
# it with when it checked it (null: not marked).
MARKS = """async () => {
    const out = {};
    for (const name of await caches.keys()) {
        const cache = await caches.open(name);
        out[name] = {};
        for (const request of await cache.keys()) {
            const response = await cache.match(request);
            out[name][new URL(request.url).pathname.slice(1)] = response.headers.get('X-Agrun-Checked');
        }
    }
    return out;
}"""

# Runs in a page of the site: boot agrun and run one turn.
# Bounded: a page's evaluate has no timeout, so a boot or a turn that never settled would
# hang the suite (once, in a fresh CI run, after the damaged-cache test's reload); it fails
# in two minutes instead, naming the step it was at.
TURN = """async (text) => {
    let step = 'importing agrun.js';
    const work = (async () => {
        const { createRuntime } = await import('/agrun.js');
        step = 'createRuntime';
        const rt = await createRuntime({ storage: 'memory' });
        step = 'the turn';
        const result = await rt.run(text);
        rt.close();
        return { output: result.output, status: result.state.status };
    })();
    const bound = new Promise((_, reject) => setTimeout(
        () => reject(new Error(`no answer in 120 s, at ${step}`)), 120000));
    return await Promise.race([work, bound]);
}"""


@dataclass
class Site:
    """A copy of the build served on its own port; `stop` takes it off the network."""

    root: Path
    url: str
    server: http.server.ThreadingHTTPServer

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def manifest_of(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / MANIFEST).read_text())
    return data


def copy_build(target: Path) -> Path:
    """The files dist/precache.json lists, the manifest and the worker, copied to `target`."""
    for name in (MANIFEST, WORKER):
        if not (DIST / name).is_file():
            pytest.fail(f"dist/{name} is missing: run ./build.sh (it runs tools/make_precache.py)")
    for entry in manifest_of(DIST)["files"]:
        destination = target / entry["path"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DIST / entry["path"], destination)
    for name in (MANIFEST, WORKER):
        shutil.copyfile(DIST / name, target / name)
    return target


@pytest.fixture(scope="module")
def build_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_build(tmp_path_factory.mktemp("offline-build"))


@pytest.fixture
def serve() -> Iterator[Callable[[Path], Site]]:
    sites: list[Site] = []

    def serve_(root: Path, types: dict[str, str] | None = None) -> Site:
        server, url = serve_in_background(root, types)
        site = Site(root, url, server)
        sites.append(site)
        return site

    yield serve_
    for site in sites:
        site.stop()  # again for a site a test stopped: harmless


@pytest.fixture
def open_context(
    browser: Browser, problems: PageProblems
) -> Iterator[Callable[..., BrowserContext]]:
    contexts: list[BrowserContext] = []

    def open_(site: Site, **options: Any) -> BrowserContext:
        context = browser.new_context(base_url=site.url, **options)
        context.set_default_timeout(BOOT_TIMEOUT_MS)
        guard_context(context, site.url, problems)
        contexts.append(context)
        return context

    yield open_
    for context in contexts:
        context.close()
    assert problems.foreign_requests == [], "a page asked a host other than its own"
    assert problems.unexpected_errors() == [], "a page reported errors"


def new_page(context: BrowserContext, problems: PageProblems) -> Page:
    page = context.new_page()
    guard_page(page, problems)
    return page


def install(context: BrowserContext, problems: PageProblems) -> dict[str, Any]:
    """First visit: register the worker and wait until it is active; the page is closed."""
    page = new_page(context, problems)
    page.goto("/blank.html")
    registered: dict[str, Any] = page.evaluate(REGISTER)
    page.close()
    return registered


def visit_offline(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> Page:
    """A second visit with the network gone: the first one installs the worker, then the
    browser goes offline and the server stops (off the network twice over)."""
    site = serve(build_copy)
    context = open_context(site)
    install(context, problems)
    site.stop()
    context.set_offline(True)
    page = new_page(context, problems)
    page.goto("/blank.html")
    return page


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_precache_json_lists_every_file_of_the_build_with_its_hash() -> None:
    if not (DIST / MANIFEST).is_file():
        pytest.fail("dist/precache.json is missing: run ./build.sh")
    manifest = manifest_of(DIST)
    on_disk = {path.relative_to(DIST).as_posix() for path in DIST.rglob("*") if path.is_file()}
    expected = {
        path
        for path in on_disk
        if path not in (MANIFEST, WORKER) and not excluded(path, (*TEST_ONLY, *NOT_PRECACHED))
    }
    listed = {entry["path"]: entry for entry in manifest["files"]}
    assert set(listed) == expected, "precache.json is stale: tools/make_precache.py must run last"
    for path, entry in listed.items():
        assert entry["size"] == (DIST / path).stat().st_size, path
        assert entry["sha256"] == sha256(DIST / path), path
    assert {"agrun.js", "offline.js", "pyodide/pyodide.asm.wasm", "index.html"} <= set(listed)
    assert f"const BUILD = '{manifest['version']}';" in (DIST / WORKER).read_text()


def test_a_first_visit_registers_and_caches_the_whole_build(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    site = serve(build_copy)
    context = open_context(site)
    registered = install(context, problems)
    manifest = manifest_of(build_copy)
    assert registered["state"] == "activated"
    assert registered["scope"] == f"{site.url}/"
    # The page that registered was loaded from the network and stays so: never claimed
    # halfway through, so it cannot mix what it loaded with what the cache holds.
    assert registered["controlled"] is False
    assert registered["caches"] == [PREFIX + manifest["version"]]
    page = new_page(context, problems)
    page.goto("/blank.html")
    assert page.evaluate("navigator.serviceWorker.controller !== null") is True
    cached = page.evaluate(CACHED)[PREFIX + manifest["version"]]
    assert cached == {
        MANIFEST: hashlib.sha256(
            json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest(),
        **{entry["path"]: entry["sha256"] for entry in manifest["files"]},
    }
    # Each file was checked as it went in, and carries the worker's mark saying so: the
    # worker serves those without hashing them again.
    marks = page.evaluate(MARKS)[PREFIX + manifest["version"]]
    assert marks == {
        MANIFEST: None,
        **{entry["path"]: entry["sha256"] for entry in manifest["files"]},
    }


def test_a_second_visit_offline_boots_agrun_and_answers(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    page = visit_offline(build_copy, serve, open_context, problems)
    assert page.evaluate(TURN, "hello while offline") == {
        "output": "echo: hello while offline",
        "status": "succeeded",
    }
    # The site's folder is its index.html, from the cache too.
    assert (
        page.evaluate("async () => (await fetch('/')).text()")
        == (build_copy / "index.html").read_text()
    )


# Runs in a page the old worker controls: look for a new build, and wait until it is
# installed (it then waits for the old version's pages to close).
UPDATE = """async () => {
    const registration = await navigator.serviceWorker.getRegistration();
    await registration.update();
    const worker = registration.installing ?? registration.waiting;
    if (!worker) return null;
    while (worker.state === 'installing') {
        await new Promise((resolve) => worker.addEventListener('statechange', resolve, { once: true }));
    }
    return { state: worker.state, waiting: registration.waiting === worker,
             caches: (await caches.keys()).sort() };
}"""

# Runs in a page of the site: what the page is served, as its own fetches see it.
SERVED = """async (paths) => {
    const text = async (path) => (await fetch(path)).text();
    const texts = {};
    for (const path of paths) texts[path] = await text(path);
    return { texts, version: JSON.parse(await text('/precache.json')).version,
             controlled: navigator.serviceWorker.controller !== null };
}"""


def deploy_changed_build(root: Path) -> dict[str, Any]:
    """A rebuild: one module changed, a file added and one removed; precache.json and
    sw.js written again by the build's own tool."""
    with (root / "errors.js").open("a") as file:
        file.write("// the second build\n")
    (root / "added-in-v2.txt").write_text("new in the second build\n")
    (root / "storage.d.ts").unlink()
    return write_precache(root)


def wait_until_active(context: BrowserContext, version: str) -> None:
    """Wait, from inside the new worker, until it is the active one: with no page open, so
    no page can keep the old version in use meanwhile."""
    deadline = time.monotonic() + BOOT_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        for worker in context.service_workers:
            if worker_state(worker) == (version, "activated"):
                return
        time.sleep(0.1)
    pytest.fail(f"the worker of version {version} never became active")


def worker_state(worker: Worker) -> tuple[str, str] | None:
    try:
        state = worker.evaluate(
            "() => [BUILD, self.registration.active?.scriptURL === self.location.href"
            " && self.registration.waiting === null ? self.registration.active.state : null]"
        )
    except Exception:  # a worker that was stopped or made redundant meanwhile
        return None
    return (state[0], state[1])


def test_a_new_build_replaces_the_cache_whole_and_no_page_mixes_two(
    build_copy: Path,
    tmp_path: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    root = shutil.copytree(build_copy, tmp_path / "site")
    old = manifest_of(root)
    old_errors = (root / "errors.js").read_text()
    site = serve(root)
    context = open_context(site)
    install(context, problems)
    page = new_page(context, problems)
    page.goto("/blank.html")
    assert page.evaluate(SERVED, [])["controlled"] is True

    new = deploy_changed_build(root)
    assert new["version"] != old["version"]
    update = page.evaluate(UPDATE)
    assert update == {
        "state": "installed",
        "waiting": True,
        "caches": sorted([PREFIX + old["version"], PREFIX + new["version"]]),
    }
    # The open page stays on the build it started with, files the new build removed included.
    assert page.evaluate(SERVED, ["/errors.js", "/storage.d.ts"]) == {
        "texts": {
            "/errors.js": old_errors,
            "/storage.d.ts": (build_copy / "storage.d.ts").read_text(),
        },
        "version": old["version"],
        "controlled": True,
    }

    page.close()  # the old version's last page: the new worker takes over
    wait_until_active(context, new["version"])
    page = new_page(context, problems)
    page.goto("/blank.html")
    assert page.evaluate(SERVED, ["/errors.js", "/added-in-v2.txt"]) == {
        "texts": {
            "/errors.js": old_errors + "// the second build\n",
            "/added-in-v2.txt": "new in the second build\n",
        },
        "version": new["version"],
        "controlled": True,
    }
    cached = page.evaluate(CACHED)
    assert list(cached) == [PREFIX + new["version"]], "the old version's cache is still there"
    files = {entry["path"]: entry["sha256"] for entry in new["files"]}
    assert {k: v for k, v in cached[PREFIX + new["version"]].items() if k != MANIFEST} == files
    assert "storage.d.ts" not in files and "added-in-v2.txt" in files
    assert files["errors.js"] == sha256(root / "errors.js")


def test_an_install_served_a_file_the_manifest_does_not_list_keeps_nothing(
    build_copy: Path,
    tmp_path: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    root = shutil.copytree(build_copy, tmp_path / "site")
    # A deploy caught halfway: one file is already the next build's, the manifest is not.
    with (root / "errors.js").open("a") as file:
        file.write("// the next build\n")
    site = serve(root)
    context = open_context(site)
    page = new_page(context, problems)
    page.goto("/blank.html")
    outcome = page.evaluate(
        """async () => {
            const { registerOffline } = await import('/offline.js');
            const registration = await registerOffline();
            // null: the install already ended (and a worker that won would be `active`).
            const worker = registration.installing;
            while (worker && worker.state === 'installing') {
                await new Promise((resolve) => worker.addEventListener('statechange', resolve, { once: true }));
            }
            return { state: worker?.state ?? 'redundant', active: registration.active, caches: await caches.keys() };
        }"""
    )
    assert outcome == {"state": "redundant", "active": None, "caches": []}
    # Nothing was installed, and the page goes on online.
    assert page.evaluate(TURN, "still online") == {
        "output": "echo: still online",
        "status": "succeeded",
    }


NO_WORKERS = "delete Navigator.prototype.serviceWorker;"


@pytest.mark.parametrize("how", ["blocked", "absent"])
def test_a_page_without_service_workers_still_works_online(
    how: str,
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    site = serve(build_copy)
    if how == "blocked":
        context = open_context(site, service_workers="block")
    else:
        context = open_context(site)
        context.add_init_script(NO_WORKERS)
    page = new_page(context, problems)
    page.goto("/blank.html")
    registered = page.evaluate(
        """async () => {
            const { registerOffline } = await import('/offline.js');
            const registration = await registerOffline();
            return { isNull: registration === null, caches: await caches.keys() };
        }"""
    )
    assert registered == {"isNull": True, "caches": []}
    assert page.evaluate(TURN, "online only") == {
        "output": "echo: online only",
        "status": "succeeded",
    }


def test_register_offline_takes_a_scope_and_refuses_unknown_options(page: Page) -> None:
    page.goto("/blank.html")
    out = page.evaluate(
        """async () => {
            const { registerOffline } = await import('/offline.js');
            const errors = [];
            for (const bad of [{ scop: '/' }, { scope: 42 }, { scope: ' ' }]) {
                try { await registerOffline(bad); errors.push('no error'); }
                catch (e) { errors.push(e.name + ': ' + e.message); }
            }
            const registration = await registerOffline({ scope: '/pyodide/' });
            return { errors, scope: registration.scope };
        }"""
    )
    assert out["errors"][0].startswith(
        "AgrunConfigError: registerOffline: unknown option 'scop'. Accepted options: scope"
    )
    assert out["errors"][1] == (
        "AgrunConfigError: registerOffline: option 'scope' must be a string, got number 42"
    )
    assert out["errors"][2].startswith("AgrunConfigError: registerOffline: option 'scope'")
    assert out["scope"].endswith("/pyodide/")


# Runs in a page of the site: damage one entry of the active cache, as a crash or a page's
# own code could. 'garbage' puts text in its place, 'truncated' its first half; 'rewritten'
# its first half under the entry's own status and headers (all but the worker's mark, which
# only the worker writes, for bytes it checked).
TAMPER = """async ([path, how]) => {
    const name = (await caches.keys()).find((n) => n.startsWith('agrun-precache-'));
    const cache = await caches.open(name);
    const url = new URL(path, location.href).href;
    const hit = await cache.match(url);
    const bytes = await hit.arrayBuffer();
    if (how === 'rewritten') {
        const headers = new Headers(hit.headers);
        headers.delete('X-Agrun-Checked');
        const init = { status: hit.status, statusText: hit.statusText, headers };
        await cache.put(url, new Response(bytes.slice(0, bytes.byteLength >> 1), init));
        return;
    }
    await cache.put(url, new Response(how === 'garbage' ? 'garbage ((' : bytes.slice(0, bytes.byteLength >> 1)));
}"""

# Runs in a page of the site: boot agrun, timing how long createRuntime takes to settle
# (a boot that has not settled in 60 s is reported as hung, rather than waited for forever).
TIMED_BOOT = """async (worker) => {
    const started = performance.now();
    try {
        const { createRuntime } = await import('/agrun.js');
        const hung = new Promise((_, reject) => setTimeout(() => reject(new Error('hung')), 60000));
        const rt = await Promise.race([createRuntime({ storage: 'memory', worker }), hung]);
        const output = (await rt.run('hi')).output;
        rt.close();
        return { output };
    } catch (e) {
        const { AgrunBootError } = await import('/errors.js');
        return { error: [e.name, e.code, e instanceof AgrunBootError], message: e.message,
                 ms: Math.round(performance.now() - started) };
    }
}"""


def test_a_damaged_cache_entry_is_fetched_again_when_online(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    """Issue 20.7: agrun.js replaced by text that is no JavaScript, half of
    pyodide.asm.wasm, and half of python_stdlib.zip under its entry's own headers, in the
    active cache (after the worker served them once, so while it runs): the next load of the
    page is served the build's own files again, and the cache holds them again."""
    site = serve(build_copy)
    context = open_context(site)
    install(context, problems)
    page = new_page(context, problems)
    page.goto("/blank.html")
    assert page.evaluate(TURN, "before")["output"] == "echo: before"
    damaged = {
        "agrun.js": "garbage",
        "pyodide/pyodide.asm.wasm": "truncated",
        "pyodide/python_stdlib.zip": "rewritten",
    }
    for path, how in damaged.items():
        page.evaluate(TAMPER, [path, how])
    page.reload()
    assert page.evaluate(TURN, "after")["output"] == "echo: after"
    manifest = manifest_of(build_copy)
    cached = page.evaluate(CACHED)[PREFIX + manifest["version"]]
    marks = page.evaluate(MARKS)[PREFIX + manifest["version"]]
    files = {entry["path"]: entry["sha256"] for entry in manifest["files"]}
    for path in damaged:
        assert cached[path] == files[path], f"{path} was not put back"
        assert marks[path] == files[path], f"{path} was put back without the worker's mark"


def test_offline_a_damaged_cache_entry_fails_with_a_typed_error_not_a_hang(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    """Issue 20.7, offline: a damaged pyodide.asm.wasm makes createRuntime reject with
    AgrunBootError naming it, in seconds; a damaged worker.js makes a worker-mode
    createRuntime reject with AgrunBootError; a damaged agrun.js makes its import reject with
    AgrunBootError (a module the service worker serves in its place) instead of a SyntaxError."""
    # The browser logs the 503 the worker answers for the damaged wasm.
    problems.expected_console_errors = ["503"]
    page = visit_offline(build_copy, serve, open_context, problems)
    page.evaluate(TAMPER, ["pyodide/pyodide.asm.wasm", "truncated"])
    booted = page.evaluate(TIMED_BOOT, False)
    assert booted["error"] == ["AgrunBootError", "boot_failed", True], booted
    assert "pyodide.asm.wasm" in booted["message"] and "damaged" in booted["message"], booted
    assert booted["ms"] < 15_000, booted

    page.evaluate(TAMPER, ["engine/worker.js", "garbage"])
    page.reload()
    in_worker = page.evaluate(TIMED_BOOT, True)
    assert in_worker["error"] == ["AgrunBootError", "boot_failed", True], in_worker
    assert "worker could not start" in in_worker["message"], in_worker
    assert "worker.js" in in_worker["message"] and "damaged" in in_worker["message"], in_worker

    page.evaluate(TAMPER, ["agrun.js", "garbage"])
    page.reload()
    imported = page.evaluate(
        """async () => {
            try { await import('/agrun.js'); return 'imported'; }
            catch (e) { const { AgrunBootError } = await import('/errors.js');
                        return [e.name, e.code, e instanceof AgrunBootError, e.message]; }
        }"""
    )
    assert imported[:3] == ["AgrunBootError", "boot_failed", True], imported
    assert "agrun.js" in imported[3] and "offline cache is damaged" in imported[3], imported


@dataclass
class HostBoot:
    """A boot against a host of a test's making: what createRuntime gave, the page's console
    warnings and every request for the interpreter's wasm (the page's and its worker's)."""

    booted: dict[str, Any]
    warnings: list[str]
    wasm_requests: list[str]


@pytest.fixture
def boot_on_host(
    build_copy: Path,
    serve: Callable[..., Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> Callable[..., HostBoot]:
    def boot_(worker: bool, types: dict[str, str], root: Path = build_copy) -> HostBoot:
        context = open_context(serve(root, types))
        seen = HostBoot({}, [], [])
        context.on(
            "request",
            lambda r: seen.wasm_requests.append(r.url) if r.url.endswith(".asm.wasm") else None,
        )
        page = new_page(context, problems)
        page.on("console", lambda m: seen.warnings.append(m.text) if m.type == "warning" else None)
        page.goto("/blank.html")
        seen.booted = page.evaluate(TIMED_BOOT, worker)
        return seen

    return boot_


@pytest.mark.parametrize("served_as", ["application/wasm", "application/octet-stream"])
@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_truncated_wasm_rejects_the_boot_in_seconds(
    worker: bool, served_as: str, build_copy: Path, tmp_path: Path, boot_on_host: Any
) -> None:
    """Issue 20.7: a server (no service worker) that serves half of pyodide.asm.wasm.
    Pyodide only logs the compile error and never calls back; agrun's boot rejects."""
    root = shutil.copytree(build_copy, tmp_path / "site")
    wasm = root / "pyodide" / "pyodide.asm.wasm"
    wasm.write_bytes(wasm.read_bytes()[: wasm.stat().st_size // 2])
    booted = boot_on_host(worker, {".wasm": served_as}, root).booted
    assert booted["error"] == ["AgrunBootError", "boot_failed", True], booted
    assert "could not compile" in booted["message"] and "pyodide.asm.wasm" in booted["message"]
    assert "MIME" not in booted["message"], booted  # why it did not compile, whatever its type
    assert booted["ms"] < 15_000, booted


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_a_wasm_not_served_as_application_wasm_still_boots_and_says_so(
    worker: bool, boot_on_host: Any
) -> None:
    """A host that serves .wasm as application/octet-stream (an older server, an object store
    without the type set): browsers refuse to compile such a response as it streams, and
    Pyodide's boot fails. agrun's compiles it once downloaded, downloads it once, and warns
    with the fix."""
    seen = boot_on_host(worker, {".wasm": "application/octet-stream"})
    assert seen.booted == {"output": "echo: hi"}, seen.booted
    assert len(seen.wasm_requests) == 1, seen.wasm_requests
    if not worker:  # a worker's console is its own
        assert any("application/wasm" in w and "pyodide.asm.wasm" in w for w in seen.warnings)


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_pyodides_modules_served_as_not_javascript_reject_the_boot_saying_so(
    worker: bool, boot_on_host: Any, problems: PageProblems
) -> None:
    """A server without a type for .mjs sends Pyodide's two modules as
    application/octet-stream; a browser refuses to run them, with a message that says neither
    which file nor why ("Failed to fetch dynamically imported module")."""
    problems.console_errors_expected = True  # Chromium logs the refused module itself
    booted = boot_on_host(worker, {".mjs": "application/octet-stream"}).booted
    assert booted["error"] == ["AgrunBootError", "boot_failed", True], booted
    message = booted["message"]
    assert "pyodide.mjs" in message and "'application/octet-stream'" in message, message
    assert "serve .mjs files as text/javascript" in message, message


CSP_PAGE = "<!doctype html><title>a page with a Content Security Policy</title>"


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
@pytest.mark.parametrize(
    "policy",
    [
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'",
        "default-src 'self'; script-src 'self'",
    ],
    ids=["wasm-allowed", "wasm-refused"],
)
def test_a_pages_content_security_policy(
    worker: bool, policy: str, page: Page, problems: PageProblems
) -> None:
    """agrun needs no 'unsafe-eval' and no host but the page's own: 'self' and
    'wasm-unsafe-eval' are enough. A policy without the latter refuses WebAssembly in the page,
    and the boot says what to add; a worker's script answers to its own policy (here none)."""
    refused = "wasm-unsafe-eval" not in policy and not worker
    problems.console_errors_expected = refused  # Chromium logs the refusal itself
    page.route(
        "**/csp.html",
        lambda route: route.fulfill(
            body=CSP_PAGE,
            headers={"Content-Type": "text/html", "Content-Security-Policy": policy},
        ),
    )
    page.goto("/csp.html")
    booted = page.evaluate(TIMED_BOOT, worker)
    if not refused:
        assert booted == {"output": "echo: hi"}, booted
    else:
        assert booted["error"] == ["AgrunBootError", "boot_failed", True], booted
        assert "Content Security Policy" in booted["message"], booted
        assert "allow WebAssembly with 'wasm-unsafe-eval'" in booted["message"], booted


# -- <agrun-chat> is offline-first by default (issue 23.7) ----------------------------------

# Runs in a page with <agrun-chat>: wait for the worker the widget registered by itself (the
# page registers nothing), until it is active.
WIDGET_REGISTERED = """async () => {
    const { active, scope } = await navigator.serviceWorker.ready;
    while (active.state !== 'activated') {
        await new Promise((resolve) => active.addEventListener('statechange', resolve, { once: true }));
    }
    return { scope, state: active.state };
}"""

# Runs in a page with <agrun-chat offline="off">, once it is ready: what its registration
# came to, and what the page has.
OPTED_OUT = """async () => {
    const { offerOffline } = await import('/widget/offline-default.js');
    return { offered: await offerOffline(document.querySelector('agrun-chat')),
             registrations: (await navigator.serviceWorker.getRegistrations()).length,
             caches: (await caches.keys()).filter((n) => n.startsWith('agrun-precache-')) };
}"""


LAST_RUN = "() => document.querySelector('agrun-chat').runtime.state().lastRun"


def said_until_answered(page: Page, text: str) -> int:
    """Say `text` until a turn answers it, at most three times; how many times it was said.
    The bundled model samples, and now and then writes a tool call whose JSON does not parse:
    that turn fails typed (`provider_error`, the person's words kept and marked failed,
    e2e/conftest.py), as a fresh CI run saw once. Any other failure fails the test."""
    widget = chat(page)
    for times in range(1, 4):
        before = page.evaluate(f"() => ({LAST_RUN})()?.runId ?? null")
        widget.get_by_label("Message").fill(text)
        widget.get_by_label("Message").press("Enter")
        page.wait_for_function(
            f"(before) => {{ const run = ({LAST_RUN})(); return run && run.runId !== before; }}",
            arg=before,
        )
        expect(widget.locator("#status")).to_have_text("Ready")
        error = page.evaluate(f"() => ({LAST_RUN})().error?.code ?? null")
        if error is None:
            return times
        assert error == "provider_error", error
    raise AssertionError(f"the model broke every turn that asked {text!r}")


def test_the_demo_page_registers_itself_and_its_second_visit_offline_answers_with_the_in_page_model(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    """dist/index.html, as a person uses it: the first visit chooses the bundled model and
    asks; with the network gone, the second visit boots, shows that conversation, and the
    in-page model answers again (its file from Cache Storage, wllama from the precache)."""
    # The bundled model samples; a tool call of its that does not parse is logged by wllama
    # (e2e/conftest.py): the engine's log, not the page's. The turns are asked for below.
    problems.expected_console_errors += TINY_MODEL_ENGINE_ERRORS
    site = serve(build_copy)
    context = open_context(site)
    page = new_page(context, problems)
    page.goto("/index.html")
    widget = chat(page)
    expect(widget.locator("#status")).to_have_text("Ready")
    registered = page.evaluate(WIDGET_REGISTERED)
    assert registered == {"scope": f"{site.url}/", "state": "activated"}
    widget.locator("#empty").get_by_role(
        "button", name="Use the model that comes with this page"
    ).click()
    expect(widget.locator("#announce")).to_have_text("Answers now come from the in-page model.")
    asked_first = said_until_answered(page, "hello")
    first = widget.locator("#transcript li.agent .parts").last.text_content() or ""
    assert first.strip(), "the tiny model answered"
    page.close()

    site.stop()
    context.set_offline(True)
    page = new_page(context, problems)
    page.goto("/index.html")
    widget = chat(page)
    expect(widget.locator("#status")).to_have_text("Ready")
    assert page.evaluate("navigator.serviceWorker.controller !== null") is True
    # The conversation of the first visit, and the model it chose.
    expect(widget.locator("#transcript li.user .said")).to_have_text(["hello"] * asked_first)
    expect(widget.locator("#transcript li.agent .parts").last).to_have_text(first)
    asked_second = said_until_answered(page, "hello again")
    second = widget.locator("#transcript li.agent .parts").last.text_content() or ""
    assert second.strip(), "the tiny model answered offline"
    history = page.evaluate(
        "() => document.querySelector('agrun-chat').runtime.history().map((m) =>"
        " [m.role, m.runStatus ?? null, (m.toolCalls ?? []).length, m.content.slice(0, 60)])"
    )
    # Each question ran to an answer in the end; a turn the model broke kept only the person's
    # words, marked failed. The tiny model may call a skill on the way (it samples at
    # llama.cpp's default temperature, so what it does varies by run): each person's message
    # that was answered is followed by the model's messages, the last one an answer in words.
    asked = [(said, status) for role, status, _, said in history if role == "user"]
    assert [said for said, _ in asked] == ["hello"] * asked_first + ["hello again"] * asked_second
    assert [said for said, status in asked if status is None] == ["hello", "hello again"], history
    assert all(status in (None, "failed") for _, status, _, _ in history), history
    last_asked = len(history) - 1 - [role for role, *_ in history][::-1].index("user")
    second_turn = history[last_asked + 1 :]
    assert second_turn and {role for role, *_ in second_turn} <= {"assistant", "tool"}, history
    assert second_turn[-1][0] == "assistant" and second_turn[-1][2] == 0, history
    assert second_turn[-1][3].strip(), history


def test_a_widget_with_offline_off_registers_no_worker(
    build_copy: Path,
    serve: Callable[[Path], Site],
    open_context: Callable[..., BrowserContext],
    problems: PageProblems,
) -> None:
    site = serve(build_copy)
    page = new_page(open_context(site), problems)
    page.goto("/blank.html")
    page.evaluate(
        """async () => {
            document.body.innerHTML = '<agrun-chat offline="off" storage="memory"></agrun-chat>';
            await import('/widget/agrun-chat.js');
            await document.querySelector('agrun-chat').ready;
        }"""
    )
    assert page.evaluate(OPTED_OUT) == {"offered": None, "registrations": 0, "caches": []}
