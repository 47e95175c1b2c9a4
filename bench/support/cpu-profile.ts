import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** The parts of a V8 .cpuprofile (what `node --cpu-prof` writes) that a summary needs. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** A sampled stack, innermost frame first, each frame's file shortened as in the summaries. */
export type ProfileStack = readonly { functionName: string; file: string }[];

/**
 * Busy time by a caller-given kind of whole stack (not just the innermost frame): what a
 * subsystem costs with everything it calls, e.g. the photo archive's share of a server's CPU
 * apart from the searches'. Returns milliseconds per kind, busiest first, idle left out.
 */
export async function cpuByStack(file: string, repoRoot: string, kindOf: (stack: ProfileStack) => string): Promise<{ busyMs: number; kinds: { kind: string; ms: number }[] }> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const kindOfNode = new Map<number, string>();
  const kinds = new Map<string, number>();
  let busyMs = 0;
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    if (byId.get(id)?.callFrame.functionName === '(idle)') return;
    let kind = kindOfNode.get(id);
    if (kind === undefined) {
      const stack: { functionName: string; file: string }[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        stack.push({ functionName: frame.functionName, file: frame.url ? shortUrl(frame.url, repoRoot) : '' });
      }
      kind = kindOf(stack);
      kindOfNode.set(id, kind);
    }
    busyMs += ms;
    kinds.set(kind, (kinds.get(kind) ?? 0) + ms);
  });
  return { busyMs, kinds: [...kinds].map(([kind, ms]) => ({ kind, ms })).sort((a, b) => b.ms - a.ms) };
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
