import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ByteRange } from '../media/media-store.ts';
import { MEDIA_PATH, REPORT_MEDIA_PATH } from '../domain/media.ts';

/** An archived file never changes under its name (the name is its content's hash). */
const IMMUTABLE = 'public, max-age=31536000, immutable';

type RangeRequest = { kind: 'whole' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range of RFC 9110 (`a-b`, `a-`, `-n`). Several ranges at once, or another unit, are
 * answered with the whole file, as the RFC allows; a range that starts past the end is 416.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'whole' };
  const [, first, last] = match;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size) return { kind: 'unsatisfiable' };
  if (end < start) return { kind: 'whole' };
  return { kind: 'range', range: { start, end } };
}

const Message = Type.Object({ message: Type.String() });

/**
 * The archive's photos at `/media/<sha256>[-thumb|-display].<ext>`, from either store through this
 * instance (docs/decisions.md: proxied, not redirected): immutable caching, a strong ETag (the
 * name), single byte ranges, the type of the name's extension.
 */
const mediaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { media, metrics } = app.services;
  // Branded report pages link the same files under /report/media/ (a reseller proxies /report/* only).
  for (const base of [MEDIA_PATH, REPORT_MEDIA_PATH]) app.route({
    method: ['GET', 'HEAD'],
    url: `${base}/:name`,
    schema: {
      hide: true,
      // The longest media name is 64 + 8 + 5 characters; Fastify answers 414 past 100 (maxParamLength).
      params: Type.Object({ name: Type.String({ maxLength: 100 }) }),
      response: {
        200: Type.Any({ description: 'The photo.' }),
        206: Type.Any({ description: 'The requested byte range of the photo.' }),
        304: Type.Null({ description: 'Not modified: the ETag matched.' }),
        404: Message,
        416: Message,
      },
    },
    logLevel: 'warn',
    handler: async (request, reply) => {
      const { name } = request.params;
      const notFound = () => {
        metrics.mediaServed.inc({ status: '404' });
        return reply.code(404).header('cache-control', 'no-store').send({ message: 'No archived photo has this name.' });
      };
      const etag = `"${name.slice(0, name.lastIndexOf('.'))}"`;
      reply.header('cache-control', IMMUTABLE).header('cross-origin-resource-policy', 'cross-origin').header('accept-ranges', 'bytes');

      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch !== undefined && (ifNoneMatch === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))) {
        // Only a name the archive holds may answer 304; anything else is the 404 it would be.
        if ((await media.stat(name)) === null) return notFound();
        metrics.mediaServed.inc({ status: '304' });
        return reply.code(304).header('etag', etag).send();
      }

      const rangeHeader = request.headers.range;
      const ifRange = request.headers['if-range'];
      const wantsRange = rangeHeader !== undefined && (ifRange === undefined || String(ifRange).trim() === etag);
      let range: ByteRange | null = null;
      if (wantsRange) {
        const size = await media.stat(name);
        if (size === null) return notFound();
        const parsed = parseRange(rangeHeader, size);
        if (parsed.kind === 'unsatisfiable') {
          metrics.mediaServed.inc({ status: '416' });
          return reply.code(416).header('content-range', `bytes */${size}`).send({ message: `The range is outside the file's ${size} bytes.` });
        }
        if (parsed.kind === 'range') range = parsed.range;
      }

      const file = await media.open(name, range);
      if (file.kind === 'not_found') return notFound();
      reply.header('etag', file.etag).type(file.contentType).header('x-content-type-options', 'nosniff');
      if (file.range) {
        metrics.mediaServed.inc({ status: '206' });
        reply.code(206).header('content-range', `bytes ${file.range.start}-${file.range.end}/${file.size}`).header('content-length', file.range.end - file.range.start + 1);
      } else {
        metrics.mediaServed.inc({ status: '200' });
        reply.code(200).header('content-length', file.size);
      }
      if (request.method === 'HEAD') {
        file.body.destroy();
        return reply.send();
      }
      return reply.send(file.body);
    },
  });
};

export default mediaRoutes;
