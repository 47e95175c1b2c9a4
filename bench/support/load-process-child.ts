/**
 * The child half of load-process.ts: searches at a fixed rate, evenly spaced (open loop, as
 * paced-load.ts), from a process of its own so that the benchmark's other work (a photo host, a
 * status poller) takes no time from it. It runs until told to stop, not for a fixed time, and keeps
 * every request's due time beside its latency, so that a run can be cut into slices afterwards.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadCommand, LoadReply, LoadSetup } from './load-process.ts';

// Given by the first message: the values (20,000 VINs) are more than an argument may hold.
let setup!: LoadSetup;
let agent!: http.Agent;
const send = (reply: LoadReply) => process.send!(reply);

interface Run {
  rate: number;
  startedAt: number;
  /** Stop sending at this time (performance.now()); Infinity until a stop command. */
  until: number;
  due: number[];
  latency: number[];
  statusCodes: Record<string, number>;
  errors: number;
  errorMessages: string[];
  sent: number;
  settled: number;
  timer: NodeJS.Timeout | null;
}

let run: Run | null = null;

function fire(current: Run, due: number): void {
  const path = `${setup.pathPrefix}${encodeURIComponent(setup.values[Math.floor(Math.random() * setup.values.length)]!)}`;
  const fail = (error: Error) => {
    current.errors++;
    if (current.errorMessages.length < 5) current.errorMessages.push(error.message);
    settle(current);
  };
  const request = http.request({ agent, host: setup.host, port: setup.port, method: 'GET', path, headers: setup.headers }, (response) => {
    const code = String(response.statusCode);
    current.statusCodes[code] = (current.statusCodes[code] ?? 0) + 1;
    response.resume();
    response.once('end', () => {
      current.due.push(due - current.startedAt);
      current.latency.push(performance.now() - due);
      settle(current);
    });
    response.once('error', fail);
  });
  request.once('error', fail);
  request.end();
}

function settle(current: Run): void {
  current.settled++;
  finishIfDone(current);
}

function finishIfDone(current: Run): void {
  if (current.timer !== null || current.settled < current.sent || run !== current) return;
  run = null;
  send({
    type: 'result',
    due: current.due,
    latency: current.latency,
    statusCodes: current.statusCodes,
    errors: current.errors,
    errorMessages: current.errorMessages,
    seconds: (performance.now() - current.startedAt) / 1000,
    startedAtEpochMs: performance.timeOrigin + current.startedAt,
  });
}

// Each tick sends every request already due: arrivals stay on schedule on average, and a request's
// latency counts from its due time, so a stall of the server shows in every request it delays.
function tick(current: Run): void {
  const interval = 1000 / current.rate;
  const now = performance.now();
  const end = Math.min(now, current.until);
  while (current.startedAt + current.sent * interval <= end) fire(current, current.startedAt + current.sent++ * interval);
  if (now >= current.until) {
    current.timer = null;
    finishIfDone(current);
    return;
  }
  current.timer = setTimeout(() => tick(current), Math.max(0, current.startedAt + current.sent * interval - performance.now()));
}

process.on('message', (command: LoadCommand) => {
  if (command.type === 'setup') {
    setup = command.setup;
    agent = new http.Agent({ keepAlive: true, maxSockets: setup.maxConnections });
    send({ type: 'ready' });
  } else if (command.type === 'start') {
    if (run) throw new Error('a load run is already going');
    const startedAt = performance.now();
    const current: Run = {
      rate: command.rate,
      startedAt,
      until: command.seconds === null ? Number.POSITIVE_INFINITY : startedAt + command.seconds * 1000,
      due: [],
      latency: [],
      statusCodes: {},
      errors: 0,
      errorMessages: [],
      sent: 0,
      settled: 0,
      timer: null,
    };
    run = current;
    tick(current);
  } else if (command.type === 'stop' && run) {
    run.until = performance.now();
    if (run.timer) clearTimeout(run.timer);
    tick(run);
  }
});
process.on('disconnect', () => process.exit(0));
