// How the page watches its worker while a call waits (./remote.js): a diagnostic a test may
// shorten (`limitMs`). A file of its own, never bundled (build.sh), so the page's agrun.js and a
// test that imports this module tune the same object.

/**
 * The page pings its worker every `intervalMs` while a call waits, and takes a worker that
 * sent nothing for `limitMs` for dead. The limit is long because a worker busy in Python
 * answers nothing until it is done: a Python skill computing for longer than that without
 * awaiting is taken for dead.
 */
export const heartbeat = { intervalMs: 1_000, limitMs: 30_000 };
