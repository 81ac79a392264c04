"""A page's own Python in a real browser: wheels it serves from its own origin, installed with
micropip after their sha256 is checked, the Python skills they hold (run by name and as a
model's tool), pyodide-http for urllib, and a boot that loads neither micropip nor
pyodide-http until a runtime asks for them.

The wheels are built here, at test time, with ``pip wheel`` from a package written into a
temporary folder, and served from a folder of dist/ that exists only while this module runs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from conftest import DIST, PageProblems, boot_runtime

SKILLS_SOURCE = '''
"""Skills a page ships as a wheel of its own."""

import urllib.request


class Shout:
    name = "shout"
    description = "Upper-cases a text."
    parameters = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }

    def run(self, input, context, helpers):
        text = context.arguments["text"] if context.arguments else input
        return {"shouted": text.upper(), "by": __name__}


class ReadUrl:
    name = "read_url"
    description = "Reads a URL with urllib.request."

    def run(self, input, context, helpers):
        with urllib.request.urlopen(input) as response:
            return {"status": response.status, "text": response.read().decode()}


shout = Shout()
read_url = ReadUrl()
both = [shout, read_url]
not_a_skill = {"name": "nope"}
'''

TEXT_FILE = "greeting.txt"
TEXT = "hello from the page's own origin\n"


@dataclass(frozen=True)
class Wheel:
    path: Path  # where the page fetches it from, under dist/
    url: str  # the URL path the page uses
    sha256: str

    def option(self, sha256: str | None = None) -> str:
        """The wheel as a JS `packages` entry."""
        return json.dumps({"url": self.url, "sha256": sha256 or self.sha256})


def build_wheel(source_root: Path, out: Path, name: str, version: str, module: str) -> Path:
    """A pure wheel of one module, built with pip as a page's author would build it."""
    project = source_root / f"{name}-{version}"
    (project / name).mkdir(parents=True)
    (project / name / "__init__.py").write_text(module)
    (project / "pyproject.toml").write_text(
        textwrap.dedent(f"""
            [build-system]
            requires = ["setuptools"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{name}"
            version = "{version}"
        """)
    )
    pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip, "-w", str(out), str(project)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob(f"{name}-{version}-py3-none-any.whl")
    return wheel


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Wheels and a text file in a folder of dist/ of their own, removed afterwards."""
    folder = f"e2e-packages-{uuid.uuid4().hex[:8]}"
    target = DIST / folder
    target.mkdir()
    try:
        source = tmp_path_factory.mktemp("wheels")
        built = {
            "skills": build_wheel(source, target, "agrun_e2e_skills", "0.1.0", SKILLS_SOURCE),
            # Another wheel of the same distribution: an interpreter holds one of them.
            "skills_other": build_wheel(
                source / "other", target / "other", "agrun_e2e_skills", "0.2.0", SKILLS_SOURCE
            ),
            # A wheel of a distribution agrun's own runtime already has.
            "shadow": build_wheel(source, target, "annotated_types", "9.9.9", "SHADOW = True\n"),
            # A wheel offered only beside a broken one, then alone.
            "partner": build_wheel(source, target, "agrun_e2e_partner", "1.0.0", "PARTNER = 1\n"),
            # A wheel first offered with a wrong hash, then with the right one.
            "late": build_wheel(
                source, target, "agrun_e2e_late", "1.0.0", 'GREETING = "late but whole"\n'
            ),
        }
        (target / TEXT_FILE).write_text(TEXT)
        # Not a zip at all, under a wheel's name: its hash matches, micropip refuses it.
        built["broken"] = target / "agrun_e2e_broken-1.0-py3-none-any.whl"
        built["broken"].write_bytes(b"this is not a zip archive")
        wheels = {
            key: Wheel(
                path,
                f"/{path.relative_to(DIST).as_posix()}",
                hashlib.sha256(path.read_bytes()).hexdigest(),
            )
            for key, path in built.items()
        }
        yield {"folder": folder, **wheels}
    finally:
        shutil.rmtree(target)


def create(page: Page, options: str) -> str:
    """createRuntime(options) as `window.rt`; 'ok', or the error as 'Name code: message'."""
    if not page.url.endswith("/blank.html"):
        page.goto("/blank.html")
    return page.evaluate(
        f"""async () => {{
            const agrun = await import('/agrun.js');
            window.rt?.close();
            try {{
                window.rt = await agrun.createRuntime({{ storage: 'memory', ...{options} }});
                return 'ok';
            }} catch (e) {{ return `${{e.name}} ${{e.code}}: ${{e.message}}`; }}
        }}"""
    )


def run(page: Page, input: str, skill: str | None = None) -> Any:
    """`window.rt.run(input, { skill })`: its output, status and error."""
    return page.evaluate(
        "async ([input, options]) => { const r = await window.rt.run(input, options);"
        " return { output: r.output, status: r.state.status, error: r.error ?? null }; }",
        [input, {"skill": skill} if skill else {}],
    )


def loaded_packages(page: Page) -> list[str]:
    """What the page's interpreter has loaded, from Pyodide itself."""
    return page.evaluate(
        """async () => {
            const boot = await import('/boot/boot.js');
            const pyodide = await boot.bootPyodide(boot.resolveIndexURL(), () => {});
            return Object.keys(pyodide.loadedPackages).sort();
        }"""
    )


def python(page: Page, code: str) -> Any:
    """The value of the last expression of ``code``, run in the page's interpreter."""
    return page.evaluate(
        """async (code) => {
            const boot = await import('/boot/boot.js');
            const pyodide = await boot.bootPyodide(boot.resolveIndexURL(), () => {});
            return pyodide.runPython('import importlib.util\\n' + code);
        }""",
        code,
    )


def test_boot_loads_neither_until_a_runtime_asks(page: Page, served: dict[str, Any]) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    boot_runtime(page)
    booted = loaded_packages(page)
    assert {"agrun", "pydantic", "pydantic-core"} <= set(booted)
    assert "micropip" not in booted and "pyodide-http" not in booted
    assert not [url for url in requested if "micropip" in url or "pyodide_http" in url]

    wanted = f"packages: [{served['skills'].option()}], pythonSkills: ['agrun_e2e_skills:read_url']"
    assert create(page, f"{{ {wanted} }}") == "ok"
    assert "micropip" in loaded_packages(page)
    assert "pyodide-http" not in loaded_packages(page)
    # Without pyodide-http, urllib has no way out of the page: the skill's run fails.
    url = f"{page.evaluate('location.origin')}/{served['folder']}/{TEXT_FILE}"
    without = run(page, url, "read_url")
    assert without["status"] == "failed"
    assert without["error"]["code"] == "skill_error"
    assert "skill 'read_url' raised" in without["error"]["message"]

    assert create(page, f"{{ {wanted}, pyodideHttp: true }}") == "ok"
    assert "pyodide-http" in loaded_packages(page)
    assert run(page, url, "read_url")["output"] == {"status": 200, "text": TEXT}


def test_a_python_skill_from_the_pages_wheel_runs_by_name(
    warm_page: Page, served: dict[str, Any]
) -> None:
    skills = served["skills"]
    options = f"{{ packages: [{skills.option()}], pythonSkills: ['agrun_e2e_skills:shout'] }}"
    assert create(warm_page, options) == "ok"
    result = run(warm_page, "quiet words", "shout")
    assert result["status"] == "succeeded"
    assert result["output"] == {"shouted": "QUIET WORDS", "by": "agrun_e2e_skills"}
    # The same wheel again is already installed: the next runtime just uses it.
    assert create(warm_page, options) == "ok"
    assert run(warm_page, "again", "shout")["output"]["shouted"] == "AGAIN"


def test_python_skills_sit_beside_js_skills_and_serve_a_page_provider(
    warm_page: Page, served: dict[str, Any]
) -> None:
    # The page's model asks for the Python skill as a tool, then answers with what it returned
    # (a later call of the turn that offers no tools, such as a memory extraction, gets text).
    options = f"""{{
        packages: [{served["skills"].option()}],
        pythonSkills: ['agrun_e2e_skills:both'],
        skills: [{{ name: 'js_echo', description: 'JS', run: (input) => 'js:' + input }}],
        provider: async (request) => {{
            (window.offered ??= []).push(request.tools.map((t) => t.function.name));
            const last = request.messages.at(-1);
            if (last.role === 'tool' || !request.tools.length) {{
                return {{ text: 'the tool said ' + last.content }};
            }}
            return {{ toolCalls: [{{ id: 'c1', name: 'shout', arguments: {{ text: 'psst' }} }}] }};
        }},
    }}"""
    assert create(warm_page, options) == "ok"
    result = run(warm_page, "make it loud")
    assert result["status"] == "succeeded", result
    assert "PSST" in result["output"]
    # The first call offered the JS skill and both Python skills, in registration order.
    assert warm_page.evaluate("window.offered")[0] == ["js_echo", "shout", "read_url"]
    assert run(warm_page, "x", "js_echo")["output"] == "js:x"


def test_a_wrong_sha256_is_refused_and_nothing_is_installed(
    warm_page: Page, served: dict[str, Any]
) -> None:
    late = served["late"]
    wrong = hashlib.sha256(b"not the wheel").hexdigest()
    options = f"{{ packages: [{late.option(wrong)}] }}"
    message = create(warm_page, options)
    assert message.startswith("AgrunError package_hash_mismatch: ")
    assert late.url in message and late.sha256 in message and wrong in message
    assert python(warm_page, "importlib.util.find_spec('agrun_e2e_late') is None") is True
    # The refusal broke nothing: the right hash installs it in the same interpreter.
    assert create(warm_page, f"{{ packages: [{late.option()}] }}") == "ok"
    assert python(warm_page, "import agrun_e2e_late; agrun_e2e_late.GREETING") == "late but whole"


def test_a_wheel_micropip_cannot_install_is_a_typed_error(
    warm_page: Page, served: dict[str, Any]
) -> None:
    broken, partner = served["broken"], served["partner"]
    message = create(warm_page, f"{{ packages: [{partner.option()}, {broken.option()}] }}")
    assert message.startswith("AgrunError package_install_failed: micropip could not install ")
    assert broken.url in message and "BadZipFile" in message
    # Nothing of the failed call was installed, and the next runtime installs the good one.
    assert python(warm_page, "importlib.util.find_spec('agrun_e2e_partner') is None") is True
    assert create(warm_page, f"{{ packages: [{partner.option()}] }}") == "ok"
    assert python(warm_page, "import agrun_e2e_partner; agrun_e2e_partner.PARTNER") == 1


def test_another_wheel_of_an_installed_package_is_refused(
    warm_page: Page, served: dict[str, Any]
) -> None:
    assert create(warm_page, f"{{ packages: [{served['skills'].option()}] }}") == "ok"
    message = create(warm_page, f"{{ packages: [{served['skills_other'].option()}] }}")
    assert message.startswith("AgrunError package_conflict: ")
    assert "agrun-e2e-skills" in message


def test_a_wheel_of_agruns_own_dependencies_is_refused(
    warm_page: Page, served: dict[str, Any]
) -> None:
    message = create(warm_page, f"{{ packages: [{served['shadow'].option()}] }}")
    assert message.startswith("AgrunError package_conflict: ")
    assert "would replace 'annotated-types', which agrun's own runtime already has" in message
    # The interpreter still has the real one, and runtimes still work.
    assert python(warm_page, "import annotated_types; hasattr(annotated_types, 'SHADOW')") is False
    assert create(warm_page, "{}") == "ok"


def test_a_wheel_from_another_origin_is_refused_before_any_request(
    page: Page, problems: PageProblems
) -> None:
    page.goto("/blank.html")
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    foreign = "http://example.invalid/x-1.0-py3-none-any.whl"
    message = create(page, f"{{ packages: [{{ url: '{foreign}', sha256: '{'0' * 64}' }}] }}")
    assert message.startswith(
        "AgrunConfigError config_error: createRuntime: option 'packages[0].url'"
    )
    assert "not on the page's origin" in message
    assert problems.foreign_requests == []
    assert not [url for url in requested if url.endswith((".whl", ".wasm"))]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("{ packages: [{ url: '/a.whl' }] }", "option 'packages[0]' must be { url, sha256 }"),
        (
            "{ packages: [{ url: '/pkg-1.0-py3-none-any.whl', sha256: 'abc' }] }",
            "option 'packages[0].sha256' must be the wheel's sha256 as 64 hex digits",
        ),
        (
            f"{{ packages: [{{ url: '/notes.txt', sha256: '{'a' * 64}' }}] }}",
            "option 'packages[0].url' must name a wheel",
        ),
        ("{ pythonSkills: ['no_colon'] }", "option 'pythonSkills[0]' must be 'module:attribute'"),
        ("{ pyodideHttp: 'yes' }", "option 'pyodideHttp' must be a boolean"),
    ],
)
def test_bad_package_options_are_config_errors(page: Page, options: str, expected: str) -> None:
    page.goto("/blank.html")
    message = create(page, options)
    assert message.startswith("AgrunConfigError config_error: createRuntime: ")
    assert expected in message


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("agrun_e2e_absent:skill", "importing agrun_e2e_absent failed with ModuleNotFoundError"),
        ("agrun_e2e_skills:missing", "module agrun_e2e_skills has no attribute 'missing'"),
        ("agrun_e2e_skills:not_a_skill", ".name must be a non-empty string"),
    ],
)
def test_a_python_skill_that_is_not_there_is_a_config_error(
    warm_page: Page, served: dict[str, Any], path: str, expected: str
) -> None:
    options = f"{{ packages: [{served['skills'].option()}], pythonSkills: ['{path}'] }}"
    message = create(warm_page, options)
    assert message.startswith(f"AgrunConfigError config_error: pythonSkills[0] ('{path}')")
    assert expected in message


def test_a_missing_wheel_is_a_fetch_error(
    page: Page, problems: PageProblems, served: dict[str, Any]
) -> None:
    problems.console_errors_expected = True  # Chromium logs the 404 itself
    missing = f"/{served['folder']}/gone-1.0-py3-none-any.whl"
    message = create(page, f"{{ packages: [{{ url: '{missing}', sha256: '{'b' * 64}' }}] }}")
    assert message.startswith("AgrunError package_fetch_failed: ")
    assert missing in message and "HTTP 404" in message
