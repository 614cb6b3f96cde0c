// Loaded into the benchmark's worker (NODE_OPTIONS=--import) when `npm run bench -- profile --kubernetes` runs: every
// HTTPS request the process makes (client-node's fetch and its exec WebSockets both go through https.request) is
// written, with when it started and how long it took, to the file BERTH_PROFILE_KUBE_CALLS names, one JSON line each.
// Plain JavaScript: NODE_OPTIONS reaches the worker's threads too, where no TypeScript loader is registered.
import { appendFileSync } from 'node:fs';
import https from 'node:https';

const file = process.env.BERTH_PROFILE_KUBE_CALLS;
if (file) {
  let pending = [];
  const flush = () => {
    if (pending.length === 0) return;
    appendFileSync(file, pending.join(''));
    pending = [];
  };
  setInterval(flush, 100).unref();
  process.on('exit', flush);
  const original = https.request.bind(https);
  https.request = (...args) => {
    const req = original(...args);
    const opts = args.find((a) => typeof a === 'object' && a !== null && !(a instanceof URL));
    const url = args.find((a) => a instanceof URL || typeof a === 'string');
    const path = opts?.path ?? (url ? `${new URL(String(url)).pathname}${new URL(String(url)).search}` : '');
    const at = Date.now();
    let ended = false;
    const once = () => {
      if (ended) return;
      ended = true;
      pending.push(`${JSON.stringify({ at, ms: Date.now() - at, method: (opts?.method ?? 'GET').toUpperCase(), path })}\n`);
    };
    req.on('response', (res) => { res.on('end', once); res.on('close', once); });
    req.on('upgrade', (_res, socket) => socket.on('close', once));
    req.on('error', once);
    return req;
  };
}

// BERTH_PROFILE_CPU_DIR: a V8 CPU profile of each thread of the process (the worker's main thread and its workflow
// threads), written there at exit (--cpu-prof is not allowed in NODE_OPTIONS).
const cpuDir = process.env.BERTH_PROFILE_CPU_DIR;
if (cpuDir) {
  const { Session } = await import('node:inspector');
  const { writeFileSync } = await import('node:fs');
  const { threadId } = await import('node:worker_threads');
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(`${cpuDir}/${process.pid}-${threadId}.cpuprofile`, JSON.stringify(res.profile));
    });
  };
  process.on('exit', write);
  process.once('SIGUSR2', write);
}
