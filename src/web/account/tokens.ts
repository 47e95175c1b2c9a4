import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TOKEN_ROTATION_GRACE_MS, type ApiTokenKind } from '../../domain/api-token.ts';
import { formatDateTime } from '../format.ts';
import { accountOf } from './current-account.ts';
import { tokenView } from './present-account.ts';

const Form = Type.Record(Type.String(), Type.Unknown());
const TokenParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const GRACE_HOURS = TOKEN_ROTATION_GRACE_MS / (60 * 60 * 1000);

const NOTICES: Record<string, string> = {
  revoked: 'The token is revoked. Requests with it are refused from now on.',
  created: 'The token is created. Its secret was shown once, when it was made; if you did not copy it, revoke it and create another.',
  rotated: 'The token is rotated. The new secret was shown once, when it was made; if you did not copy it, rotate again.',
  'brand-set': 'The token\'s brand is saved: its next reports show it.',
};

/** What a form hands to the page it redirects to (post/redirect/get), in the session's sealed flash. */
type Flash = { kind: 'created'; created: Created } | { kind: 'revoked'; name: string; prefix: string };

function readFlash(value: string | null): Flash | null {
  if (value === null) return null;
  try {
    const parsed = JSON.parse(value) as Flash;
    return parsed.kind === 'created' || parsed.kind === 'revoked' ? parsed : null;
  } catch {
    return null;
  }
}

interface Created {
  token: string;
  name: string;
  /** A sandbox token (`vh_test_...`). */
  test: boolean;
  /** For a rotation: the old token's name and until when it still works. */
  replaces: { prefix: string; until: string } | null;
}

/**
 * API tokens: create (named, the secret shown once), list, revoke, rotate. Every form redirects
 * (post/redirect/get), so that a reload never sends it again: a new token's secret goes to the page
 * the form redirects to in the session's encrypted flash cookie (never stored, never in a URL),
 * shown once, and the answer is not cached.
 */
const tokensRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { apiTokens, payments, brands } = app.services;

  async function renderTokens(request: FastifyRequest, reply: FastifyReply, extra: { created?: Created; error?: string; nameError?: string; name?: string; kind?: ApiTokenKind; notice?: string | null }, status = 200) {
    const account = accountOf(request);
    const now = new Date();
    const [tokens, subscription, brandList, tokenBrands] = await Promise.all([
      apiTokens.list(account.id),
      payments.billing.inForce(account.id, now),
      brands.list(account.id),
      brands.tokenBrands(account.id),
    ]);
    const views = tokens.map((token) => ({ ...tokenView(token, now), brandId: tokenBrands.get(token.id) ?? '' }));
    return reply.page(
      'account/tokens',
      {
        title: 'API tokens',
        section: 'account',
        tab: 'tokens',
        tokens: views.filter((token) => token.state === 'active' || token.state === 'expiring'),
        retired: views.filter((token) => token.state === 'revoked' || token.state === 'expired'),
        created: extra.created ?? null,
        error: extra.error ?? null,
        nameError: extra.nameError ?? null,
        notice: extra.notice ?? null,
        name: extra.name ?? '',
        kind: extra.kind ?? 'live',
        hasPlan: subscription !== undefined,
        graceHours: GRACE_HOURS,
        apiUrl: `${app.services.config.publicBaseUrl}/api/v1/search`,
        // White label: a token may carry one of the account's named brands (the default needs no choosing).
        brandOptions: brandList.filter((brand) => !brand.isDefault).map((brand) => ({ id: brand.id, name: brand.name })),
      },
      status,
    );
  }

  app.get('/tokens', { schema: { hide: true, querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 40 })) }) } }, async (request, reply) => {
    const done = request.query.done ?? '';
    const flash = readFlash(request.takeFlash(reply));
    if (flash?.kind === 'created' && (done === 'created' || done === 'rotated')) return renderTokens(request, reply, { created: flash.created });
    if (flash?.kind === 'revoked' && done === 'revoked') {
      return renderTokens(request, reply, { notice: `The token “${flash.name}” (${flash.prefix}) is revoked. Requests with it are refused from now on.` });
    }
    return renderTokens(request, reply, { notice: NOTICES[done] ?? null });
  });

  app.post('/tokens', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const raw = typeof request.body.name === 'string' ? request.body.name.trim().replace(/\s+/g, ' ') : '';
    // Live unless the test choice is made: a form without the field (an older page) makes what it always made.
    const kind: ApiTokenKind = request.body.kind === 'test' ? 'test' : 'live';
    if (raw.length === 0 || raw.length > 100) {
      return renderTokens(request, reply, { nameError: 'Give the token a name of 1 to 100 characters, such as “production server”.', name: raw, kind }, 422);
    }
    const created = await apiTokens.create(account.id, raw, new Date(), kind);
    if (created.kind === 'too-many') {
      return renderTokens(request, reply, { error: `An account can have ${created.limit} live tokens. Revoke one you no longer use first.`, name: raw, kind }, 409);
    }
    reply.setFlash(JSON.stringify({ kind: 'created', created: { token: created.secret, name: raw, test: kind === 'test', replaces: null } } satisfies Flash));
    return reply.seeOther('/account/tokens?done=created#created');
  });

  app.post('/tokens/:id/rotate', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const account = accountOf(request);
    const rotated = await apiTokens.rotate(account.id, request.params.id, new Date());
    if (rotated.kind === 'not-rotatable') {
      return renderTokens(request, reply, { error: 'That token cannot be rotated: it is revoked, expired or already rotated.' }, 409);
    }
    const created: Created = {
      token: rotated.secret,
      name: rotated.token.name,
      test: rotated.token.kind === 'test',
      replaces: { prefix: `${rotated.previous.displayPrefix}…`, until: formatDateTime(rotated.previous.expiresAt!) },
    };
    reply.setFlash(JSON.stringify({ kind: 'created', created } satisfies Flash));
    return reply.seeOther('/account/tokens?done=rotated#created');
  });

  app.post('/tokens/:id/revoke', { schema: { hide: true, params: TokenParams } }, async (request, reply) => {
    const account = accountOf(request);
    const token = (await apiTokens.list(account.id)).find((candidate) => candidate.id === request.params.id);
    if (!token || !(await apiTokens.revoke(account.id, request.params.id, new Date()))) {
      return renderTokens(request, reply, { error: 'That token is already revoked, or is not one of yours.' }, 404);
    }
    reply.setFlash(JSON.stringify({ kind: 'revoked', name: token.name, prefix: `${token.displayPrefix}…` } satisfies Flash));
    return reply.seeOther('/account/tokens?done=revoked');
  });

  app.post('/tokens/:id/brand', { schema: { hide: true, params: TokenParams, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const brandId = typeof request.body.brand_id === 'string' ? request.body.brand_id : '';
    if (!(await brands.setTokenBrand(account.id, request.params.id, brandId === '' ? null : brandId))) {
      return renderTokens(request, reply, { error: 'That token or brand is not one of yours.' }, 404);
    }
    return reply.seeOther('/account/tokens?done=brand-set');
  });

};

export default tokensRoutes;
