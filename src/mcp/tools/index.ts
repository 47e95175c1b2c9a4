import type { McpTool } from '../tool.ts';
import { getUsage } from './get-usage.ts';
import { listWatches } from './list-watches.ts';
import { lotHistory } from './lot-history.ts';
import { marketValue } from './market-value.ts';
import { searchLots } from './search-lots.ts';
import { lookupLot } from './lookup-lot.ts';
import { searchVin } from './search-vin.ts';
import { unwatch } from './unwatch.ts';
import { watch } from './watch.ts';

/**
 * The MCP server's tools, in the order they are listed: the counted searches first, then the free
 * calls. A tool is one file of this folder and one line here.
 */
export const TOOLS: readonly McpTool[] = [searchVin, lookupLot, searchLots, marketValue, lotHistory, getUsage, listWatches, watch, unwatch];
