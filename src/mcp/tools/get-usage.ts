import { Type } from '@sinclair/typebox';
import { usageAnswer, UsageSchema } from '../../http/api/v1/usage.ts';
import { count, defineTool } from '../tool.ts';

/** GET /api/v1/usage as a tool: free, with the same small per-second guard. */
export const getUsage = defineTool({
  name: 'get_usage',
  title: "The account's plan and usage",
  description:
    "The account's plan and what is left of it: searches per second, the monthly quota, searches used and remaining in the current billing period, and when the quota resets. " +
    'Free (not counted), at most 5 calls per second. Call it before a series of searches to know how many the account can still make.',
  access: 'customer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object(UsageSchema.properties, { title: 'Usage', additionalProperties: false }),
  annotations: { title: "The account's plan and usage", readOnlyHint: true, openWorldHint: false },
  async call({ services, principal }) {
    const usage = await usageAnswer(services.guards.usageCalls, services.usage, principal.accountId);
    return {
      json: usage,
      summary:
        `Plan ${usage.plan.name} (${usage.billing}): ${count(usage.used, 'search', 'searches')} used of ${usage.quota.toLocaleString('en-US')} in the billing period that started ${usage.period_start}; ` +
        `${count(usage.remaining, 'search', 'searches')} remaining until the quota resets at ${usage.resets_at}, at most ${usage.rate_per_second} per second.`,
    };
  },
});
