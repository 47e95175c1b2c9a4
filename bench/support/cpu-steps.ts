import { readFile } from 'node:fs/promises';

/** The parts of a V8 .cpuprofile this needs: the call tree, and which node each sample hit when. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * One step of a search, recognised by a frame on the sample's stack: a function (by name, in a
 * file whose path contains `file`) or any function of a file or package.
 */
export interface StepRule {
  step: string;
  file: string;
  functions?: readonly string[];
}

export interface StepLine {
  step: string;
  ms: number;
  share: number;
  /** The functions whose own time the step is mostly made of, busiest first. */
  top: { name: string; ms: number }[];
}

export interface StepSummary {
  /** Busy time (every sample but idle), in the window. */
  busyMs: number;
  idleMs: number;
  steps: StepLine[];
}

/** Samples that match no rule: the HTTP stack if one of these is on the stack, otherwise "other". */
const HTTP_STACK = ['node:_http', 'node:net', 'node:internal/stream_base_commons', 'node:internal/streams', '/fastify/', '/find-my-way/', '/light-my-request/', '/avvio/'];

/**
 * Attributes every CPU sample of a profile to one step: the deepest frame on its stack that a rule
 * names decides (a statement run inside the commit is the commit's; a metric bumped inside the
 * search service is the metrics'), so the steps add up to the whole busy time, nothing counted
 * twice. `from`/`to` (µs on the profile's own clock, `startTime` based) keep a window.
 */
export async function attributeCpuProfile(file: string, rules: readonly StepRule[], window?: { fromUs: number; toUs: number }, top = 4): Promise<StepSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile & { startTime: number };
  const parent = new Map<number, number>();
  const frames = new Map<number, CpuProfile['nodes'][number]['callFrame']>();
  for (const node of profile.nodes) {
    frames.set(node.id, node.callFrame);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const stepOfNode = new Map<number, string>();
  const stepOf = (id: number): string => {
    const known = stepOfNode.get(id);
    if (known !== undefined) return known;
    const leaf = frames.get(id)!;
    let step: string | null = null;
    if (leaf.functionName === '(garbage collector)') step = 'garbage collector';
    else if (leaf.functionName === '(program)') step = 'V8 and native, unattributed';
    let http = false;
    for (let at: number | undefined = id; step === null && at !== undefined; at = parent.get(at)) {
      const frame = frames.get(at)!;
      const rule = rules.find((candidate) => frame.url.includes(candidate.file) && (!candidate.functions || candidate.functions.includes(frame.functionName)));
      if (rule) step = rule.step;
      else if (!http && HTTP_STACK.some((part) => frame.url.includes(part))) http = true;
    }
    step ??= http ? 'HTTP: socket, parser, router, reply' : 'other';
    stepOfNode.set(id, step);
    return step;
  };

  const byStep = new Map<string, number>();
  const selfByStep = new Map<string, Map<string, number>>();
  let busy = 0;
  let idle = 0;
  let clock = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    clock += delta;
    if (window && (clock < window.fromUs || clock > window.toUs)) return;
    const ms = delta / 1000;
    if (frames.get(id)?.functionName === '(idle)') {
      idle += ms;
      return;
    }
    busy += ms;
    const step = stepOf(id);
    byStep.set(step, (byStep.get(step) ?? 0) + ms);
    const frame = frames.get(id)!;
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` ${frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|dist)\//, '$1/')}` : ''}`;
    let selves = selfByStep.get(step);
    if (!selves) selfByStep.set(step, (selves = new Map<string, number>()));
    selves.set(name, (selves.get(name) ?? 0) + ms);
  });
  const steps = [...byStep]
    .map(([step, ms]) => ({
      step,
      ms,
      share: ms / (busy || 1),
      top: [...(selfByStep.get(step) ?? [])].map(([name, selfMs]) => ({ name, ms: selfMs })).sort((a, b) => b.ms - a.ms).slice(0, top),
    }))
    .sort((a, b) => b.ms - a.ms);
  return { busyMs: busy, idleMs: idle, steps };
}
