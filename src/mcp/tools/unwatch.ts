import { Type } from '@sinclair/typebox';
import { noSuchWatchError } from '../../http/api/v1/watches.ts';
import { defineTool } from '../tool.ts';

/** DELETE /api/v1/watches/{id} as a tool. */
export const unwatch = defineTool({
  name: 'unwatch',
  title: 'Stop watching',
  description:
    'Remove one of the account\'s watches by its id (wch_..., from watch or list_watches): no more events come for it. ' +
    'An id the account does not have is an error ("You have no watch with that id"). Free; needs a live token.',
  access: 'account',
  input: Type.Object({ id: Type.String({ maxLength: 64, description: 'The watch id (wch_...).' }) }, { additionalProperties: false }),
  // The API answers 204 without a body: the tool says which watch it removed.
  output: Type.Object(
    { id: Type.String({ description: 'The watch removed.' }), removed: Type.Literal(true) },
    { title: 'RemovedWatch', additionalProperties: false },
  ),
  annotations: { title: 'Stop watching', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async call({ services, principal }, args) {
    if (!(await services.watches.delete(principal.accountId, args.id))) throw noSuchWatchError();
    return { json: { id: args.id, removed: true }, summary: `Watch ${args.id} removed: no more events come for it.` };
  },
});
