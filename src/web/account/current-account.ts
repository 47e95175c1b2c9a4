import type { FastifyRequest } from 'fastify';
import type { Account } from '../../domain/account.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in customer's account (account pages only). */
    account: Account | null;
  }
}

/** The logged-in account; the scope's guard has made sure there is one. */
export function accountOf(request: FastifyRequest): Account {
  if (!request.account) throw new Error('account page reached without a logged-in account');
  return request.account;
}
