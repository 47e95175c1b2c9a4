import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';

/**
 * The rule "a subscription in force at `at`", written once: active, started by then, and not ended
 * by then (contract, "Subscriptions"). Every read that gates on a plan uses it: a search's commit
 * (principal-recheck.ts), the token lookup, the watches' limit, the accounts' plan and who receives
 * a lot event. `alias` names the subscriptions table in the query (`s`, or `subscriptions`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the caller names the subscriptions table's alias, so no table type can be named here.
export function subscriptionInForce(alias: string, at: string): (eb: ExpressionBuilder<any, any>) => Expression<SqlBool> {
  const started = `${alias}.started_at`;
  const notEnded = subscriptionNotEnded(alias, at);
  return (eb) => eb.and([notEnded(eb), eb(started, '<=', at)]);
}

/**
 * Active and not ended by `at`, started or not: what a cancel ends (in force now, or scheduled to
 * start later).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the caller names the subscriptions table's alias, so no table type can be named here.
export function subscriptionNotEnded(alias: string, at: string): (eb: ExpressionBuilder<any, any>) => Expression<SqlBool> {
  const status = `${alias}.status`;
  const endsAt = `${alias}.ends_at`;
  return (eb) => eb.and([eb(status, '=', 'active'), eb.or([eb(endsAt, 'is', null), eb(endsAt, '>', at)])]);
}
