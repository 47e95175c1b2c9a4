import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { FEED_FORMATS, FEED_STATUSES } from '../../domain/feed.ts';
import { feedAuditDetails, feedJson } from '../../feeds/feed-service.ts';
import operatorAuth from '../plugins/operator-auth.ts';
import { errorRef } from '../api/schemas.ts';
import { adminErrorResponses, adminRoute, answer, requestActor } from './schemas.ts';

const nullableTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });
const count = (description: string) => Type.Integer({ minimum: 0, description });

export const AdminFeedSchema = Type.Object(
  {
    name: Type.String({ description: 'The feed\'s name: the `source` of the lots it stores.' }),
    url: Type.String({ description: 'Where it is pulled from, without credentials (a user name, a password or a token-like query value is left out).' }),
    format: Type.Union(FEED_FORMATS.map((format) => Type.Literal(format))),
    every: Type.String({ description: 'How often it is pulled: `<minutes>m` or `<hours>h`.' }),
    paused: Type.Boolean(),
    last_attempt_at: nullableTime('When the last pull ended; null: never pulled.'),
    last_success_at: nullableTime('When the last pull that succeeded (`ok` or `not_modified`) ended.'),
    last_status: Type.Union([...FEED_STATUSES.map((status) => Type.Literal(status)), Type.Null()], { description: '`ok`: loaded; `not_modified`: the source answered 304; `failed`: see `last_error` (the data stored before is kept).' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the last pull failed, in words; null when it did not.' }),
    read: count('Records the last pull read.'),
    inserted: count('Lots it stored that were new.'),
    updated: count('Stored lots it changed.'),
    unchanged: count('Stored lots it found as they were.'),
    skipped: count('Records it could not read as lots.'),
    next_run_at: Type.String({ format: 'date-time', description: 'When it is due next (a paused feed is not pulled).' }),
    listing: Type.Boolean({ description: 'A full listing: lots missing from a good pull are recorded as having left it.' }),
    paged: Type.Boolean({ description: 'A paged JSON API.' }),
    headers: Type.Array(
      Type.Object({ name: Type.String(), from: Type.Union([Type.Literal('env'), Type.Literal('literal')]), env: Type.Union([Type.String(), Type.Null()]) }),
      { description: 'The request headers: their names and where their values come from; never a value.' },
    ),
    failures_in_row: count('Failed pulls since the last good one (three email the operator once).'),
    newest_lot_at: nullableTime('When a pull last stored a lot new to the service.'),
    resume_page: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: 'A paged pull that failed part-way resumes at this page; null otherwise.' }),
  },
  { $id: 'AdminFeed', title: 'AdminFeed' },
);

const FeedParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64, description: 'The feed\'s name.' }) });
const invalid = errorRef('VALIDATION_FAILED', 'A field is wrong; `errors` names it.');
const unknownFeed = errorRef('NOT_FOUND', 'No feed has that name.');

/** The operators' feeds: the same FeedService as `vinhistory feeds` (docs/feeds.md). */
const adminFeedsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(operatorAuth);
  if (!app.getSchema('AdminFeed')) app.addSchema(AdminFeedSchema);
  const { feeds, operations } = app.services;
  const feedRef = (description: string) => Type.Ref(AdminFeedSchema, { description });

  app.get(
    '/admin/v1/feeds',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'List feeds',
        description: 'Every feed, by name, with the state of its pulls (the fields of `vinhistory feeds list --json`).',
        operationId: 'adminListFeeds',
        response: { 200: Type.Object({ feeds: Type.Array(Type.Ref(AdminFeedSchema)) }, { description: 'The feeds.' }), ...adminErrorResponses },
      },
    },
    async () => ({ feeds: (await feeds.list()).map(feedJson) }),
  );

  app.post(
    '/admin/v1/feeds',
    {
      onRequest: app.authenticateOperator,
      bodyLimit: 64 * 1024,
      schema: {
        ...adminRoute,
        summary: 'Add a feed',
        description: 'Registers a feed, due at once: the next poll of a `serve` instance pulls it. The options of `vinhistory feeds add`.',
        operationId: 'adminAddFeed',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 64, description: 'Lower-case letters, digits, - and _.' }),
          url: Type.String({ minLength: 1, maxLength: 2000 }),
          format: Type.Optional(Type.Union(FEED_FORMATS.map((format) => Type.Literal(format)), { description: '`auto` unless given.' })),
          map: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The CSV mapping of format `csv` (docs/import-formats.md).' })),
          every: Type.Optional(Type.String({ maxLength: 10, description: '`<minutes>m` or `<hours>h`; `1h` unless given.' })),
          headers: Type.Optional(Type.Array(Type.String({ maxLength: 8200 }), { maxItems: 20, description: '`Name: value`; a value `env:NAME` is read from the pulling process\'s environment at each pull and never stored.' })),
          listing: Type.Optional(Type.Boolean()),
          paged: Type.Optional(Type.Boolean()),
          cursor_param: Type.Optional(Type.String({ maxLength: 64 })),
          updated_since_param: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          201: feedRef('The feed, due now.'),
          409: errorRef('OPERATION_REFUSED', 'A feed has that name already.'),
          422: invalid,
          ...adminErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { feed } = answer(
        await feeds.add({
          name: body.name,
          url: body.url,
          format: body.format,
          map: body.map,
          every: body.every,
          headers: body.headers,
          listing: body.listing,
          paged: body.paged,
          cursorParam: body.cursor_param,
          updatedSinceParam: body.updated_since_param,
        }),
      );
      await operations.record(requestActor(request.operator), 'feed.add', feed.name, feedAuditDetails(feed));
      return reply.code(201).send(feedJson(feed));
    },
  );

  app.post(
    '/admin/v1/feeds/:name/run',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Pull a feed now',
        description: 'Makes the feed due at once; the next poll of a `serve` instance pulls it (within its poll interval). `accept_changes` lets that pull differ from the last good one (a changed CSV header, a much smaller file).',
        operationId: 'adminRunFeed',
        params: FeedParams,
        querystring: Type.Object({
          accept_changes: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: '`true`: that pull may differ from the last good one.' })),
        }),
        response: { 202: feedRef('The feed, due now.'), 404: unknownFeed, 422: invalid, ...adminErrorResponses },
      },
    },
    async (request, reply) => {
      const acceptChanges = request.query.accept_changes === 'true';
      const { feed } = answer(await feeds.requestRun(request.params.name, acceptChanges));
      await operations.record(requestActor(request.operator), 'feed.run', feed.name, { accept_changes: acceptChanges });
      return reply.code(202).send(feedJson(feed));
    },
  );

  for (const [action, paused] of [['pause', true], ['resume', false]] as const) {
    app.post(
      `/admin/v1/feeds/:name/${action}`,
      {
        onRequest: app.authenticateOperator,
        schema: {
          ...adminRoute,
          summary: paused ? 'Pause a feed' : 'Resume a feed',
          description: paused ? 'It is not pulled until resumed; its data and state are kept.' : 'It is pulled on its schedule again.',
          operationId: paused ? 'adminPauseFeed' : 'adminResumeFeed',
          params: FeedParams,
          response: { 200: feedRef(paused ? 'The feed, paused.' : 'The feed, resumed.'), 404: unknownFeed, 422: invalid, ...adminErrorResponses },
        },
      },
      async (request) => {
        const { feed } = answer(await feeds.pause(request.params.name, paused));
        await operations.record(requestActor(request.operator), paused ? 'feed.pause' : 'feed.resume', feed.name, {});
        return feedJson(feed);
      },
    );
  }

  app.delete(
    '/admin/v1/feeds/:name',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Remove a feed',
        description: 'Forgets the feed; the lots it stored stay, with its name as their source.',
        operationId: 'adminRemoveFeed',
        params: FeedParams,
        response: { 204: Type.Null({ description: 'Removed.' }), 404: unknownFeed, 422: invalid, ...adminErrorResponses },
      },
    },
    async (request, reply) => {
      answer(await feeds.remove(request.params.name));
      await operations.record(requestActor(request.operator), 'feed.remove', request.params.name, {});
      return reply.code(204).send(null);
    },
  );
};

export default adminFeedsRoutes;
