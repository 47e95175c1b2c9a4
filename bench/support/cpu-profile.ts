import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The parts of a V8 .cpuprofile (what `node --cpu-prof` writes) that a summary needs. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  name: string;
  selfMs: number;
  /** Share of the busy time (everything but idle). */
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  byArea: ProfileLine[];
  byFunction: ProfileLine[];
}

/**
 * Self time by function and by area (an npm package, a source file of ours, a Node.js internal
 * module, the garbage collector), busy time only, to see where a request's CPU goes.
 */
export async function summariseCpuProfile(file: string, repoRoot: string): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const frame = nodes.get(id);
    if (!frame) return;
    totalMs += ms;
    if (frame.functionName === '(idle)') {
      idleMs += ms;
      return;
    }
    const area = areaOf(frame.url, frame.functionName, repoRoot);
    const where = frame.url ? ` ${shortUrl(frame.url, repoRoot)}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
    byArea.set(area, (byArea.get(area) ?? 0) + ms);
  });
  const busy = totalMs - idleMs || 1;
  const lines = (map: Map<string, number>) =>
    [...map]
      .map(([name, selfMs]) => ({ name, selfMs, share: selfMs / busy }))
      .sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs, idleMs, byArea: lines(byArea), byFunction: lines(byFunction) };
}

export function formatProfileSummary(summary: ProfileSummary, top = 25): string {
  const table = (title: string, rows: ProfileLine[]) =>
    [
      `| ${title} | self ms | share of busy |`,
      '|---|---:|---:|',
      ...rows.slice(0, top).map((row) => `| ${row.name.replace(/\|/g, '\\|')} | ${row.selfMs.toFixed(0)} | ${(row.share * 100).toFixed(1)}% |`),
    ].join('\n');
  const busy = summary.totalMs - summary.idleMs;
  return [
    `Profiled ${(summary.totalMs / 1000).toFixed(1)} s: busy ${(busy / 1000).toFixed(1)} s, idle ${(summary.idleMs / 1000).toFixed(1)} s.`,
    '',
    table('area', summary.byArea),
    '',
    table('function', summary.byFunction),
  ].join('\n');
}

function shortUrl(url: string, repoRoot: string): string {
  const file = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) return file.slice(modules + '/node_modules/'.length);
  return file.startsWith(repoRoot) ? path.relative(repoRoot, file) : file;
}

function areaOf(url: string, functionName: string, repoRoot: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url;
  const file = shortUrl(url, repoRoot);
  if (url.includes('/node_modules/')) {
    const parts = file.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return file;
}
