import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_MIN_LENGTH } from '../../accounts/validation.ts';
import { PaymentError } from '../../billing/payment-provider.ts';
import { firstErrors, formatWait } from '../site/present.ts';
import { REPORT_LANGUAGE_NAMES, REPORT_LANGUAGES } from '../../domain/report-language.ts';
import { accountOf } from './current-account.ts';

const Form = Type.Record(Type.String(), Type.Unknown());

const NOTICES: Record<string, string> = {
  'email-changed': 'Your email address is changed. Log in with the new one from now on; every other browser has been logged out.',
  'password-changed': 'Your password is changed. Every other browser has been logged out.',
  'sessions-ended': 'Every other browser has been logged out.',
  'language-saved': 'Your reports\' language is saved.',
};

/** The choices of the report-language select: none (the reader's browser), then each language. */
const LANGUAGE_OPTIONS = [
  { value: '', label: 'The reader\'s browser language (English if we do not write it)' },
  ...REPORT_LANGUAGES.map((code) => ({ value: code, label: `${REPORT_LANGUAGE_NAMES[code]} (${code})` })),
];

/** Sign-in settings: the password, and the other browsers logged in to the account. */
const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app;
  async function renderSettings(
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { errors?: Record<string, string>; notice?: string | null; error?: string | null; newEmail?: string },
    status = 200,
  ) {
    const account = accountOf(request);
    const [hasPassword, sessions, language] = await Promise.all([
      services.auth.hasPassword(account.id),
      services.sessions.countLive(account.id),
      services.accounts.defaultLanguage(account.id),
    ]);
    return reply.page(
      'account/settings',
      {
        title: 'Settings',
        section: 'account',
        tab: 'settings',
        email: account.email,
        since: account.createdAt,
        hasPassword,
        otherSessions: Math.max(0, sessions - 1),
        errors: extra.errors ?? {},
        notice: extra.notice ?? null,
        error: extra.error ?? null,
        newEmail: extra.newEmail ?? '',
        minLength: PASSWORD_MIN_LENGTH,
        languageOptions: LANGUAGE_OPTIONS,
        defaultLanguage: language ?? '',
      },
      status,
    );
  }

  app.get('/settings', { schema: { hide: true, querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 40 })) }) } }, async (request, reply) =>
    renderSettings(request, reply, { notice: NOTICES[request.query.done ?? ''] ?? null }),
  );

  app.post('/settings/password', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const outcome = await services.auth.changePassword({
      accountId: account.id,
      email: account.email,
      current: request.body.current_password,
      next: request.body.new_password,
      keepSessionId: request.webSessionId!,
      now: new Date(),
    });
    if (outcome.kind === 'throttled') {
      reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)));
      const wait = formatWait(outcome.retryAfterMs);
      return renderSettings(request, reply, { errors: { current_password: `Too many wrong passwords were tried for this account. Try again in ${wait}.` } }, 429);
    }
    if (outcome.kind === 'invalid') return renderSettings(request, reply, { errors: firstErrors(outcome.errors) }, 422);
    // A new session id after a change of credentials, as after log-in.
    await reply.startWebSession(account);
    return reply.seeOther('/account/settings?done=password-changed');
  });

  app.post('/settings/report-language', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const outcome = await services.accounts.setDefaultLanguage(accountOf(request).id, request.body.default_language);
    if (outcome.kind === 'invalid') return renderSettings(request, reply, { errors: { default_language: outcome.message } }, 422);
    return reply.seeOther('/account/settings?done=language-saved');
  });

  app.post('/settings/email', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    const outcome = await services.auth.changeEmail({
      accountId: account.id,
      email: account.email,
      password: request.body.email_password,
      next: request.body.new_email,
      keepSessionId: request.webSessionId!,
      now: new Date(),
    });
    const newEmail = typeof request.body.new_email === 'string' ? request.body.new_email.slice(0, 254) : '';
    if (outcome.kind === 'throttled') {
      reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)));
      return renderSettings(request, reply, { newEmail, errors: { email_password: `Too many wrong passwords were tried for this account. Try again in ${formatWait(outcome.retryAfterMs)}.` } }, 429);
    }
    if (outcome.kind === 'invalid') return renderSettings(request, reply, { newEmail, errors: firstErrors(outcome.errors) }, 422);
    // A new session id after a change of credentials; the page's header shows the new address.
    await reply.startWebSession({ id: account.id, email: outcome.email });
    return reply.seeOther('/account/settings?done=email-changed');
  });

  app.post('/settings/delete', { schema: { hide: true, body: Form } }, async (request, reply) => {
    const account = accountOf(request);
    if (request.body.confirm !== 'delete') {
      return renderSettings(request, reply, { errors: { delete_confirm: 'Tick the box to confirm that you want the account deleted.' } }, 422);
    }
    let outcome;
    try {
      outcome = await services.accountDeletion.delete(account, request.body.delete_password, new Date());
    } catch (error) {
      // The plan could not be ended at the payment provider: nothing was deleted.
      if (!(error instanceof PaymentError)) throw error;
      request.log.error({ err: error.cause ?? error }, 'account deletion: plan not ended');
      return renderSettings(request, reply, { error: `${error.message} Your account is not deleted; try again in a moment.` }, 503);
    }
    if (outcome.kind === 'throttled') {
      reply.header('retry-after', String(Math.ceil(outcome.retryAfterMs / 1000)));
      return renderSettings(request, reply, { errors: { delete_password: `Too many wrong passwords were tried for this account. Try again in ${formatWait(outcome.retryAfterMs)}.` } }, 429);
    }
    if (outcome.kind === 'wrong-password') return renderSettings(request, reply, { errors: { delete_password: outcome.message } }, 422);
    // The session was ended with the others; the cookie goes too.
    await reply.endWebSession();
    return reply.seeOther('/?done=account-deleted');
  });

  app.post('/settings/sessions/end-others', { schema: { hide: true } }, async (request, reply) => {
    await services.sessions.endOthers(accountOf(request).id, request.webSessionId!);
    return reply.seeOther('/account/settings?done=sessions-ended');
  });
};

export default settingsRoutes;
