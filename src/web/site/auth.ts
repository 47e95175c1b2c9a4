import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { RESET_PASSWORD_PATH } from '../../domain/site-paths.ts';
import { PASSWORD_MIN_LENGTH } from '../../accounts/validation.ts';
import { chosenPlanOf, firstErrors, formatWait, safeNext, withQuery } from './present.ts';

const Form = Type.Record(Type.String(), Type.Unknown());
const NextQuery = Type.Object({ next: Type.Optional(Type.String({ maxLength: 500 })) });

function throttledPage(reply: FastifyReply, retryAfterMs: number, what: string) {
  reply.header('retry-after', String(Math.ceil(retryAfterMs / 1000)));
  return reply.page(
    'error',
    {
      title: 'Too many attempts',
      heading: 'Too many attempts',
      message: `${what} Try again in ${formatWait(retryAfterMs)}. If you have forgotten your password, you can reset it.`,
      action: { href: '/forgot-password', label: 'Reset your password' },
    },
    429,
  );
}

/** Sign-up, log-in, log-out and password reset pages. */
const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  const { auth } = services;

  /** The plan a visitor chose on the pricing page, when `next` goes on to buy it: both forms name it. */
  const chosenPlan = async (next: string | null) => chosenPlanOf(next, await services.payments.billing.publicPlans());

  app.get('/signup', { schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    if (request.webSession) return reply.seeOther(next ?? '/account');
    return reply.page('auth/signup', { title: 'Create your account', next, chosen: await chosenPlan(next), values: {}, errors: {}, minLength: PASSWORD_MIN_LENGTH });
  });

  app.post('/signup', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const next = safeNext(request.body.next);
    const acceptedTerms = request.body.terms === 'accepted';
    const result = await auth.signUp({ email: request.body.email, password: request.body.password, acceptedTerms, ip: request.ip, now: new Date() });
    if (result.kind === 'throttled') return throttledPage(reply, result.retryAfterMs, 'Too many accounts were created from your network.');
    if (result.kind === 'invalid') {
      return reply.page(
        'auth/signup',
        { title: 'Create your account', next, chosen: await chosenPlan(next), values: { email: request.body.email, terms: acceptedTerms }, errors: firstErrors(result.errors), minLength: PASSWORD_MIN_LENGTH },
        422,
      );
    }
    await reply.startWebSession(result.account);
    // Whichever way a new customer came, the next page welcomes them.
    return reply.seeOther(next ? withQuery(next, 'done', 'welcome') : '/account?done=welcome');
  });

  app.get('/login', { schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next);
    if (request.webSession) return reply.seeOther(next ?? '/account');
    return reply.page('auth/login', { title: 'Log in', next, chosen: await chosenPlan(next), values: {}, errors: {} });
  });

  app.post('/login', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const next = safeNext(request.body.next);
    const result = await auth.logIn({ email: request.body.email, password: request.body.password, ip: request.ip, now: new Date() });
    if (result.kind === 'throttled') return throttledPage(reply, result.retryAfterMs, 'There were too many failed log-ins for this account or from your network.');
    if (result.kind === 'invalid') {
      return reply.page('auth/login', { title: 'Log in', next, chosen: await chosenPlan(next), values: { email: request.body.email }, errors: firstErrors(result.errors) }, 422);
    }
    await reply.startWebSession(result.account);
    return reply.seeOther(next ?? '/account');
  });

  app.post('/logout', { schema: { hide: true } }, async (_request, reply) => {
    await reply.endWebSession();
    return reply.seeOther('/?done=logged-out');
  });

  app.get('/forgot-password', { schema: { hide: true } }, async (_request, reply) => {
    return reply.page('auth/forgot-password', { title: 'Reset your password', values: {}, errors: {}, sent: false });
  });

  app.post('/forgot-password', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const result = await auth.requestReset({ email: request.body.email, ip: request.ip, now: new Date() });
    if (result.kind === 'throttled') return throttledPage(reply, result.retryAfterMs, 'Too many reset links were asked for from your network.');
    if (result.kind === 'invalid') {
      return reply.page('auth/forgot-password', { title: 'Reset your password', values: { email: request.body.email }, errors: firstErrors(result.errors), sent: false }, 422);
    }
    // The same answer whether or not the address has an account.
    return reply.page('auth/forgot-password', { title: 'Check your inbox', values: {}, errors: {}, sent: true, email: String(request.body.email).trim() });
  });

  // The link's secret is in the query string: these two routes log nothing below warn, so that
  // it never reaches a request log line.
  app.get(
    RESET_PASSWORD_PATH,
    { logLevel: 'warn', schema: { hide: true, querystring: Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) }) } },
    async (request, reply) => {
      const token = request.query.token ?? '';
      const email = await auth.resetLinkEmail(token, new Date());
      if (!email) return reply.page('auth/reset-password', { title: 'Link expired', expired: true, token: '', errors: {}, minLength: PASSWORD_MIN_LENGTH }, 410);
      reply.header('referrer-policy', 'no-referrer');
      return reply.page('auth/reset-password', { title: 'Choose a new password', expired: false, token, email, errors: {}, minLength: PASSWORD_MIN_LENGTH });
    },
  );

  app.post(RESET_PASSWORD_PATH, { logLevel: 'warn', schema: { hide: true, body: Form } }, async (request, reply) => {
    const token = typeof request.body.token === 'string' ? request.body.token : '';
    const result = await auth.resetPassword({ token, password: request.body.password, now: new Date() });
    if (result.kind === 'expired') return reply.page('auth/reset-password', { title: 'Link expired', expired: true, token: '', errors: {}, minLength: PASSWORD_MIN_LENGTH }, 410);
    if (result.kind === 'invalid') {
      const email = await auth.resetLinkEmail(token, new Date());
      return reply.page('auth/reset-password', { title: 'Choose a new password', expired: false, token, email, errors: firstErrors(result.errors), minLength: PASSWORD_MIN_LENGTH }, 422);
    }
    await reply.startWebSession(result.account);
    return reply.seeOther('/account?done=password-reset');
  });
};

export default authRoutes;
