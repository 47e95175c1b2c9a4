export { Vinhistory } from './generated/client.ts';
export type * from './generated/types.ts';
export { SDK_VERSION, retryAfterSeconds, type ClientOptions, type RequestOptions, type ResponseInfo } from './core.ts';
export * from './errors.ts';
export { paginate } from './paging.ts';
export * from './webhooks.ts';
