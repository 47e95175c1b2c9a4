import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

// Tells the test the niceness its thread runs at (field 19 of the thread's stat).
const stat = readFileSync('/proc/thread-self/stat', 'utf8');
parentPort!.postMessage(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
