import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import fp from 'fastify-plugin';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveSession } from '../domain/web-session.ts';
import { SESSION_MAX_MS, type SessionService, hashSecret } from '../accounts/session-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in customer of a page request, or null. Set by the web-session plugin. */
    webSession: LiveSession | null;
    /** The raw session id from the cookie, when it names a live session. */
    webSessionId: string | null;
  }
  interface FastifyReply {
    /** Starts a session (a new id, whatever cookie came in) and sets its cookie. */
    startWebSession(account: { id: string; email: string }): Promise<void>;
    /** Ends the request's session and clears its cookie. */
    endWebSession(): Promise<void>;
    /** A CSRF token for a form of this page, bound to the session (or to "no session"). */
    csrfToken(): string;
    /**
     * Hands a value to the next page this session loads, across a redirect (post/redirect/get),
     * in a short-lived cookie encrypted and bound to the session: a new token's secret can then be
     * shown once on the page the form redirects to, without putting it in a URL or storing it.
     */
    setFlash(value: string): void;
  }
  interface FastifyRequest {
    /** The value a form of this session handed over (setFlash), once: reading it clears it. */
    takeFlash(reply: FastifyReply): string | null;
  }
}

export const SESSION_COOKIE = 'vh_session';
export const CSRF_COOKIE = 'vh_csrf';
export const FLASH_COOKIE = 'vh_flash';
/** Long enough for a redirect on a slow connection; short enough that a forgotten one soon expires. */
const FLASH_MAX_AGE_S = 120;

export interface WebSessionOptions {
  sessions: SessionService;
  /** COOKIE_SECRET, or null to use the one generated once and kept in the settings table. */
  configuredSecret: string | null;
  loadStoredSecret: () => Promise<string>;
  /** Path the cookies are scoped to (the base path of PUBLIC_BASE_URL, or /). */
  cookiePath: string;
  /** PUBLIC_BASE_URL is https: cookies are Secure whatever the hop to us was. */
  alwaysSecure: boolean;
}

/**
 * Cookies, form bodies, server-side sessions and CSRF protection for the pages of the personal
 * account. Registered inside the pages' own scope (fastify-plugin only lifts it to that scope's
 * parent, the pages plugin), so that the JSON API never parses cookies or form bodies and never
 * asks for a CSRF token.
 *
 * - Session cookie: HttpOnly, SameSite=Lax (so that the link in a reset mail and the return from
 *   Stripe's checkout arrive logged in), Secure behind TLS, signed with the cookie secret; it holds
 *   a random id whose SHA-256 is the session's key in the database.
 * - CSRF: @fastify/csrf-protection's double-submit cookie (signed) with the token in a hidden form
 *   field, the token HMAC-bound to the session, so that a token taken from one session (or planted
 *   with a cookie from a sibling domain) is refused in another. Every POST of the scope is checked.
 */
export default fp(
  async (app, options: WebSessionOptions) => {
    const secret = options.configuredSecret ?? (await options.loadStoredSecret());
    // Separate keys from one secret for the two uses, so that neither can stand in for the other.
    const derive = (purpose: string) => createHmac('sha256', secret).update(purpose).digest('base64url');
    const cookieSecret = derive('vinhistory cookie signing v1');
    const csrfKey = derive('vinhistory csrf binding v1');
    const flashKey = createHmac('sha256', secret).update('vinhistory flash encryption v1').digest();

    const secureFor = (request: FastifyRequest) => options.alwaysSecure || request.protocol === 'https';
    const cookieOptions = (request: FastifyRequest) => ({
      path: options.cookiePath,
      httpOnly: true,
      sameSite: 'lax' as const,
      secure: secureFor(request),
      signed: true,
    });

    await app.register(fastifyCookie, { secret: cookieSecret, hook: 'onRequest' });
    await app.register(fastifyFormbody, { bodyLimit: 16 * 1024 });
    await app.register(fastifyCsrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: options.cookiePath, httpOnly: true, sameSite: 'lax', signed: true },
      getUserInfo: (request: FastifyRequest) => csrfBinding(request),
      csrfOpts: { hmacKey: csrfKey },
    });

    const csrfBinding = (request: FastifyRequest) => (request.webSession ? `session:${request.webSession.idHash}` : 'anonymous');

    app.decorateRequest('webSession', null);
    app.decorateRequest('webSessionId', null);

    app.addHook('onRequest', async (request) => {
      const raw = request.cookies[SESSION_COOKIE];
      if (!raw) return;
      const unsigned = request.unsignCookie(raw);
      if (!unsigned.valid || !unsigned.value) return;
      const session = await options.sessions.resolve(unsigned.value);
      if (session) {
        request.webSession = session;
        request.webSessionId = unsigned.value;
      }
    });

    app.decorateReply('startWebSession', async function (this: FastifyReply, account: { id: string; email: string }) {
      // The old session (if any) ends: log-in always gets a new id, never one the browser brought.
      if (this.request.webSessionId) await options.sessions.end(this.request.webSessionId);
      const now = new Date();
      const { id, expiresAt } = await options.sessions.start(account.id, now);
      this.setCookie(SESSION_COOKIE, id, { ...cookieOptions(this.request), maxAge: Math.floor(SESSION_MAX_MS / 1000) });
      this.request.webSessionId = id;
      this.request.webSession = {
        idHash: hashSecret(id),
        accountId: account.id,
        email: account.email,
        createdAt: now.toISOString(),
        lastSeenAt: now.toISOString(),
        expiresAt: expiresAt.toISOString(),
      };
    });

    app.decorateReply('endWebSession', async function (this: FastifyReply) {
      if (this.request.webSessionId) await options.sessions.end(this.request.webSessionId);
      this.request.webSession = null;
      this.request.webSessionId = null;
      this.clearCookie(SESSION_COOKIE, { path: options.cookiePath });
    });

    // AES-256-GCM with the session's id hash as additional data: the cookie opens only in the
    // session that set it, is unreadable to anyone holding it, and any change to it is refused.
    const flashBinding = (request: FastifyRequest) => Buffer.from(request.webSession ? `session:${request.webSession.idHash}` : 'anonymous');
    app.decorateReply('setFlash', function (this: FastifyReply, value: string) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', flashKey, iv);
      cipher.setAAD(flashBinding(this.request));
      const sealed = Buffer.concat([cipher.update(JSON.stringify({ v: value, t: Date.now() }), 'utf8'), cipher.final()]);
      const cookie = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
      this.setCookie(FLASH_COOKIE, cookie, { ...cookieOptions(this.request), signed: false, sameSite: 'strict', maxAge: FLASH_MAX_AGE_S });
    });
    app.decorateRequest('takeFlash', function (this: FastifyRequest, reply: FastifyReply) {
      const raw = this.cookies[FLASH_COOKIE];
      if (!raw) return null;
      reply.clearCookie(FLASH_COOKIE, { path: options.cookiePath });
      try {
        const bytes = Buffer.from(raw, 'base64url');
        const decipher = createDecipheriv('aes-256-gcm', flashKey, bytes.subarray(0, 12));
        decipher.setAAD(flashBinding(this));
        decipher.setAuthTag(bytes.subarray(12, 28));
        const opened = JSON.parse(Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8')) as { v: unknown; t: unknown };
        if (typeof opened.v !== 'string' || typeof opened.t !== 'number' || Date.now() - opened.t > FLASH_MAX_AGE_S * 1000) return null;
        return opened.v;
      } catch {
        return null;
      }
    });

    app.decorateReply('csrfToken', function (this: FastifyReply) {
      return this.generateCsrf({ userInfo: csrfBinding(this.request), ...cookieOptions(this.request) });
    });

    // Every state-changing request of the pages carries the form's token; the body is parsed by
    // then (preHandler), as the token travels in it.
    app.addHook('preHandler', (request, reply, done) => {
      if (request.method === 'GET' || request.method === 'HEAD') return done();
      app.csrfProtection(request, reply, done);
    });
  },
  { name: 'web-session', dependencies: ['services'] },
);
