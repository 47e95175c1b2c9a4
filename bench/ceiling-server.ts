/**
 * The ceiling of the search benchmark: a bare Fastify 5 app that answers the search route with a
 * report serialised once in advance. No database, no authentication, no logging, no hooks: what is
 * left is the HTTP stack (socket, HTTP parser, router, query string, reply), so the real server's
 * throughput divided by this one's says how much of the machine the search itself costs.
 *
 * Usage: node bin/run-ts.js bench/ceiling-server.ts --port <port> --body-file <file.json>
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    'body-file': { type: 'string' },
  },
});
if (!values.port || !values['body-file']) {
  console.error('usage: ceiling-server.ts --port <port> --body-file <file.json> [--host 127.0.0.1]');
  process.exit(2);
}

const body = await readFile(values['body-file'], 'utf8');
JSON.parse(body); // refuse to serve something that is not the JSON report it stands for

const app = Fastify({ logger: false });
app.get('/api/v1/search', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));

const shutdown = async () => {
  await app.close();
  process.exit(0);
};
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());

await app.listen({ port: Number(values.port), host: values.host });
