import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/observability/metrics.ts';

/** docs/alerts/feeds.rules.yml: every rule names metrics the service exports, and promtool accepts the file where it is installed. */
const RULES = fileURLToPath(new URL('../../docs/alerts/feeds.rules.yml', import.meta.url));

interface RuleFile {
  groups: { name: string; rules: { alert: string; expr: string; for?: string; labels?: Record<string, string> }[] }[];
}

const promtool = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();

describe('the feeds alert rules (docs/alerts/feeds.rules.yml)', () => {
  const file = parse(readFileSync(RULES, 'utf8')) as RuleFile;
  const rules = file.groups.flatMap((group) => group.rules);

  it('alert on a stale feed, a failing feed and a feed with no new lots, each on metrics the service exports', async () => {
    expect(rules.map((rule) => rule.alert)).toEqual(expect.arrayContaining(['VinhistoryFeedStale', 'VinhistoryFeedFailing', 'VinhistoryFeedNoNewLots']));
    const exported = new Set((await new Metrics({ defaultMetrics: false }).registry.getMetricsAsJSON()).map((metric) => metric.name));
    for (const rule of rules) {
      const named = [...rule.expr.matchAll(/\bvinhistory_[a-z_]+\b/g)].map((m) => m[0]);
      expect(named.length, rule.alert).toBeGreaterThan(0);
      for (const metric of named) expect(exported, `${rule.alert}: ${metric}`).toContain(metric);
      expect(rule.labels?.severity, rule.alert).toBeDefined();
    }
  });

  it.runIf(promtool !== '')('passes promtool check rules', () => {
    expect(execFileSync(promtool, ['check', 'rules', RULES], { encoding: 'utf8' })).toContain('SUCCESS');
  });
});
