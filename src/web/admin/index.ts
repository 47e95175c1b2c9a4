import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ACCOUNT_STATUSES, type AccountStatus } from '../../domain/operations.ts';
import type { OperatorPrincipal } from '../../domain/principal.ts';
import { formatCents } from '../../billing/pricing.ts';
import type { Actor } from '../../operations/operator-service.ts';
import { age } from '../../operations/age.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The operator logged in to the operators' page, or null. */
    pageOperator: OperatorPrincipal | null;
  }
}

export const OPERATOR_COOKIE = 'vh_operator';
/** An operator's page session lasts a working day; the token itself is checked on every request. */
const OPERATOR_SESSION_MS = 8 * 60 * 60 * 1000;

const NOTICES: Record<string, string> = {
  paid: 'The invoice is marked paid and applied.',
  void: 'The invoice is void.',
  'logged-out': 'You are logged out.',
};

const Form = Type.Record(Type.String(), Type.Unknown());
const InvoiceParams = Type.Object({ invoice: Type.String({ maxLength: 64 }) });
const DashboardQuery = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  status: Type.Optional(Type.String({ maxLength: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  notice: Type.Optional(Type.String({ maxLength: 20 })),
});

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '');
const when = (iso: string | null | undefined) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : '');

/**
 * The operators' page, /admin: log-in with an operator token, then accounts (search, status,
 * plan, use), open invoices (pay or void through the same OperatorService as the CLI and the
 * admin API, audited with the token's name), the mail queue, webhook deliveries and the photo
 * archive. The log-in keeps only the token's id in a signed, HttpOnly, SameSite=Strict cookie
 * scoped to /admin; every request checks that the token is still live, so revoking it
 * (`vinhistory operator-tokens revoke`) logs its page out at once.
 */
const adminPages: FastifyPluginAsyncTypebox = async (app) => {
  const { operations, operatorTokens, mail, media, feeds, config } = app.services;
  const secure = config.publicBaseUrl.startsWith('https://');
  const cookiePath = `${new URL(config.publicBaseUrl).pathname.replace(/\/$/, '')}/admin`;

  app.decorateRequest('pageOperator', null);
  app.addHook('onRequest', async (request) => {
    const raw = request.cookies[OPERATOR_COOKIE];
    if (!raw) return;
    const unsigned = request.unsignCookie(raw);
    if (!unsigned.valid || !unsigned.value) return;
    const [tokenId, expires] = unsigned.value.split('.');
    if (!tokenId || !(Number(expires) > Date.now())) return;
    const token = (await operatorTokens.list()).find((candidate) => candidate.id === tokenId && candidate.revokedAt === null);
    if (token) request.pageOperator = { tokenId: token.id, name: token.name };
  });

  const actorOf = (request: FastifyRequest): Actor => ({ name: `token:${request.pageOperator!.name}` });

  function loginPage(reply: FastifyReply, error: string | null, status = 200) {
    return reply.page('admin/login', { title: 'Operators', section: 'admin', error }, status);
  }

  app.get('/admin', { schema: { hide: true, querystring: DashboardQuery } }, async (request, reply) => {
    if (!request.pageOperator) return loginPage(reply, null);
    const { email, cursor } = request.query;
    const status = ACCOUNT_STATUSES.includes(request.query.status as AccountStatus) ? (request.query.status as AccountStatus) : undefined;
    const search = email?.trim() ? email.trim() : undefined;
    const accounts = await operations.listAccounts({ limit: 25, ...(search ? { email: search } : {}), ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
    const invoices = await operations.listInvoices({ status: 'open', limit: 25 });
    const [mailSummary, webhooks, photos, audit, feedList] = await Promise.all([mail.summary(), operations.webhookQueue(), media.enabled ? media.status() : Promise.resolve(null), operations.auditPage({ limit: 10 }), feeds.list()]);
    const now = new Date();
    const accountPage = accounts.kind === 'done' ? accounts.page : { items: [], nextCursor: null };
    const nextQuery = accountPage.nextCursor ? new URLSearchParams({ ...(search ? { email: search } : {}), ...(status ? { status } : {}), cursor: accountPage.nextCursor }).toString() : null;
    return reply.page('admin/dashboard', {
      title: 'Operators',
      section: 'admin',
      operator: request.pageOperator,
      notice: request.query.notice ? (NOTICES[request.query.notice] ?? null) : null,
      filter: { email: search ?? '', status: status ?? '' },
      statuses: ACCOUNT_STATUSES,
      cursorError: accounts.kind === 'done' ? null : accounts.message,
      accounts: accountPage.items.map((account) => ({
        id: account.id,
        email: account.email,
        status: account.status,
        plan: account.subscription ? `${account.subscription.planCode} (${account.subscription.billing})` : '—',
        use: account.usage ? `${account.usage.used} / ${account.usage.quota}` : '—',
        ends: day(account.subscription?.endsAt) || '—',
        created: day(account.createdAt),
      })),
      nextQuery,
      invoices: (invoices.kind === 'done' ? invoices.page.items : []).map((invoice) => ({
        id: invoice.id,
        reference: invoice.reference,
        email: invoice.email,
        what: `${invoice.kind} ${invoice.planCode} (${invoice.billing})`,
        amount: formatCents(invoice.amountCents),
        issued: day(invoice.createdAt),
        manual: invoice.provider === 'manual',
      })),
      mail: { ...mailSummary, oldest: when(mailSummary.oldestQueuedAt), transport: app.services.mailDelivery.transportKind },
      webhooks: { pending: webhooks.pending, oldest: when(webhooks.oldestPendingAt) },
      photos,
      feeds: feedList.map((feed) => ({
        name: feed.name,
        format: feed.format,
        status: feed.paused ? 'paused' : (feed.lastStatus ?? 'never pulled'),
        failing: !feed.paused && feed.failuresInRow > 0,
        failures: feed.failuresInRow,
        lastSuccess: age(feed.lastSuccessAt, now),
        lastSuccessAt: when(feed.lastSuccessAt),
        newestLot: age(feed.newestLotAt, now),
        nextRun: feed.paused ? '—' : age(feed.nextRunAt, now),
        error: (feed.lastError ?? '').slice(0, 160),
      })),
      audit: (audit.kind === 'done' ? audit.page.items : []).map((entry) => ({ at: when(entry.at), actor: entry.actor, action: entry.action, target: entry.target })),
    });
  });

  app.post('/admin/login', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const token = typeof request.body.token === 'string' ? request.body.token.trim() : '';
    const operator = token.length > 0 && token.length <= 200 ? await operatorTokens.authenticate(token) : null;
    // One message for an unknown, revoked or malformed token: the page tells nothing about which.
    if (!operator) return loginPage(reply, 'That is not a live operator token.', 401);
    reply.setCookie(OPERATOR_COOKIE, `${operator.tokenId}.${Date.now() + OPERATOR_SESSION_MS}`, {
      path: cookiePath,
      httpOnly: true,
      sameSite: 'strict',
      secure: secure || request.protocol === 'https',
      signed: true,
      maxAge: OPERATOR_SESSION_MS / 1000,
    });
    return reply.seeOther('/admin');
  });

  app.post('/admin/logout', { schema: { hide: true, body: Form } }, async (_request, reply) => {
    reply.clearCookie(OPERATOR_COOKIE, { path: cookiePath });
    return reply.seeOther('/admin?notice=logged-out');
  });

  for (const action of ['pay', 'void'] as const) {
    app.post(`/admin/invoices/:invoice/${action}`, { schema: { hide: true, params: InvoiceParams, body: Form } }, async (request, reply) => {
      if (!request.pageOperator) return loginPage(reply, 'Log in again to continue.', 401);
      const outcome = action === 'pay' ? await operations.payInvoice(actorOf(request), request.params.invoice) : await operations.voidInvoice(actorOf(request), request.params.invoice);
      if (outcome.kind !== 'done') {
        return reply.page('error', { title: 'Not done', heading: 'The invoice was not changed', message: outcome.message }, outcome.kind === 'not-found' ? 404 : 409);
      }
      return reply.seeOther(`/admin?notice=${action === 'pay' ? 'paid' : 'void'}`);
    });
  }
};

export default adminPages;
