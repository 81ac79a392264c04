"""How near a first visit can come to bare Pyodide while it imports pydantic at all: the floor
under the cold-ready goal of issue 25.5 (1.6x bare) that trimming agrun's own import cannot
go below. Each round, three cold visits in fresh browser contexts (nothing cached), one
Chromium run, dist/pyodide without any snapshot:

    .venv/bin/python bench/pydantic_floor.py [--rounds 5]      (after ./build.sh)

- ``bare``: Pyodide's module imported and the interpreter started, nothing loaded;
- ``pydantic``: the same, agrun's wheels loaded (pydantic-core's extension among them), then
  ``import pydantic`` and one small frozen model made and used, as any pydantic code does;
- ``agrun``: the same wheels, then ``import agrun.adapters.pyodide.bridge`` (what a first
  visit imports before it is ready).

Prints each step's median in ms, and each visit's total over bare's.
"""

from __future__ import annotations

import argparse
import statistics

from _browser import chromium_and_site

PYDANTIC_ONLY = """
import pydantic
from pydantic import BaseModel, ConfigDict
class Point(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    x: int
    label: str = ""
Point(x=1)
"""

CODE = {"bare": None, "pydantic": PYDANTIC_ONLY, "agrun": "import agrun.adapters.pyodide.bridge"}

# Runs in a blank page of dist/; returns [interpreter, wheels, import] in ms.
VISIT = """async (code) => {
  const t0 = performance.now();
  const { loadPyodide } = await import('/pyodide/pyodide.mjs');
  const py = await loadPyodide({ indexURL: new URL('/pyodide/', location.href).href, stdout: () => {} });
  const t1 = performance.now();
  if (code === null) return [t1 - t0, 0, 0];
  await py.loadPackage(['agrun'], { messageCallback: () => {} });
  const t2 = performance.now();
  py.runPython(code);
  return [t1 - t0, t2 - t1, performance.now() - t2];
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    steps: dict[str, list[list[float]]] = {name: [] for name in CODE}
    with chromium_and_site() as (browser, url):
        for round_number in range(rounds):
            for name, code in CODE.items():
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"{url}/blank.html")
                steps[name].append(page.evaluate(VISIT, code))
                context.close()
            print(f"round {round_number + 1}/{rounds} done", flush=True)
    bare = statistics.median(sum(row) for row in steps["bare"])
    print(f"\ncold visits, medians of {rounds} rounds (ms)")
    print(f"{'':12}{'interpreter':>12}{'wheels':>8}{'import':>8}{'total':>8}{'/bare':>7}")
    for name, rows in steps.items():
        interpreter, wheels, imported = (
            statistics.median(row[i] for row in rows) for i in range(3)
        )
        total = statistics.median(sum(row) for row in rows)
        print(
            f"{name:12}{interpreter:12.0f}{wheels:8.0f}{imported:8.0f}{total:8.0f}{total / bare:7.2f}"
        )


if __name__ == "__main__":
    main()
