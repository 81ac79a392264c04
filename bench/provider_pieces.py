"""What each piece costs when a page's own provider function streams (`JsProvider`).

    .venv/bin/python bench/provider_pieces.py [--pieces 100] [--rounds 25] [--dist DIR]
    (after ./build.sh; Chromium is Debian's, driven by Playwright)

A page function (the way `@wllama/wllama` or the Prompt API plug in) streams ``--pieces``
words through ``onToken``, either a task apart (a MessageChannel message between pieces, as
a model's tokens come) or all in one go; no network, no model time. Each round times the
function called directly (its pieces gathered into a string) and an agrun turn in the page
on it (``createRuntime({ provider, storage: false })``, ``onToken`` given); the overhead per
piece is the difference of the medians over the rounds (the first 5 not kept), divided by
the pieces. ``--dist`` runs another build's dist/ (a worktree's) for a before/after.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from _browser import ROOT  # puts tools/ on the path
from chromium import launch
from model_overhead import bench_server

PROBE = """async ([pieces, rounds, apart]) => {
    const { createRuntime } = await import('/agrun.js');
    const channel = new MessageChannel();
    const waiting = [];
    channel.port1.onmessage = () => waiting.shift()();
    const nextTask = () => new Promise((resolve) => {
        waiting.push(resolve);
        channel.port2.postMessage(0);
    });
    const words = Array.from({ length: pieces }, (_, n) => 'w' + n + ' ');
    const provider = async (request, { onToken }) => {
        for (const word of words) {
            if (apart) await nextTask();
            onToken(word);
        }
        return { text: words.join(''), usage: { promptTokens: 1, completionTokens: pieces } };
    };
    const rt = await createRuntime({ provider, storage: false, memoryExtraction: 'off' });
    const direct = [], agrun = [];
    for (let round = 0; round < rounds; round++) {
        let start = performance.now();
        let text = '';
        await provider({}, { onToken: (piece) => { text += piece; } });
        direct.push(performance.now() - start);
        start = performance.now();
        const result = await rt.run('go ' + round, { onToken: () => {} });
        agrun.push(performance.now() - start);
        await rt.idle();
        if (result.output !== words.join('')) throw new Error('the turn answered ' + result.output);
    }
    rt.close();
    return { direct, agrun };
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pieces", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with bench_server(args.dist) as url, sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(f"{url}/blank.html")
            print(f"{args.dist}: {args.pieces} pieces, medians of {args.rounds - 5} rounds, ms")
            for apart in (True, False):
                timed = page.evaluate(PROBE, [args.pieces, args.rounds, apart])
                direct = statistics.median(timed["direct"][5:])
                agrun = statistics.median(timed["agrun"][5:])
                per_piece_us = (agrun - direct) / args.pieces * 1000
                how = "a task apart" if apart else "in one go   "
                print(
                    f"  pieces {how}  direct {direct:7.2f}  agrun {agrun:7.2f}  "
                    f"overhead a piece {per_piece_us:5.0f} us"
                )
        finally:
            browser.close()


if __name__ == "__main__":
    main()
