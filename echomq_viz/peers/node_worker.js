// Bull's and BullMQ's producer and worker for echomq-viz notebook 10, as their
// users write them: queue.add, and queue.process (Bull) or new Worker (BullMQ).
// One JSON request per line on stdin, one JSON reply per line on stdout
// (node_serve.js); the process exits when stdin closes. Each worker appends
// the job's name to the list viz10:done, so the order it ran the jobs in can
// be read back.
"use strict";
const { serve } = require("./node_serve");

const DONE = "viz10:done";
let lib = null, queue = null, worker = null, recorder = null, connection = null;

function version(name) {
  return require(`${name}/package.json`).version;
}

async function open(request) {
  lib = request.lib;
  connection = { path: request.path, maxRetriesPerRequest: null, enableReadyCheck: false };
  const IORedis = require("ioredis");
  recorder = new IORedis(connection);
  if (lib === "bull") {
    const Queue = require("bull");
    queue = new Queue(request.queue, { redis: connection });
    await queue.isReady();
  } else if (lib === "bullmq") {
    const { Queue } = require("bullmq");
    queue = new Queue(request.queue, { connection });
    await queue.waitUntilReady();
  } else {
    throw new Error(`lib must be bull or bullmq, got ${JSON.stringify(lib)}`);
  }
  return { version: version(lib) };
}

// Each job added in turn; the reply says, for each, "ok" or the library's error.
async function add(jobs) {
  const outcomes = [];
  for (const job of jobs) {
    const options = job.priority === null || job.priority === undefined ? {} : { priority: job.priority };
    try {
      if (lib === "bull") await queue.add({ name: job.name }, options);
      else await queue.add(job.name, { name: job.name }, options);
      outcomes.push("ok");
    } catch (error) {
      outcomes.push(String(error && error.message || error).split("\n")[0]);
    }
  }
  return outcomes;
}

async function work() {
  const record = async (job) => { await recorder.rpush(DONE, job.data.name); };
  if (lib === "bull") {
    queue.process(1, record);
  } else {
    const { Worker } = require("bullmq");
    worker = new Worker(queue.name, record, { connection, concurrency: 1 });
    await worker.waitUntilReady();
  }
  return null;
}

async function close() {
  if (worker) await worker.close(true).catch(() => {});
  if (queue) await queue.close().catch(() => {});
  if (recorder) recorder.disconnect();
  worker = queue = recorder = null;
  return null;
}

async function handle(request) {
  switch (request.op) {
    case "open": return open(request);
    case "add": return add(request.jobs);
    case "work": return work();
    case "close": return close();
    default: throw new Error(`unknown op ${JSON.stringify(request.op)}`);
  }
}

serve(handle, close);
