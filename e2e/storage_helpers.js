// Test helpers for e2e/test_storage_js.py, evaluated in each page after it loads.
async () => {
  window.S = await import('/storage.js');

  // A turn with something in every part, each part tagged with the turn's id.
  window.turn = (sid, n, extra = {}) => {
    const tag = { turn: `${sid}-t${n}`, pad: 'x'.repeat(extra.padBytes ?? 100) };
    return {
      sessionId: sid,
      turnId: `${sid}-t${n}`,
      committedAtMs: 1000 + n,
      messages: [{ id: `${sid}-m${n}a`, ...tag }, { id: `${sid}-m${n}b`, ...tag }, { ...tag }],
      events: [
        { ...tag, kind: 'started' },
        { ...tag, kind: 'finished' },
      ],
      memoryEntries: [{ ...tag }],
      sessionMemory: { last: `${sid}-t${n}`, n },
      inquiry: { activeGoal: `goal ${n}` },
      // The content store's record shape, which every import checks (ContentRecord).
      contentEntries: [{ ref: `${sid}-t${n}`, kind: 'text', body: 'abc', bytes: 5, digest: 'sha256:x', runId: `r${n}`, createdAt: n, lastUsedAt: n }],
      lastRun: { turn: `${sid}-t${n}` },
      globalMemory: extra.globalMemory ?? [],
    };
  };

  // Every turn whole, seqs 1..n, snapshots from the last turn; returns the turn ids.
  window.checkWhole = (snap) => {
    const fail = (why) => {
      throw new Error(`${snap.sessionId}: ${why}`);
    };
    snap.turns.forEach((t, i) => {
      if (t.seq !== i + 1) fail(`seq ${t.seq} at ${i}`);
      const tags = [...t.messages, ...t.events, ...t.memoryEntries].map((x) => x.turn);
      if (tags.length !== 6 || tags.some((x) => x !== t.turnId)) fail(`turn ${t.turnId} is not whole`);
    });
    const last = snap.turns.at(-1);
    if (last && (snap.sessionMemory?.last !== last.turnId || snap.lastRun?.turn !== last.turnId)) {
      fail(`snapshots are not from the last turn ${last.turnId}`);
    }
    if (last && !snap.contentEntries.some((c) => c.ref === last.turnId)) fail('content missing');
    return snap.turns.map((t) => t.turnId);
  };

  // A page session store whose onStorageDegraded calls are recorded in `degraded`.
  window.watched = (dbName) => {
    const degraded = [];
    const store = S.createSessionStore({ dbName, onStorageDegraded: (e) => degraded.push(e) });
    return { store, degraded };
  };

  // Raw IndexedDB: open `name` (at `version`, running `upgrade` if needed); resolves to the db.
  window.openRaw = (name, version, upgrade) =>
    new Promise((resolve, reject) => {
      const request = version === undefined ? indexedDB.open(name) : indexedDB.open(name, version);
      request.onupgradeneeded = () => upgrade?.(request.result, request.transaction);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });

  // Settle with a raw IndexedDB request's result.
  window.settle = (request) =>
    new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });

  // Every session in a store checked whole: { sessionId: turnCount }.
  window.checkAll = async (store) => {
    const out = {};
    for (const info of await store.listSessions()) {
      const ids = checkWhole(await store.loadSession(info.sessionId));
      if (ids.length !== info.turnCount) throw new Error(`${info.sessionId}: count`);
      out[info.sessionId] = ids.length;
    }
    return out;
  };
}
