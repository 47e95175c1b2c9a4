import { Type } from '@sinclair/typebox';
import { ApiError, validationError } from '../../errors.ts';
import { ACCOUNT_STATUSES, AUDIT_ACTIONS } from '../../domain/operations.ts';
import type { Actor, Outcome } from '../../operations/operator-service.ts';
import { DEFAULT_PAGE, MAX_PAGE } from '../../operations/operator-service.ts';
import type { OperatorPrincipal } from '../../domain/principal.ts';
import { errorRef, wwwAuthenticateHeader } from '../api/schemas.ts';

const nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const AdminUsageSchema = Type.Object(
  {
    used: Type.Integer({ description: 'Searches counted in the current billing period.' }),
    quota: Type.Integer({ description: "The plan's monthly quota." }),
    period_start: time(),
    resets_at: time(),
  },
  { $id: 'AdminUsage', title: 'AdminUsage' },
);

const accountFields = {
  id: Type.String({ description: 'The account id (`acct_...`).' }),
  email: Type.String({ description: 'Its address (for a deleted account, the address it had).' }),
  status: Type.Union(ACCOUNT_STATUSES.map((status) => Type.Literal(status)), { description: '`active`: a subscription in force; `lapsed`: had one; `none`: never had one; `deleted`: deleted by the customer.' }),
  created_at: time(),
  deleted_at: nullable(time()),
  plan: nullable(Type.String({ description: 'The plan in force.' })),
  billing: Type.Union([Type.Literal('monthly'), Type.Literal('annual'), Type.Null()]),
  subscription_id: nullable(Type.String()),
  started_at: nullable(time()),
  ends_at: nullable(time('When access ends; null: until ended.')),
  usage: Type.Union([Type.Ref(AdminUsageSchema), Type.Null()], { description: "This period's use; null without a plan in force." }),
};

export const AdminAccountSchema = Type.Object(accountFields, { $id: 'AdminAccount', title: 'AdminAccount' });

export const AdminTokenSchema = Type.Object(
  {
    id: Type.String({ description: 'The token id (`tok_...`): what `revoke` takes.' }),
    account_id: Type.String(),
    name: Type.String(),
    kind: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    hint: Type.String({ description: 'The first characters of the secret; the secret itself is never shown again.' }),
    created_at: time(),
    last_used_at: nullable(time()),
    revoked_at: nullable(time()),
    expires_at: nullable(time('Set when the token was rotated: it works until then.')),
  },
  { $id: 'AdminToken', title: 'AdminToken' },
);

export const AdminInvoiceSchema = Type.Object(
  {
    id: Type.String({ description: 'The invoice id (`inv_...`).' }),
    reference: Type.String({ description: 'What the customer quotes on a transfer (`VH-XXXX-XXXX`).' }),
    account_id: Type.String(),
    email: Type.Optional(Type.String()),
    provider: Type.Union([Type.Literal('manual'), Type.Literal('stripe')]),
    kind: Type.Union([Type.Literal('subscribe'), Type.Literal('renew'), Type.Literal('upgrade')]),
    plan: Type.String(),
    billing: Type.Union([Type.Literal('monthly'), Type.Literal('annual')]),
    amount_cents: Type.Integer(),
    currency: Type.String(),
    status: Type.Union([Type.Literal('open'), Type.Literal('paid'), Type.Literal('void')]),
    created_at: time(),
    paid_at: nullable(time()),
    voided_at: nullable(time()),
  },
  { $id: 'AdminInvoice', title: 'AdminInvoice' },
);

export const AdminAccountDetailsSchema = Type.Object(
  {
    ...accountFields,
    provider: Type.Union([Type.Literal('operator'), Type.Literal('manual'), Type.Literal('stripe'), Type.Null()], { description: 'Who bills the plan in force: arranged with the operator, manual invoices, or Stripe.' }),
    paid_through: nullable(time()),
    cancel_at_period_end: Type.Boolean(),
    tokens: Type.Array(Type.Ref(AdminTokenSchema)),
    invoices: Type.Array(Type.Ref(AdminInvoiceSchema), { description: 'The latest 20.' }),
  },
  { $id: 'AdminAccountDetails', title: 'AdminAccountDetails' },
);

export const AdminAuditEntrySchema = Type.Object(
  {
    id: Type.String({ description: 'The entry id (`aud_...`), sorted by time.' }),
    at: time(),
    actor: Type.String({ description: 'Who: `token:<operator token name>` or `cli:<os user>`.' }),
    action: Type.Union(AUDIT_ACTIONS.map((action) => Type.Literal(action))),
    target: Type.String({ description: 'What was changed: an account, token or invoice id.' }),
    details: Type.Record(Type.String(), Type.Unknown(), { description: 'What changed; never a secret.' }),
  },
  { $id: 'AdminAuditEntry', title: 'AdminAuditEntry' },
);

export const ADMIN_SCHEMAS = [AdminUsageSchema, AdminAccountSchema, AdminTokenSchema, AdminInvoiceSchema, AdminAccountDetailsSchema, AdminAuditEntrySchema];

/** Every admin route answers these besides its own. */
export const adminErrorResponses = {
  401: errorRef(
    'UNAUTHENTICATED', 'No operator token, or an unknown or revoked one (a customer token is not an operator token). Body is exactly {"message":"Unauthenticated."}.',
    wwwAuthenticateHeader('vinhistory-admin'),
  ),
  503: errorRef('DATABASE_BUSY', 'The database is busy; nothing was changed. Try again after Retry-After.', { 'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying.' } }),
  '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
};

export const adminRoute = { tags: ['Admin'], security: [{ operatorToken: [] }] };

/** Query strings are not coerced (the app's Ajv has coerceTypes off): a page size is digits, checked by pageLimit. */
export const pageQueryFields = {
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: `Items per page, 1 to ${MAX_PAGE} (${DEFAULT_PAGE} unless given).` })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The `next_cursor` of the previous page.' })),
};

export function pageLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE;
  const limit = Number(value);
  if (limit < 1 || limit > MAX_PAGE) throw validationError('limit', [`limit must be a whole number from 1 to ${MAX_PAGE}.`]);
  return limit;
}

export const pageOf = (item: ReturnType<typeof Type.Ref>, key: string, description: string) =>
  Type.Object({
    [key]: Type.Array(item),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass it as `cursor` for the next page; null on the last.' }),
  }, { description });

/** The audit log's "who" for a request: the operator token's name. */
export function requestActor(operator: OperatorPrincipal | null): Actor {
  // The route's onRequest hook has refused a request without one.
  return { name: `token:${operator?.name ?? 'unknown'}` };
}

/** A service outcome, or the refusal as this API's error. */
export function answer<T>(outcome: Outcome<T>): T {
  switch (outcome.kind) {
    case 'done':
      return outcome;
    case 'not-found':
      throw new ApiError('NOT_FOUND', outcome.message);
    case 'refused':
      throw new ApiError('OPERATION_REFUSED', outcome.message);
    case 'invalid':
      throw validationError(outcome.field, [outcome.message]);
  }
}
