import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../../errors.ts';
import { retryAfter } from '../../../limits/limit-headers.ts';
import type { RateGuard } from '../../../limits/guards.ts';
import type { UsageService } from '../../../limits/usage-service.ts';
import { authErrorResponses, errorRef, retryAfterHeader } from '../schemas.ts';

export const UsageSchema = Type.Object(
  {
    plan: Type.Object({ code: Type.String(), name: Type.String() }),
    billing: Type.Union([Type.Literal('monthly'), Type.Literal('annual')]),
    rate_per_second: Type.Integer({ description: 'Searches per second the plan allows.' }),
    quota: Type.Integer({ description: 'Searches per billing period.' }),
    used: Type.Integer({ description: 'Searches counted in the current period.' }),
    remaining: Type.Integer({ description: 'Searches left in the current period.' }),
    period_start: Type.String({ format: 'date-time' }),
    resets_at: Type.String({ format: 'date-time', description: 'End of the current period, when the quota resets.' }),
  },
  { $id: 'Usage', title: 'Usage' },
);

/**
 * The usage call, for this route and the MCP server's get_usage (src/mcp/): its own per-second
 * guard, then the account's plan and use; each refusal is the API error it is answered with.
 */
export async function usageAnswer(usageCalls: RateGuard, usage: UsageService, accountId: string): Promise<Static<typeof UsageSchema>> {
  const guard = await usageCalls.consume(accountId);
  if (!guard.allowed) {
    throw new ApiError('RATE_LIMITED', `Too many usage calls: at most ${usageCalls.perSecond} per second.`, {
      headers: { 'retry-after': retryAfter(guard.resetMs) },
    });
  }
  const found = await usage.forAccount(accountId);
  if (!found) throw new ApiError('SUBSCRIPTION_REQUIRED', 'Your account has no active subscription.');
  return {
    plan: found.plan,
    billing: found.billing,
    rate_per_second: found.ratePerSecond,
    quota: found.quota,
    used: found.used,
    remaining: found.remaining,
    period_start: found.periodStart.toISOString(),
    resets_at: found.resetsAt.toISOString(),
  };
}

const usageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { usageCalls } = app.services.guards;
  app.addSchema(UsageSchema);
  app.get(
    '/api/v1/usage',
    {
      onRequest: app.authenticateCustomer,
      schema: {
        tags: ['Account'],
        summary: "The account's plan and its use in the current billing period",
        description: `Free: not counted against the quota and not limited by the search rate (it has its own limit of ${usageCalls.perSecond} calls per second).`,
        operationId: 'usage',
        security: [{ apiToken: [] }],
        response: {
          200: Type.Ref(UsageSchema, { description: "The account's plan, its limits and what is used of them in the current billing period." }),
          ...authErrorResponses,
          429: errorRef('RATE_LIMITED', `More than ${usageCalls.perSecond} usage calls in one second; see Retry-After.`, retryAfterHeader),
        },
      },
    },
    async (request) => usageAnswer(usageCalls, app.services.usage, request.principal!.accountId),
  );
};

export default usageRoutes;
