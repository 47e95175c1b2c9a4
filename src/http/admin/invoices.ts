import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { auditJson, invoiceJson } from '../../operations/json.ts';
import operatorAuth from '../plugins/operator-auth.ts';
import { errorRef } from '../api/schemas.ts';
import { AdminAuditEntrySchema, AdminInvoiceSchema, ADMIN_SCHEMAS, adminErrorResponses, adminRoute, answer, pageLimit, pageOf, pageQueryFields, requestActor } from './schemas.ts';

const InvoiceParams = Type.Object({
  invoice: Type.String({ minLength: 1, maxLength: 64, description: 'The invoice id (`inv_...`) or the reference the customer quoted (`VH-XXXX-XXXX`).' }),
});
const invalid = errorRef('VALIDATION_FAILED', 'A field is wrong; `errors` names it.');

/** Invoices and the audit log for operators: the same OperatorService as `vinhistory invoices` and `vinhistory audit`. */
const adminInvoicesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(operatorAuth);
  for (const schema of ADMIN_SCHEMAS) if (!app.getSchema(schema.$id!)) app.addSchema(schema);
  const { operations } = app.services;

  app.get(
    '/admin/v1/invoices',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'List invoices',
        description: "Newest first, with the customer's email; filter by the account's email and the status.",
        operationId: 'adminListInvoices',
        querystring: Type.Object({
          email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: "The account's email address (exactly)." })),
          status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('paid'), Type.Literal('void')])),
          ...pageQueryFields,
        }),
        response: { 200: pageOf(Type.Ref(AdminInvoiceSchema), 'invoices', 'One page of invoices.'), 422: invalid, ...adminErrorResponses },
      },
    },
    async (request) => {
      const { email, status, cursor } = request.query;
      const { page } = answer(
        await operations.listInvoices({
          limit: pageLimit(request.query.limit),
          ...(email !== undefined ? { email } : {}),
          ...(status !== undefined ? { status } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        }),
      );
      return { invoices: page.items.map(invoiceJson), next_cursor: page.nextCursor };
    },
  );

  app.post(
    '/admin/v1/invoices/:invoice/pay',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Mark a manual invoice paid',
        description: 'Records the payment and applies it at once (starts, renews or upgrades the plan), as `vinhistory invoices pay` does.',
        operationId: 'adminPayInvoice',
        params: InvoiceParams,
        response: {
          200: Type.Object({ invoice: Type.Ref(AdminInvoiceSchema), summary: Type.String({ description: 'What paying it did to the subscription.' }) }, { description: 'The invoice, now paid.' }),
          404: errorRef('NOT_FOUND', 'No invoice with that id or reference.'),
          409: errorRef('OPERATION_REFUSED', 'It is paid already, void, paid through Stripe, or can no longer apply (the message says which).'),
          ...adminErrorResponses,
        },
      },
    },
    async (request) => {
      const { settlement } = answer(await operations.payInvoice(requestActor(request.operator), request.params.invoice));
      return { invoice: invoiceJson(settlement.invoice), summary: settlement.summary };
    },
  );

  app.post(
    '/admin/v1/invoices/:invoice/void',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'Void an open invoice',
        description: 'The customer will not pay it, or it can no longer apply.',
        operationId: 'adminVoidInvoice',
        params: InvoiceParams,
        response: {
          200: Type.Ref(AdminInvoiceSchema, { description: 'The invoice, now void.' }),
          404: errorRef('NOT_FOUND', 'No invoice with that id or reference.'),
          409: errorRef('OPERATION_REFUSED', 'The invoice is not open.'),
          ...adminErrorResponses,
        },
      },
    },
    async (request) => invoiceJson(answer(await operations.voidInvoice(requestActor(request.operator), request.params.invoice)).invoice),
  );

  app.get(
    '/admin/v1/audit',
    {
      onRequest: app.authenticateOperator,
      schema: {
        ...adminRoute,
        summary: 'The audit log',
        description: 'Every change an operator made, from the CLI or this API, newest first: when, who, what, on which target.',
        operationId: 'adminAuditLog',
        querystring: Type.Object({
          target: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the entries about this account, token or invoice id.' })),
          ...pageQueryFields,
        }),
        response: { 200: pageOf(Type.Ref(AdminAuditEntrySchema), 'entries', 'One page of entries.'), 422: invalid, ...adminErrorResponses },
      },
    },
    async (request) => {
      const { target, cursor } = request.query;
      const { page } = answer(
        await operations.auditPage({ limit: pageLimit(request.query.limit), ...(cursor !== undefined ? { cursor } : {}), ...(target !== undefined ? { target } : {}) }),
      );
      return { entries: page.items.map(auditJson), next_cursor: page.nextCursor };
    },
  );
};

export default adminInvoicesRoutes;
