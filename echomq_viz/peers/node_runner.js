// Drives npm's `bull` for echomq-viz notebook 10: one JSON request per line on
// stdin, one JSON reply per line on stdout (node_serve.js). It exits when
// stdin closes, so it never outlives the Python process that started it.
"use strict";
const { serve } = require("./node_serve");
const Queue = require("bull");

let queue = null;

function nowNs() {
  return process.hrtime.bigint();
}

async function open(request) {
  const r = request.redis;
  const redis = { db: r.db || 0, maxRetriesPerRequest: null, enableReadyCheck: false };
  if (r.path) redis.path = r.path; else { redis.host = r.host; redis.port = r.port; }
  if (r.password) redis.password = r.password;
  if (r.username) redis.username = r.username;
  queue = new Queue(request.queue, { prefix: request.prefix, redis });
  await queue.isReady();
  return { bull: require("bull/package.json").version };
}

async function add(job) {
  await queue.add({ name: job.name }, { priority: job.priority });
}

async function pop() {
  const job = await queue.getNextJob();
  return job ? job.data.name : null;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// Each operation timed alone, the median taken: as the Python side does.
async function timed(jobs) {
  const adds = [], pops = [];
  for (const job of jobs) {
    const start = nowNs();
    await add(job);
    adds.push(Number(nowNs() - start) / 1e9);
  }
  for (let i = 0; i < jobs.length; i++) {
    const start = nowNs();
    const name = await pop();
    pops.push(Number(nowNs() - start) / 1e9);
    if (name === null) throw new Error("the queue ran dry while timing pops");
  }
  return { add: median(adds), pop: median(pops) };
}

async function timedAdds(jobs) {
  const adds = [];
  for (const job of jobs) {
    const start = nowNs();
    await add(job);
    adds.push(Number(nowNs() - start) / 1e9);
  }
  return adds;
}

async function timedPops(count) {
  const pops = [];
  for (let i = 0; i < count; i++) {
    const start = nowNs();
    const name = await pop();
    pops.push(Number(nowNs() - start) / 1e9);
    if (name === null) throw new Error("the queue ran dry while timing pops");
  }
  return pops;
}

async function fill(jobs) {
  for (let i = 0; i < jobs.length; i += 500) {
    await queue.addBulk(jobs.slice(i, i + 500).map((job) => ({ data: { name: job.name }, opts: { priority: job.priority } })));
  }
}

async function handle(request) {
  switch (request.op) {
    case "open": return open(request);
    case "add": return add(request.job);
    case "pop": return pop();
    case "timed": return timed(request.jobs);
    case "timed_adds": return timedAdds(request.jobs);
    case "timed_pops": return timedPops(request.count);
    case "fill": return fill(request.jobs);
    case "close": if (queue) await queue.close(); queue = null; return null;
    default: throw new Error(`unknown op ${JSON.stringify(request.op)}`);
  }
}

serve(handle, async () => {
  if (queue) await queue.close().catch(() => {});
});
