import { Type } from '@sinclair/typebox';
import { WatchSchema, watchesPage } from '../../http/api/v1/watches.ts';
import { MAX_WATCHES_PAGE } from '../../watches/watch-service.ts';
import { MAX_CURSOR_CHARS } from '../../http/api/schemas.ts';
import { count, defineTool } from '../tool.ts';

const DEFAULT_PAGE = 50;

/** GET /api/v1/watches as a tool: one page, newest first. */
export const listWatches = defineTool({
  name: 'list_watches',
  title: "The account's watches",
  description:
    'The VINs and auction lots the account watches (newest first), for which lot.created and lot.updated events go to its webhook. ' +
    `One page of up to ${MAX_WATCHES_PAGE}; pass next_cursor as cursor for the next page (null on the last). Free; needs a live token (vh_live_), as watches act on live data.`,
  access: 'account',
  input: Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WATCHES_PAGE, description: `Watches per page, 1 to ${MAX_WATCHES_PAGE} (${DEFAULT_PAGE} unless given).` })),
      cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_CHARS, description: 'The next_cursor of the previous page, as given.' })),
    },
    { additionalProperties: false },
  ),
  output: Type.Object(
    {
      data: Type.Array(Type.Object(WatchSchema.properties, { additionalProperties: false })),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The cursor of the next page, or null.' }),
    },
    { title: 'WatchPage', additionalProperties: false },
  ),
  annotations: { title: "The account's watches", readOnlyHint: true, openWorldHint: false },
  async call({ services, principal }, args) {
    const page = watchesPage(await services.watches.list(principal.accountId, { limit: args.limit ?? DEFAULT_PAGE, cursor: args.cursor }));
    const what = page.data.map((watch) => (watch.vin !== null ? `VIN ${watch.vin}` : `${watch.auction} lot ${watch.lot_id}`) + ` (${watch.id})`);
    return {
      json: page,
      summary:
        (page.data.length === 0 ? 'No watches on this page.' : `${count(page.data.length, 'watch', 'watches')}: ${what.join('; ')}.`) +
        (page.next_cursor === null ? ' This is the last page.' : ` More follow: call again with cursor ${page.next_cursor}.`),
    };
  },
});
