"""A page's own Python: its wheels, installed with micropip, and the skills they hold.

``createRuntime({ packages, pythonSkills, pyodideHttp })`` lands here (web/packages.js). The
JS side has already checked the options, fetched each wheel from the page's own origin and
written it into Pyodide's filesystem. This side checks every file's sha256 before micropip
sees any of them, installs them all in one micropip call that asks no index for anything
(``deps=False``: a wheel's dependencies must be listed too), and imports the skills the page
named. micropip and pyodide-http are wheels of agrun's lock that boot does not load; JS loads
them (``pyodide.loadPackage``) before calling `install_wheels` or `enable_http`.

One interpreter serves every runtime of a page, so what is installed stays installed: the
same wheel again is skipped, and a different wheel of an installed distribution is refused
rather than half-replacing modules that are already imported.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import re
import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..._base import AgrunError, ConfigError
from ...kernel._skills import check_skill
from ._wire import error_json, ok_json

__all__ = [
    "PackageConflictError",
    "PackageHashError",
    "PackageInstallError",
    "enable_http",
    "install_wheels",
    "python_skills",
]


class PackageHashError(AgrunError):
    """A fetched wheel's sha256 is not the one the page gave for it."""

    code = "package_hash_mismatch"


class PackageInstallError(AgrunError):
    """micropip could not install the page's wheels."""

    code = "package_install_failed"


class PackageConflictError(AgrunError):
    """A wheel would replace a distribution this interpreter already has."""

    code = "package_conflict"


@dataclass(frozen=True, slots=True)
class StagedWheel:
    """One of the page's wheels, written into Pyodide's filesystem by web/packages.js."""

    url: str
    sha256: str
    path: str
    where: str

    @property
    def distribution(self) -> str:
        """The distribution's canonical name, from the wheel's file name (PEP 491/503)."""
        return re.sub(r"[-_.]+", "-", Path(self.path).name.split("-", 1)[0]).lower()


# Distribution name -> sha256 of the wheel installed into this interpreter by a page.
_installed: dict[str, str] = {}
# Installs of concurrent createRuntime calls go one after the other.
_install_lock = asyncio.Lock()


async def install_wheels(staged_json: str, staging_dir: str) -> str:
    """Check and install the page's wheels; remove ``staging_dir`` however it ends.

    Args:
        staged_json: ``[{"url", "sha256", "path", "where"}]``: each wheel's URL, the sha256
            the page gave (lowercase hex), where it was written, and which option named it.
        staging_dir: the folder web/packages.js wrote them into.

    Returns:
        ``{"ok": true}`` as JSON; or the typed error (PackageHashError, PackageConflictError,
        PackageInstallError), in which case nothing of this call was installed.
    """
    try:
        wheels = [StagedWheel(**item) for item in json.loads(staged_json)]
        async with _install_lock:
            await _install(wheels)
    except Exception as error:
        return error_json(error)
    finally:
        shutil.rmtree(staging_dir, ignore_errors=True)
    return ok_json(None)


async def _install(wheels: list[StagedWheel]) -> None:
    for wheel in wheels:
        digest = hashlib.sha256(Path(wheel.path).read_bytes()).hexdigest()
        if digest != wheel.sha256:
            raise PackageHashError(
                f"the package {wheel.url} has sha256 {digest}, not the {wheel.sha256} that "
                f"{wheel.where}.sha256 names: nothing was installed"
            )
    fresh = [wheel for wheel in wheels if not _already_installed(wheel)]
    if not fresh:
        return
    micropip: Any = importlib.import_module("micropip")  # loaded by web/packages.js
    try:
        await micropip.install([f"emfs:{wheel.path}" for wheel in fresh], deps=False)
    except Exception as error:
        raise PackageInstallError(
            f"micropip could not install {', '.join(wheel.url for wheel in fresh)}: "
            f"{type(error).__name__}: {error}"
        ) from error
    importlib.invalidate_caches()
    for wheel in fresh:
        _installed[wheel.distribution] = wheel.sha256


def _already_installed(wheel: StagedWheel) -> bool:
    """True if this very wheel is installed; raises if another wheel of it is."""
    name = wheel.distribution
    if name in _installed:
        if _installed[name] == wheel.sha256:
            return not _missing(name)
        raise PackageConflictError(
            f"{wheel.where} ({wheel.url}) is another wheel of {name!r}, which this page's "
            f"interpreter already has from a wheel with sha256 {_installed[name]}: one "
            "interpreter holds one version of a package; reload the page to change it"
        )
    if not _missing(name):
        raise PackageConflictError(
            f"{wheel.where} ({wheel.url}) would replace {name!r}, which agrun's own runtime "
            "already has: leave it out of packages"
        )
    return False


def _missing(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return True
    return False


def python_skills(paths: list[str]) -> list[Any]:
    """The skills named by ``createRuntime({ pythonSkills: ['module:attribute', ...] })``.

    Each attribute is a skill object or a non-empty list (or tuple) of them, each checked
    like any skill.

    Raises:
        ConfigError: naming the entry, when its module cannot be imported, has no such
            attribute, or the attribute is not a skill (or a list of skills).
    """
    skills: list[Any] = []
    for index, path in enumerate(paths):
        where = f"pythonSkills[{index}] ({path!r})"
        module_name, _, attribute = path.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as error:
            raise ConfigError(
                f"{where}: importing {module_name} failed with {type(error).__name__}: "
                f"{error} (is its wheel listed in packages?)"
            ) from error
        if not hasattr(module, attribute):
            raise ConfigError(f"{where}: module {module_name} has no attribute {attribute!r}")
        found = getattr(module, attribute)
        if isinstance(found, (list, tuple)):
            if not found:
                raise ConfigError(f"{where} is an empty list: name a skill or a list of skills")
            skills.extend(check_skill(skill, f"{where}[{n}]") for n, skill in enumerate(found))
        else:
            skills.append(check_skill(found, where))
    return skills


def enable_http() -> str:
    """Make ``urllib.request`` (and ``requests``, if installed) work in the page, through the
    browser's synchronous XMLHttpRequest. pyodide-http guards each patch, so calling this
    again is harmless, and it patches ``requests`` once a later runtime has installed it."""
    try:
        pyodide_http: Any = importlib.import_module("pyodide_http")  # loaded by packages.js
        pyodide_http.patch_all()
    except Exception as error:
        return error_json(error)
    return ok_json(None)
