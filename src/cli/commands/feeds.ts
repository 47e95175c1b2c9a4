import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { FEED_FORMATS, type FeedPullResult } from '../../domain/feed.ts';
import { feedAuditDetails, feedJson, type FeedJson } from '../../feeds/feed-service.ts';
import { CliError } from '../cli-error.ts';
import { withDatabase } from '../database.ts';
import { age } from '../../operations/age.ts';
import { cliActor, unwrap } from '../operator.ts';
import { formatTable } from '../table.ts';

function describeResult(name: string, result: FeedPullResult): string {
  const c = result.counts;
  const counts = `read ${c.read}, inserted ${c.inserted}, updated ${c.updated}, unchanged ${c.unchanged}, skipped ${c.skipped}`;
  if (result.status === 'not_modified') return `${name}: not modified since the last good pull (nothing loaded)`;
  if (result.status === 'failed') return `${name}: failed: ${result.error}${c.read > 0 ? ` (${counts} before it)` : ''}; the data stored before is kept`;
  const listing = result.left + result.returned > 0 ? `; ${result.left} left the listing, ${result.returned} came back` : '';
  return `${name}: ok: ${counts}${listing}`;
}

function table(feeds: FeedJson[], now: Date): string {
  return formatTable(
    [{ header: 'NAME' }, { header: 'FORMAT' }, { header: 'EVERY' }, { header: 'STATUS' }, { header: 'LAST ATTEMPT' }, { header: 'LAST SUCCESS' }, { header: 'NEXT RUN' }, { header: 'READ', align: 'right' }, { header: 'NEW', align: 'right' }, { header: 'CHANGED', align: 'right' }, { header: 'LAST ERROR' }],
    feeds.map((feed) => [
      feed.name,
      feed.format,
      feed.every,
      feed.paused ? 'paused' : (feed.last_status ?? 'never pulled'),
      age(feed.last_attempt_at, now),
      age(feed.last_success_at, now),
      feed.paused ? '-' : age(feed.next_run_at, now),
      String(feed.read),
      String(feed.inserted),
      String(feed.updated),
      (feed.last_error ?? '').slice(0, 100),
    ]),
  );
}

interface AddOptions {
  url: string;
  format: string;
  map?: string;
  every: string;
  header: string[];
  listing?: boolean;
  paged?: boolean;
  cursorParam?: string;
  updatedSinceParam?: string;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * Feeds the service pulls itself (docs/feeds.md): registered here or over /admin/v1/feeds, pulled
 * by `vinhistory serve` when due, one instance at a time per feed.
 */
export function registerFeedsCommands(program: Command): void {
  const feeds = program.command('feeds').description('feeds the server pulls itself on a schedule: add, list, run, pause, resume, remove');

  feeds
    .command('add')
    .description('register a feed; it is due at once (the next poll of `serve` pulls it)')
    .argument('<name>', 'the feed\'s name: lower-case letters, digits, - and _ (the source its lots carry)')
    .requiredOption('--url <url>', 'where to download it (http(s); the outbound rules apply)')
    .addOption(new Option('--format <format>', 'what the file is').choices(FEED_FORMATS).default('auto'))
    .option('--map <file>', 'mapping of CSV columns to Lot fields, for --format csv (JSON; docs/import-formats.md)')
    .option('--every <interval>', 'how often: <minutes>m or <hours>h', '1h')
    .option('--header <header>', 'a request header "Name: value"; the value may be env:NAME, read from the pulling process\'s environment at each pull and never stored (repeatable)', collect, [])
    .option('--listing', 'the feed lists every lot on sale: a lot missing from a good pull has left the auction\'s listing')
    .option('--paged', 'a JSON API with pages: follow the next page (a URL or cursor in the body, or a Link header)')
    .option('--cursor-param <name>', 'the query parameter a cursor from the body is sent as (implies --paged)')
    .option('--updated-since-param <name>', 'ask only for what changed: this query parameter carries the start of the last good pull')
    .action(async (name: string, options: AddOptions) => {
      let map: unknown;
      if (options.map !== undefined) {
        try {
          map = JSON.parse(await readFile(options.map, 'utf8'));
        } catch (error) {
          throw new CliError(`--map ${options.map}: ${(error as Error).message}`, 2);
        }
      }
      const feed = await withDatabase(async ({ services }) => {
        const added = unwrap(
          await services.feeds.add({
            name,
            url: options.url,
            format: options.format,
            map,
            every: options.every,
            headers: options.header,
            listing: options.listing === true,
            paged: options.paged === true,
            cursorParam: options.cursorParam,
            updatedSinceParam: options.updatedSinceParam,
          }),
        ).feed;
        await services.operations.record(cliActor(), 'feed.add', added.name, feedAuditDetails(added));
        return added;
      });
      process.stdout.write(`feed ${feed.name} added: ${feedJson(feed).url}, every ${feedJson(feed).every}; due now (vinhistory serve pulls it, or: vinhistory feeds run ${feed.name})\n`);
    });

  feeds
    .command('list')
    .description('the feeds with the state of their pulls, ages relative to now')
    .option('--json', 'print them as a JSON array (the fields of the contract)')
    .action(async (options: { json?: boolean }) => {
      const list = await withDatabase(async ({ services }) => (await services.feeds.list()).map(feedJson));
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list)}\n`);
        return;
      }
      if (list.length === 0) {
        process.stdout.write('no feeds (add one with: vinhistory feeds add <name> --url <url>)\n');
        return;
      }
      process.stdout.write(table(list, new Date()));
    });

  feeds
    .command('run')
    .description('pull a feed now in this process, due or not, and print what it loaded (exit 1 when the pull failed)')
    .argument('<name>')
    .option('--accept-changes', 'this once, take a file whose header or size differs from the last good pull\'s (a change the source made on purpose)')
    .action(async (name: string, options: { acceptChanges?: boolean }) => {
      const { result } = await withDatabase(async ({ services }) => {
        const run = unwrap(await services.feeds.runNow(name, options.acceptChanges === true));
        await services.operations.record(cliActor(), 'feed.run', name, { accept_changes: options.acceptChanges === true, status: run.result.status, ...run.result.counts });
        return run;
      });
      process.stdout.write(`${describeResult(name, result)}\n`);
      if (result.status === 'failed') process.exitCode = 1;
    });

  for (const [command, paused] of [['pause', true], ['resume', false]] as const) {
    feeds
      .command(command)
      .description(paused ? 'stop pulling a feed (its data and state are kept)' : 'pull a paused feed again on its schedule')
      .argument('<name>')
      .action(async (name: string) => {
        const feed = await withDatabase(async ({ services }) => {
          const changed = unwrap(await services.feeds.pause(name, paused)).feed;
          await services.operations.record(cliActor(), paused ? 'feed.pause' : 'feed.resume', changed.name, {});
          return changed;
        });
        process.stdout.write(`feed ${feed.name} ${paused ? 'paused' : `resumed; next run ${feed.nextRunAt}`}\n`);
      });
  }

  feeds
    .command('remove')
    .description('forget a feed (the lots it stored stay, with it as their source)')
    .argument('<name>')
    .action(async (name: string) => {
      await withDatabase(async ({ services }) => {
        unwrap(await services.feeds.remove(name));
        await services.operations.record(cliActor(), 'feed.remove', name, {});
      });
      process.stdout.write(`feed ${name} removed\n`);
    });
}
