import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validationError } from '../../errors.ts';
import { ACCOUNT_STATUSES } from '../../domain/operations.ts';
import { accountDetailsJson, accountJson, invoiceJson, tokenJson } from '../../operations/json.ts';
import operatorAuth from '../plugins/operator-auth.ts';
import { errorRef, jsonBodyErrorResponses } from '../api/schemas.ts';
import {
  AdminAccountDetailsSchema,
  AdminAccountSchema,
  AdminInvoiceSchema,
  AdminTokenSchema,
  ADMIN_SCHEMAS,
  adminErrorResponses,
  adminRoute,
  answer,
  pageLimit,
  pageOf,
  pageQueryFields,
  requestActor,
} from './schemas.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_EXTENSION_DAYS = 3660;
const PLAN_CODE = '^[a-z0-9][a-z0-9_-]{0,63}$';

const AccountParams = Type.Object({
  account: Type.String({ minLength: 1, maxLength: 254, description: 'The account id (`acct_...`) or its email address.' }),
});

const notFound = errorRef('NOT_FOUND', 'No such account (or token, or invoice).');
const refused = errorRef('OPERATION_REFUSED', "The billing rules refuse the change as asked (the message says why and what to do); nothing was changed.");
const invalid = errorRef('VALIDATION_FAILED', 'A field is missing or wrong; `errors` names it.');

/**
 * The operators' customer operations over HTTP (docs/operators.md): the same OperatorService as
 * the CLI, each change recorded in the audit log with the operator token's name.
 */
const adminAccountsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(operatorAuth);
  for (const schema of ADMIN_SCHEMAS) if (!app.getSchema(schema.$id!)) app.addSchema(schema);
  const { operations } = app.services;

  app.get(
    '/admin/v1/accounts',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'List and find accounts',
        description: "Newest first, with the plan in force and this billing period's use. Filter by a part of the email, the plan in force, or the status; page with `cursor`.",
        operationId: 'adminListAccounts',
        querystring: Type.Object({
          email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'A part of the address (case is ignored).' })),
          plan: Type.Optional(Type.String({ pattern: PLAN_CODE, description: 'The plan in force.' })),
          status: Type.Optional(Type.Union(ACCOUNT_STATUSES.map((status) => Type.Literal(status)))),
          ...pageQueryFields,
        }),
        response: {
          200: pageOf(Type.Ref(AdminAccountSchema), 'accounts', 'One page of accounts.'),
          422: invalid,
          ...adminErrorResponses,
        },
      },
    },
    async (request) => {
      const { email, plan, status, cursor } = request.query;
      const { page } = answer(
        await operations.listAccounts({
          limit: pageLimit(request.query.limit),
          ...(email !== undefined ? { email } : {}),
          ...(plan !== undefined ? { plan } : {}),
          ...(status !== undefined ? { status } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        }),
      );
      return { accounts: page.items.map(accountJson), next_cursor: page.nextCursor };
    },
  );

  app.get(
    '/admin/v1/accounts/:account',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Show one account',
        description: 'Its plan and who bills it, this period\'s use, its tokens (hints only) and its latest invoices. A deleted account is found by its id.',
        operationId: 'adminShowAccount',
        params: AccountParams,
        response: { 200: Type.Ref(AdminAccountDetailsSchema, { description: "The account with its subscription, this period's use, its tokens (hints only) and its latest invoices." }), 404: notFound, ...adminErrorResponses },
      },
    },
    async (request) => accountDetailsJson(answer(await operations.showAccount(request.params.account)).account),
  );

  app.post(
    '/admin/v1/accounts/:account/subscription/change',
    {
      onRequest: app.authenticateOperator,
      bodyLimit: 4096,
      schema: {
        ...adminRoute,
        summary: 'Change the plan or billing period now',
        description:
          'Takes effect at once (docs/operators.md). Without a subscription in force, one arranged with the operator starts now. Arranged with the operator: changed in place, nothing invoiced. ' +
          'Billed by manual invoices: an upgrade issues the prorated upgrade invoice (open), a downgrade applies with nothing refunded. Billed by Stripe: an upgrade is prorated by Stripe, a downgrade is refused. ' +
          'A paid term keeps its billing period (409).',
        operationId: 'adminChangeSubscription',
        params: AccountParams,
        body: Type.Object(
          {
            plan: Type.String({ pattern: PLAN_CODE, description: 'The plan code.' }),
            billing: Type.Optional(Type.Union([Type.Literal('monthly'), Type.Literal('annual')], { description: 'Default: the current one (monthly for a new subscription).' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            result: Type.Union([Type.Literal('started'), Type.Literal('changed')]),
            account: Type.Ref(AdminAccountSchema),
            invoice: Type.Union([Type.Ref(AdminInvoiceSchema), Type.Null()], { description: 'What the customer is asked to pay for the change, if anything.' }),
          }, { description: 'The plan changed at once (or started, where none was in force).' }),
          404: notFound,
          409: refused,
          422: invalid,
          ...jsonBodyErrorResponses,
          ...adminErrorResponses,
        },
      },
    },
    async (request) => {
      const { change } = answer(await operations.changePlan(requestActor(request.operator), request.params.account, request.body.plan, request.body.billing));
      const { account } = answer(await operations.showAccount(change.subscription.accountId));
      return { result: change.kind, account: accountJson(account), invoice: change.kind === 'changed' && change.invoice ? invoiceJson(change.invoice) : null };
    },
  );

  app.post(
    '/admin/v1/accounts/:account/subscription/extend',
    {
      onRequest: app.authenticateOperator,
      bodyLimit: 4096,
      schema: {
        ...adminRoute,
        summary: 'Extend the subscription in force',
        description: 'Moves its end to `until`, or `days` past the current end; nothing is invoiced. A subscription without an end date, or billed by Stripe, is refused (409).',
        operationId: 'adminExtendSubscription',
        params: AccountParams,
        body: Type.Object(
          {
            until: Type.Optional(Type.String({ format: 'date-time', description: 'The new end.' })),
            days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EXTENSION_DAYS, description: 'Days to add to the current end.' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ subscription_id: Type.String(), ends_at: Type.String({ format: 'date-time' }), previous_ends_at: Type.String({ format: 'date-time' }) }, { description: 'The subscription extended.' }),
          404: notFound,
          409: refused,
          422: invalid,
          ...jsonBodyErrorResponses,
          ...adminErrorResponses,
        },
      },
    },
    async (request) => {
      const { until, days } = request.body;
      if ((until === undefined) === (days === undefined)) throw validationError('body', ['Give either until or days.']);
      let end: Date;
      if (until !== undefined) end = new Date(until);
      else {
        const { account } = answer(await operations.showAccount(request.params.account));
        const current = account.subscription?.endsAt;
        // Without a current end the service gives the reason.
        end = current ? new Date(Date.parse(current) + days! * DAY_MS) : new Date(Date.now() + days! * DAY_MS);
      }
      const { subscription, previousEnd } = answer(await operations.extend(requestActor(request.operator), request.params.account, end));
      return { subscription_id: subscription.id, ends_at: subscription.endsAt!, previous_ends_at: previousEnd };
    },
  );

  app.post(
    '/admin/v1/accounts/:account/subscription/end',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'End the subscription now',
        description: "Stops its billing at the provider (Stripe cancels it; unpaid manual invoices become void), then ends it here: the account's tokens answer 402 from the next request.",
        operationId: 'adminEndSubscription',
        params: AccountParams,
        response: {
          200: Type.Object({ ended_subscription_id: Type.Union([Type.String(), Type.Null()]), ended: Type.Integer({ description: 'Subscriptions ended (in force and scheduled).' }), at: Type.String({ format: 'date-time' }) }, { description: 'The subscription ended now.' }),
          404: notFound,
          409: refused,
          ...adminErrorResponses,
        },
      },
    },
    async (request) => {
      const { ended, count, at } = answer(await operations.end(requestActor(request.operator), request.params.account));
      return { ended_subscription_id: ended?.id ?? null, ended: count, at: at.toISOString() };
    },
  );

  app.get(
    '/admin/v1/accounts/:account/tokens',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: "List an account's API tokens",
        description: 'Newest first, with hints (the first characters); never a secret.',
        operationId: 'adminListTokens',
        params: AccountParams,
        response: { 200: Type.Object({ tokens: Type.Array(Type.Ref(AdminTokenSchema)) }, { description: "The account's tokens, newest first: hints only, never a secret." }), 404: notFound, ...adminErrorResponses },
      },
    },
    async (request) => ({ tokens: answer(await operations.listTokens(request.params.account)).tokens.map(tokenJson) }),
  );

  app.post(
    '/admin/v1/tokens/:token/revoke',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Revoke an API token',
        description: 'At once: its next request answers 401.',
        operationId: 'adminRevokeToken',
        params: Type.Object({ token: Type.String({ pattern: '^tok_[0-9a-z]{16}$', description: 'The token id (`tok_...`).' }) }),
        response: { 200: Type.Ref(AdminTokenSchema, { description: 'The token, now revoked.' }), 404: notFound, 409: errorRef('OPERATION_REFUSED', 'The token is already revoked.'), 422: invalid, ...adminErrorResponses },
      },
    },
    async (request) => {
      const { token } = answer(await operations.revokeToken(requestActor(request.operator), request.params.token));
      return tokenJson(token);
    },
  );
};

export default adminAccountsRoutes;
