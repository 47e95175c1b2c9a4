import { readFileSync } from 'node:fs';
import { parentPort, Worker } from 'node:worker_threads';

/**
 * Tells the test the priority its own thread runs at, and that of a thread it starts itself: the
 * niceness (field 19 of the thread's stat) and the scheduling policy (`policy` in its sched file:
 * 0 SCHED_OTHER, 5 SCHED_IDLE).
 */
const OWN = `
const { readFileSync } = require('node:fs');
const stat = readFileSync('/proc/thread-self/stat', 'utf8');
const policy = /^policy\\s*:\\s*(\\d+)/m.exec(readFileSync('/proc/thread-self/sched', 'utf8'));
module.exports = { niceness: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]), policy: policy ? Number(policy[1]) : null };
`;

function own(): { niceness: number; policy: number | null } {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const policy = /^policy\s*:\s*(\d+)/m.exec(readFileSync('/proc/thread-self/sched', 'utf8'));
  return { niceness: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]), policy: policy ? Number(policy[1]) : null };
}

const child = new Worker(`${OWN}\nrequire('node:worker_threads').parentPort.postMessage(module.exports);`, { eval: true });
const started = await new Promise((resolve, reject) => {
  child.once('message', resolve);
  child.once('error', reject);
});
await child.terminate();
parentPort!.postMessage({ own: own(), started });
