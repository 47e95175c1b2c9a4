import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatDateTime } from '../format.ts';
import { accountOf } from './current-account.ts';

const Form = Type.Record(Type.String(), Type.Unknown());
const PageQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 200 })), done: Type.Optional(Type.String({ maxLength: 40 })) });
const NOTICES: Record<string, string> = { removed: 'The watch is removed: no more events come for it.' };

/** Watches: add a VIN or a lot, list them (paged), remove one. The API's rules, the same service. */
const watchesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { watches, payments } = app.services;

  async function render(request: FastifyRequest, reply: FastifyReply, extra: { error?: string | null; notice?: string | null; target?: string; cursor?: string | undefined }, status = 200) {
    const account = accountOf(request);
    const [listed, count, subscription] = await Promise.all([
      watches.list(account.id, { limit: 50, cursor: extra.cursor }),
      watches.count(account.id),
      payments.billing.inForce(account.id, new Date()),
    ]);
    const page = listed.kind === 'page' ? listed.page : { items: [], nextCursor: null };
    const plan = subscription ? (await app.services.plans.findByCode(subscription.planCode)) : undefined;
    return reply.page(
      'account/watches',
      {
        title: 'Watches',
        section: 'account',
        tab: 'watches',
        watches: page.items.map((watch) => ({
          id: watch.id,
          target: watch.vin ?? `${watch.auction} lot ${watch.lotId}`,
          kind: watch.vin ? 'VIN' : 'Lot',
          created: formatDateTime(watch.createdAt),
        })),
        nextCursor: page.nextCursor,
        count,
        limit: plan?.watchLimit ?? 0,
        hasPlan: plan !== undefined,
        error: extra.error ?? null,
        notice: extra.notice ?? null,
        target: extra.target ?? '',
      },
      status,
    );
  }

  app.get('/watches', { schema: { hide: true, querystring: PageQuery } }, async (request, reply) =>
    render(request, reply, { cursor: request.query.cursor, notice: NOTICES[request.query.done ?? ''] ?? null }),
  );

  app.post('/watches', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const raw = typeof request.body.target === 'string' ? request.body.target.trim().slice(0, 100) : '';
    // "copart 12345678" (or copart:12345678) watches a lot; anything else is read as a VIN.
    const lot = /^([a-z][a-z0-9_-]*)[\s:/]+(\d{1,10})$/i.exec(raw);
    const outcome = await watches.create(account.id, lot ? { auction: lot[1]!.toLowerCase(), lotId: Number(lot[2]) } : { vin: raw });
    switch (outcome.kind) {
      case 'invalid':
        return render(request, reply, { error: outcome.messages[0] ?? 'That is not a VIN or a lot.', target: raw }, 422);
      case 'no-plan':
        return render(request, reply, { error: 'You have no plan in force, so you can hold no watches. Choose a plan first.', target: raw }, 409);
      case 'over-limit':
        return render(request, reply, { error: `Your plan allows ${outcome.limit} watches and you have that many. Remove one, or move to a larger plan.`, target: raw }, 409);
      case 'exists':
        return render(request, reply, { notice: 'You already watch that.' });
      case 'created':
        return render(request, reply, { notice: 'Watching. Events go to your webhook endpoint.' }, 201);
    }
  });

  app.post('/watches/:id/delete', { schema: { hide: true, params: Type.Object({ id: Type.String({ maxLength: 64 }) }) } }, async (request, reply) => {
    const account = accountOf(request);
    if (!(await watches.delete(account.id, request.params.id))) return render(request, reply, { error: 'That watch is already removed, or is not one of yours.' }, 404);
    return reply.seeOther('/account/watches?done=removed');
  });
};

export default watchesRoutes;
