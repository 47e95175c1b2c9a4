import type { Account } from '../domain/account.ts';
import type { ClaimedMail } from '../domain/mail.ts';
import type { Db } from '../storage/database.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { inTransaction } from '../storage/transaction.ts';
import type { PreparedMail } from './mail/mail-delivery-worker.ts';
import type { MailQueue } from './mail/mail-queue.ts';
import { passwordResetMail, withResetLink } from './mail/messages.ts';
import type { PasswordHasher } from './password-hasher.ts';
import { hashSecret, newSecret, type SessionService } from './session-service.ts';
import {
  accountSubject,
  addressSubject,
  emailSubject,
  LOGIN_PER_ADDRESS,
  LOGIN_PER_EMAIL,
  PASSWORD_CHECK_PER_ACCOUNT,
  RESET_PER_ADDRESS,
  RESET_PER_EMAIL,
  SIGNUP_PER_ADDRESS,
  Throttle,
} from './throttle.ts';
import { addError, checkEmail, checkNewPassword, type FieldErrors } from './validation.ts';

/** A reset link works for an hour, once. */
export const RESET_LINK_TTL_MS = 60 * 60 * 1000;

export type AuthOutcome =
  | { kind: 'ok'; account: Account }
  | { kind: 'invalid'; errors: FieldErrors }
  | { kind: 'throttled'; retryAfterMs: number };

export type PasswordChangeOutcome =
  | { kind: 'changed' }
  | { kind: 'invalid'; errors: FieldErrors }
  | { kind: 'throttled'; retryAfterMs: number };

export interface AccountAuthDeps {
  db: Db;
  repos: Repositories;
  hasher: PasswordHasher;
  sessions: SessionService;
  /** Reset mail is queued here and sent after the answer by the delivery worker. */
  mail: MailQueue;
  publicBaseUrl: string;
  /** Where the reset page lives, under PUBLIC_BASE_URL. */
  resetPath: string;
}

const WRONG_CREDENTIALS = 'That email and password do not match an account. Check both, or reset your password.';

/**
 * Sign-up, log-in, password change and reset. Answers never tell whether an email has an account,
 * except sign-up (which must say that the address is taken); log-in spends the same time either way.
 */
export class AccountAuthService {
  private readonly throttle: Throttle;

  constructor(private readonly deps: AccountAuthDeps) {
    this.throttle = new Throttle(deps.repos.authAttempts);
  }

  /** `acceptedTerms`: the customer ticked "I accept the Terms of Service"; its time is stored with the account. */
  async signUp(input: { email: unknown; password: unknown; acceptedTerms: boolean; ip: string; now: Date }): Promise<AuthOutcome> {
    const errors: FieldErrors = {};
    const email = checkEmail(input.email);
    if ('error' in email) addError(errors, 'email', email.error);
    const passwordError = checkNewPassword(input.password, 'email' in email ? email.email : null);
    if (passwordError) addError(errors, 'password', passwordError);
    if (!input.acceptedTerms) addError(errors, 'terms', 'Accept the Terms of Service to create an account.');
    if (Object.keys(errors).length > 0 || !('email' in email)) return { kind: 'invalid', errors };

    // The place is taken before the hash is made: sign-ups arriving together count each other.
    const reservation = await this.throttle.reserve([{ rule: SIGNUP_PER_ADDRESS, subject: addressSubject(input.ip) }], input.now);
    if (reservation.kind === 'throttled') return reservation;
    let made = false;
    try {
      const taken: AuthOutcome = { kind: 'invalid', errors: { email: ['An account with this email already exists. Log in, or reset your password.'] } };
      if (await this.deps.repos.accounts.findByEmail(email.email)) return taken;
      const hash = await this.deps.hasher.hash(input.password as string);
      try {
        const account = await inTransaction(this.deps.db, async (repos) => {
          const created = await repos.accounts.create(email.email, input.now, input.now);
          await repos.passwords.set(created.id, hash, input.now);
          return created;
        });
        made = true;
        return { kind: 'ok', account };
      } catch (error) {
        // Two sign-ups with one address at once: the other one won.
        if (this.deps.db.isUniqueViolation(error)) return taken;
        throw error;
      }
    } finally {
      // The rule counts accounts made: a refused or failed sign-up gives its place back.
      if (!made) await this.throttle.release(reservation);
    }
  }

  async logIn(input: { email: unknown; password: unknown; ip: string; now: Date }): Promise<AuthOutcome> {
    const email = checkEmail(input.email);
    if ('error' in email) return { kind: 'invalid', errors: { email: [email.error] } };
    if (typeof input.password !== 'string' || input.password === '') return { kind: 'invalid', errors: { password: ['Enter your password.'] } };
    const password = input.password;

    const { now } = input;
    const byEmail = emailSubject(email.email);
    const byAddress = addressSubject(input.ip);
    // Counted as a failure before the password is even looked at, under both rules at once:
    // guesses arriving together count each other, and over the limit none is checked, the right
    // password included. A guess that proves right gives its place back.
    const reservation = await this.throttle.reserve(
      [
        { rule: LOGIN_PER_EMAIL, subject: byEmail },
        { rule: LOGIN_PER_ADDRESS, subject: byAddress },
      ],
      now,
    );
    if (reservation.kind === 'throttled') return reservation;

    const account = await this.deps.repos.accounts.findByEmail(email.email);
    const stored = account ? await this.deps.repos.passwords.get(account.id) : undefined;
    let ok = false;
    if (stored === undefined) await this.deps.hasher.burn(password);
    else ok = await this.deps.hasher.verify(password, stored);

    if (!ok || !account) {
      await this.throttle.prune(now);
      return { kind: 'invalid', errors: { form: [WRONG_CREDENTIALS] } };
    }
    // The owner is in: the email's count of failures ends (as before this change), with it the
    // places of guesses still in flight, which are then ordered before this log-in.
    await this.throttle.release(reservation);
    await this.throttle.clear(LOGIN_PER_EMAIL, byEmail);
    if (this.deps.hasher.needsRehash(stored!)) await this.deps.repos.passwords.set(account.id, await this.deps.hasher.hash(password), now);
    return { kind: 'ok', account };
  }

  /** False for an account the operator's CLI made, until its owner sets a password by a reset link. */
  async hasPassword(accountId: string): Promise<boolean> {
    return (await this.deps.repos.passwords.get(accountId)) !== undefined;
  }

  /**
   * Changes the password and logs out every other browser of the account. The current password is
   * checked under a per-account limit, its place reserved before the check as at log-in: a stolen
   * session cannot guess it at scrypt speed. A right one ends the count, its own place included.
   */
  async changePassword(input: { accountId: string; email: string; current: unknown; next: unknown; keepSessionId: string; now: Date }): Promise<PasswordChangeOutcome> {
    const errors: FieldErrors = {};
    if (typeof input.current !== 'string' || input.current === '') addError(errors, 'current_password', 'Enter your current password.');
    else {
      const byAccount = accountSubject(input.accountId);
      const reservation = await this.throttle.reserve([{ rule: PASSWORD_CHECK_PER_ACCOUNT, subject: byAccount }], input.now);
      if (reservation.kind === 'throttled') return reservation;
      const stored = await this.deps.repos.passwords.get(input.accountId);
      if (stored === undefined || !(await this.deps.hasher.verify(input.current, stored))) addError(errors, 'current_password', 'That is not your current password.');
      else await this.throttle.clear(PASSWORD_CHECK_PER_ACCOUNT, byAccount);
    }
    const nextError = checkNewPassword(input.next, input.email);
    if (nextError) addError(errors, 'new_password', nextError);
    if (Object.keys(errors).length > 0) return { kind: 'invalid', errors };

    await this.deps.repos.passwords.set(input.accountId, await this.deps.hasher.hash(input.next as string), input.now);
    await this.deps.repos.passwordResets.invalidateForAccount(input.accountId, input.now);
    await this.deps.sessions.endOthers(input.accountId, input.keepSessionId);
    return { kind: 'changed' };
  }

  /**
   * Moves the account to another email address, after the current password (under the same
   * per-account limit as a password change). Other browsers are logged out, as after a password
   * change: whoever knew the old address and session no longer holds the account.
   */
  async changeEmail(input: { accountId: string; email: string; password: unknown; next: unknown; keepSessionId: string; now: Date }): Promise<{ kind: 'changed'; email: string } | { kind: 'invalid'; errors: FieldErrors } | { kind: 'throttled'; retryAfterMs: number }> {
    const errors: FieldErrors = {};
    const next = checkEmail(input.next);
    if ('error' in next) addError(errors, 'new_email', next.error);
    else if (next.email === input.email) addError(errors, 'new_email', 'That is already your email address.');
    const checked = await this.checkCurrentPassword(input.accountId, input.password, input.now);
    if (checked.kind === 'throttled') return checked;
    if (checked.kind === 'wrong') addError(errors, 'email_password', checked.message);
    if (Object.keys(errors).length > 0 || !('email' in next)) return { kind: 'invalid', errors };
    const taken: { kind: 'invalid'; errors: FieldErrors } = { kind: 'invalid', errors: { new_email: ['Another account uses that address.'] } };
    if (await this.deps.repos.accounts.findByEmail(next.email)) return taken;
    try {
      await this.deps.repos.accounts.changeEmail(input.accountId, next.email);
    } catch (error) {
      if (this.deps.db.isUniqueViolation(error)) return taken;
      throw error;
    }
    // A reset link mailed to the old address must not open the account any more.
    await this.deps.repos.passwordResets.invalidateForAccount(input.accountId, input.now);
    await this.deps.sessions.endOthers(input.accountId, input.keepSessionId);
    return { kind: 'changed', email: next.email };
  }

  /** The current password, checked under the per-account limit (its place reserved first, as at log-in). */
  async checkCurrentPassword(accountId: string, password: unknown, now: Date): Promise<{ kind: 'ok' } | { kind: 'wrong'; message: string } | { kind: 'throttled'; retryAfterMs: number }> {
    if (typeof password !== 'string' || password === '') return { kind: 'wrong', message: 'Enter your current password.' };
    const byAccount = accountSubject(accountId);
    const reservation = await this.throttle.reserve([{ rule: PASSWORD_CHECK_PER_ACCOUNT, subject: byAccount }], now);
    if (reservation.kind === 'throttled') return reservation;
    const stored = await this.deps.repos.passwords.get(accountId);
    if (stored === undefined || !(await this.deps.hasher.verify(password, stored))) return { kind: 'wrong', message: 'That is not your current password.' };
    await this.throttle.clear(PASSWORD_CHECK_PER_ACCOUNT, byAccount);
    return { kind: 'ok' };
  }

  /**
   * Queues a reset mail for the address, whether or not it has an account: the request does the
   * same work either way (two throttle steps and one insert), so neither its answer nor its time
   * tells whether the address is known, and it never waits for SMTP. The delivery worker finds the
   * account at send time (`prepareResetMail`) and sends nothing when there is none. Only a flood
   * from one network address is refused openly.
   */
  async requestReset(input: { email: unknown; ip: string; now: Date }): Promise<{ kind: 'done' } | { kind: 'invalid'; errors: FieldErrors } | { kind: 'throttled'; retryAfterMs: number }> {
    const email = checkEmail(input.email);
    if ('error' in email) return { kind: 'invalid', errors: { email: [email.error] } };
    const { now } = input;
    // Each request keeps its place, whatever follows: the rules count requests, not mails sent.
    const byAddress = addressSubject(input.ip);
    const forAddress = await this.throttle.reserve([{ rule: RESET_PER_ADDRESS, subject: byAddress }], now);
    if (forAddress.kind === 'throttled') return forAddress;

    const byEmail = emailSubject(email.email);
    if ((await this.throttle.reserve([{ rule: RESET_PER_EMAIL, subject: byEmail }], now)).kind === 'throttled') return { kind: 'done' };

    await this.deps.mail.enqueue(passwordResetMail({ to: email.email, validMinutes: RESET_LINK_TTL_MS / 60_000 }), now);
    return { kind: 'done' };
  }

  /**
   * Makes a queued reset mail ready to send, at send time: the link's secret is made now (its hour
   * runs from the sending) and stored only as its hash, so the queue never holds it. An address
   * with no account (any more) gets no mail.
   */
  async prepareResetMail(mail: ClaimedMail, now: Date): Promise<PreparedMail> {
    const account = await this.deps.repos.accounts.findByEmail(mail.recipient);
    if (!account) return { kind: 'skip', reason: 'no account has this address' };
    await this.deps.repos.passwordResets.deleteExpired(now);
    const token = newSecret();
    await this.deps.repos.passwordResets.create({
      tokenHash: hashSecret(token),
      accountId: account.id,
      now,
      expiresAt: new Date(now.getTime() + RESET_LINK_TTL_MS),
    });
    const encoded = encodeURIComponent(token);
    const link = `${this.deps.publicBaseUrl}${this.deps.resetPath}?token=${encoded}`;
    return {
      kind: 'send',
      message: { to: account.email, subject: mail.subject, text: withResetLink(mail.body, link) },
      secrets: [token, encoded],
      logContext: { account: account.id },
    };
  }

  /** The email a live reset link is for, or null (unknown, used or expired). */
  async resetLinkEmail(token: unknown, now: Date): Promise<string | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) return null;
    return (await this.deps.repos.passwordResets.findLive(hashSecret(token), now))?.email ?? null;
  }

  /**
   * Sets a new password through a reset link, which is used up. Every session of the account ends
   * (whoever reset it may be the owner locking a thief out), and log-in throttling for the email
   * is lifted.
   */
  async resetPassword(input: { token: unknown; password: unknown; now: Date }): Promise<{ kind: 'ok'; account: Account } | { kind: 'invalid'; errors: FieldErrors } | { kind: 'expired' }> {
    if (typeof input.token !== 'string' || input.token.length === 0 || input.token.length > 200) return { kind: 'expired' };
    const tokenHash = hashSecret(input.token);
    const live = await this.deps.repos.passwordResets.findLive(tokenHash, input.now);
    if (!live) return { kind: 'expired' };
    const error = checkNewPassword(input.password, live.email);
    if (error) return { kind: 'invalid', errors: { password: [error] } };
    const hash = await this.deps.hasher.hash(input.password as string);
    if (!(await this.deps.repos.passwordResets.consume(tokenHash, input.now))) return { kind: 'expired' };
    await this.deps.repos.passwords.set(live.accountId, hash, input.now);
    await this.deps.repos.passwordResets.invalidateForAccount(live.accountId, input.now);
    await this.deps.sessions.endAll(live.accountId);
    await this.throttle.clear(LOGIN_PER_EMAIL, emailSubject(live.email));
    const account = await this.deps.repos.accounts.findById(live.accountId);
    if (!account) return { kind: 'expired' };
    return { kind: 'ok', account };
  }
}
