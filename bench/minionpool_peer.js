// The peer: N no-op tasks through an npm `minionpool` MinionPool at a given concurrency.
// Usage: node minionpool_peer.js N CONCURRENCY   (prints {"items": N, "seconds": s} as JSON)
// Each task ends on the next turn of the event loop (setImmediate), as a jr2 worker task ends on
// a later turn of asyncio's loop: a callback called synchronously would measure a plain loop.
const { MinionPool } = require("minionpool");

const n = parseInt(process.argv[2], 10);
const concurrency = parseInt(process.argv[3], 10);
let next = 0;
let done = 0;
const t0 = process.hrtime.bigint();
const pool = new MinionPool({
  name: "bench",
  concurrency,
  continueOnError: true,
  taskSourceStart: (cb) => cb(undefined, {}),
  taskSourceNext: (state, cb) => {
    cb(undefined, next < n ? next++ : undefined);
    return state;
  },
  minionTaskHandler: (task, state, cb) => {
    done++;
    setImmediate(() => cb(undefined, state));
  },
  poolEnd: () => {
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(JSON.stringify({ items: done, seconds: s }));
  },
});
pool.start();
