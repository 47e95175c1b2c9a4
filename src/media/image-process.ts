import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { FetchAnswer, FetchRequest, ImageAnswer, ImageJob, ImageSetup, LogoCaps, ProcessAnswer } from './image-worker.ts';
import type { LogoRender } from './logo-render.ts';
import { CHRT, PRLIMIT } from '../linux-tools.ts';

/**
 * The lowest priority niceness (19): a busy process at 0 weighs about 68 times one at 19 in the
 * kernel's share of the CPU, so the archive's image work takes only what the searches leave.
 */
export const IMAGE_WORK_NICE = 19;

/**
 * Why a job got no answer: the child died while working on the photo, or took longer than allowed
 * (the photo's doing, most likely); or the child died, or was closed, while the photo was only
 * being fetched or waited its turn, so its bytes are gone through no fault of its own ('lost').
 */
export class ImageProcessError extends Error {
  constructor(
    readonly failure: 'stopped' | 'timeout' | 'lost',
    message: string,
  ) {
    super(message);
    this.name = 'ImageProcessError';
  }
}

export interface ImageProcessOptions {
  /** The outbound rules and the store the child fetches with and writes to; none for a child that only draws logos. */
  setup?: ImageSetup;
  /**
   * The child's data size (RLIMIT_DATA, through prlimit where there is one: the heap and every
   * private writable mapping): an allocation past it fails inside the child, whatever the image
   * asks for. Not RLIMIT_AS: V8 and WebAssembly reserve gigabytes of address space they never use.
   */
  dataBytes?: number;
  /** The child's niceness, 0 to 19. */
  nice?: number;
  /** Run the child under SCHED_IDLE (Linux, with chrt); true where chrt was found. */
  schedIdle?: boolean;
  /**
   * How long one photo's image work may run before the child is killed and the photo fails.
   * Generous: at nice 19 on a machine busy with other work, a photo that takes 100 ms of CPU may
   * wait seconds for it.
   */
  jobTimeoutMs?: number;
  /** The module the child runs (its serveImageJobs()); tests give one that misbehaves. */
  module?: URL;
  /**
   * The most of the time the child may spend on photos, 0 to 1 (default 1: no rest). After a photo
   * whose work took t (as the server saw it: sent to answered), the next starts t × (1/share − 1)
   * later. Idle priority gives the searches the CPU at once, but not the caches, the memory bus
   * and the disk the child shares with them: at a share of 1 a search's p99 while archiving was
   * 1.03-1.30 times its idle p99 over eleven runs, at 0.5 it was 0.99-1.19 over seven, for 4-5 photos a second
   * instead of 8 (docs/benchmarks.md, photo archive).
   */
  share?: number;
}

const require = createRequire(import.meta.url);
// (require.resolve finds the CommonJS build of tsx/esm/api; the ES module build sits beside it.)
const TSX_API = pathToFileURL(require.resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
/** From the sources the child loads TypeScript through tsx; from the build (dist/) its sibling .js, with no tsx. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_MODULE = new URL(FROM_SOURCES ? './image-worker.ts' : './image-worker.js', import.meta.url);

/**
 * The child's first lines, before tsx or sharp start any thread: a thread takes its priority from
 * the thread that starts it, so lowering every thread there is now (the main one and V8's) lowers
 * libuv's pool and libvips' threads too, which is where the decoding and encoding run. On Linux a
 * priority is a thread's, hence the loop over /proc/self/task; elsewhere the process's is lowered.
 */
function bootstrap(module: URL, nice: number): string {
  return `
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
try { setPriority(${nice}); } catch {}
try { for (const tid of readdirSync('/proc/self/task')) { try { setPriority(Number(tid), ${nice}); } catch {} } } catch {}
${FROM_SOURCES ? `const { register } = await import(${JSON.stringify(TSX_API)});
register();` : ''}
const { serveImageJobs } = await import(${JSON.stringify(module.href)});
serveImageJobs();
`;
}

type JobWork = { op: 'fetch'; key: string; request: FetchRequest } | { op: 'process'; key: string } | Extract<ImageJob, { op: 'logo' }>;

interface Pending {
  job: ImageJob;
  resolve: (answer: ImageAnswer) => void;
  reject: (error: Error) => void;
}

/** A fetched photo, its bytes held by the child until process() takes them. */
export type Fetched = Exclude<FetchAnswer, { kind: 'fetched' }> | (Extract<FetchAnswer, { kind: 'fetched' }> & { key: string });

/**
 * The archive's per-photo work in a child process at a low priority, started on first use or by
 * warm(): fetching a photo (through the outbound guard, bounded in time and size), checking and
 * hashing it, making its renditions and storing the three files (image-worker.ts). The server
 * sends URLs and gets back sizes and a hash: no photo's bytes pass through its event loop.
 *
 * Fetches go to the child at once, side by side (the archiver bounds how many). The image work of
 * a photo (process()) runs one at a time, queued here, so that a child that dies (a photo that
 * crashes the decoder, an operator's kill) or that is killed for taking too long takes that photo
 * with it: it fails, the photos being fetched meanwhile are 'lost' (to be fetched again), and the
 * next job starts a new child.
 */
export class ImageProcess {
  private running: Running | null = null;
  private readonly queue: Pending[] = [];
  private current: Pending | null = null;
  private fetching = 0;
  private nextId = 1;
  private closed = false;
  private readonly setup: ImageSetup | undefined;
  private readonly dataBytes: number | undefined;
  private readonly nice: number;
  /**
   * Linux's SCHED_IDLE, set by util-linux's `chrt` (linux-tools.ts) as it starts the child, where there
   * is one (Debian and its images have it). Beyond a smaller share still, it makes a search that wakes
   * up take the core from the child at once, where a niced child may first finish a slice of a few
   * milliseconds, and lets the kernel count a core running only the child as free when it places
   * the search. Without chrt (Alpine, macOS) the child runs niced only.
   */
  private readonly schedIdle: boolean;
  private readonly jobTimeoutMs: number;
  private readonly module: URL;
  /** How long each photo's work is followed by rest: (1/share − 1). */
  private readonly restFactor: number;
  private resting: NodeJS.Timeout | null = null;

  constructor(options: ImageProcessOptions) {
    this.setup = options.setup;
    this.dataBytes = options.dataBytes;
    this.nice = options.nice ?? IMAGE_WORK_NICE;
    this.schedIdle = (options.schedIdle ?? true) && CHRT !== null;
    this.jobTimeoutMs = options.jobTimeoutMs ?? 60_000;
    this.module = options.module ?? WORKER_MODULE;
    const share = options.share ?? 1;
    if (!(share > 0 && share <= 1)) throw new RangeError(`the image process's share must be above 0 and at most 1, not ${share}`);
    this.restFactor = 1 / share - 1;
  }

  /** The child's process id while it runs (tests, diagnostics). */
  get pid(): number | undefined {
    return this.running?.child.pid;
  }

  /**
   * Starts the child now rather than with the first photo. Starting a process blocks this one's
   * event loop for some milliseconds (it is forked), so a server does it once, at start, instead
   * of in the middle of searches.
   */
  warm(): void {
    if (!this.closed) this.start();
  }

  /**
   * Fetches a photo in the child. 'fetched' holds its bytes there under `key` until process();
   * throws ImageProcessError ('lost') when the child dies or is closed meanwhile.
   */
  async fetch(request: FetchRequest): Promise<Fetched> {
    if (this.closed) throw new ImageProcessError('lost', 'the image process was closed');
    const key = `p${this.nextId}`;
    this.fetching++;
    try {
      // The fetch bounds itself (request.timeoutMs); the margin is for a child too starved to say so.
      const answer = await this.exchange({ op: 'fetch', key, request }, { timeoutMs: request.timeoutMs + 30_000, kill: false, onGone: 'lost' });
      if (!answer.ok) throw new Error(answer.message);
      if (!('fetch' in answer)) throw new Error('the image process answered a fetch with something else');
      return answer.fetch.kind === 'fetched' ? { ...answer.fetch, key } : answer.fetch;
    } finally {
      this.fetching--;
      this.unrefWhenIdle();
    }
  }

  /** Checks, hashes, renders and stores a fetched photo, one photo at a time. */
  async process(key: string): Promise<ProcessAnswer> {
    const answer = await new Promise<ImageAnswer>((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, op: 'process', key }, resolve, reject });
      this.pump();
    });
    if (!answer.ok) throw new Error(answer.message);
    if (!('process' in answer)) throw new Error('the image process answered with something else');
    return answer.process;
  }

  /**
   * Draws an uploaded logo in the child, in the same queue as the photos' work (one at a time),
   * under `caps`; a logo that runs past them, or past the job's time, takes the child with it and
   * fails with ImageProcessError ('stopped' or 'timeout').
   */
  async logo(bytes: Buffer, format: 'png' | 'svg', caps: LogoCaps): Promise<LogoRender> {
    const answer = await new Promise<ImageAnswer>((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, op: 'logo', format, bytes: new Uint8Array(bytes), caps }, resolve, reject });
      this.pump();
    });
    if (!answer.ok) throw new Error(answer.message);
    if (!('logo' in answer)) throw new Error('the image process answered a logo with something else');
    return answer.logo;
  }

  /** Fails the jobs still queued and stops the child; a job after this starts a new one. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.resting) {
      clearTimeout(this.resting);
      this.resting = null;
      this.current = null;
    }
    for (const pending of this.queue.splice(0)) pending.reject(new ImageProcessError('lost', 'the image process was closed'));
    const running = this.running;
    if (running) {
      // The child exits when its channel closes; one that does not is killed: after 5 s when a photo
      // is in flight (it finishes or is taken back by its lease), after half a second when none is.
      // Under SCHED_IDLE on a saturated CPU the child may not be scheduled at all to see the close,
      // and a shutdown must not spend its grace waiting for a child with nothing to finish.
      const inFlight = this.current !== null || this.fetching > 0;
      if (running.child.connected) running.child.disconnect();
      const timer = setTimeout(() => running.child.kill('SIGKILL'), inFlight ? 5_000 : 500);
      await running.exited;
      clearTimeout(timer);
    }
    this.closed = false;
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const next = this.queue.shift();
    if (!next) return this.unrefWhenIdle();
    this.current = next;
    const { job } = next;
    const started = performance.now();
    void this.exchange(job as JobWork & { id: number }, { timeoutMs: this.jobTimeoutMs, kill: true, onGone: 'stopped' })
      .then(next.resolve, next.reject)
      .finally(() => {
        const rest = (performance.now() - started) * this.restFactor;
        if (rest < 1 || this.closed) return this.next();
        // Referenced: a CLI backfill waiting on the next photo must not exit during the rest.
        this.resting = setTimeout(() => {
          this.resting = null;
          this.next();
        }, rest);
      });
  }

  private next(): void {
    this.current = null;
    this.pump();
  }

  /** Idle: the channel must not keep a CLI process alive once its archiving is done. */
  private unrefWhenIdle(): void {
    if (this.current || this.queue.length > 0 || this.fetching > 0) return;
    (this.running?.child.channel as { unref?: () => void } | undefined)?.unref?.();
  }

  /**
   * Sends one job and waits for its answer. A process job that outlives its time kills the child
   * (the next must not go to a child stuck on this one); the job fails 'stopped' or 'lost', as
   * given, when the child ends before answering.
   */
  private async exchange(work: JobWork & { id?: number }, options: { timeoutMs: number; kill: boolean; onGone: 'stopped' | 'lost' }): Promise<ImageAnswer> {
    const job = { ...work, id: work.id ?? this.nextId++ } as ImageJob;
    let timer: NodeJS.Timeout | undefined;
    let onMessage: ((answer: ImageAnswer) => void) | undefined;
    let onGone: ((how: string) => void) | undefined;
    let running: Running | undefined;
    try {
      running = this.start();
      // A job keeps the process alive until answered, the wait for the child's start included.
      (running.child.channel as { ref?: () => void } | undefined)?.ref?.();
      await running.ready;
      const child = running.child;
      return await new Promise<ImageAnswer>((resolve, reject) => {
        onMessage = (answer) => {
          if (answer.id === job.id) resolve(answer);
        };
        onGone = (how) =>
          reject(
            options.onGone === 'stopped'
              ? new ImageProcessError('stopped', `the image process stopped while working on the photo (${how})`)
              : new ImageProcessError('lost', `the image process stopped while the photo was being fetched (${how})`),
          );
        if (running!.gone !== null) return onGone(running!.gone);
        child.on('message', onMessage);
        running!.goneListeners.add(onGone);
        timer = setTimeout(() => {
          if (options.kill) {
            // The next job must not go to the child being killed.
            if (this.running === running) this.running = null;
            child.kill('SIGKILL');
          }
          reject(new ImageProcessError('timeout', `the image process took longer than ${options.timeoutMs / 1000} s over the photo`));
        }, options.timeoutMs);
        child.send(job, (error) => {
          if (error) reject(new ImageProcessError(options.onGone, `the image process could not be given the photo (${error.message})`));
        });
      });
    } catch (error) {
      // A child that does not start (no processes left, a broken install) fails the photo as
      // 'stopped', never 'lost': a lost photo is claimed again at once, which would go round and round.
      if (error instanceof ImageProcessError && error.message.startsWith('the image process did not start')) {
        throw new ImageProcessError('stopped', error.message);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      if (onMessage) running?.child.off('message', onMessage);
      if (onGone) running?.goneListeners.delete(onGone);
    }
  }

  /** The running child, or a new one (the first job, or the last child died). */
  private start(): Running {
    if (this.running) return this.running;
    const node = [process.execPath, '--input-type=module', '--eval', bootstrap(this.module, this.nice)];
    // chrt sets the policy and then becomes node (exec): the pid is node's, and every thread inherits it.
    const scheduled = this.schedIdle ? [CHRT!, '--idle', '0', ...node] : node;
    const [command, ...args] = this.dataBytes !== undefined && PRLIMIT ? [PRLIMIT, `--data=${this.dataBytes}`, '--', ...scheduled] : scheduled;
    const child = spawn(command!, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    // Never what keeps the server or a CLI from exiting while idle: a job refs the channel.
    child.unref();
    (child.channel as { unref?: () => void } | undefined)?.unref?.();
    // The first message, ahead of any job (the channel keeps the order); the child answers it as id 0.
    if (this.setup) child.send({ id: 0, op: 'setup', setup: plainSetup(this.setup) } satisfies ImageJob, () => {});
    let started!: () => void;
    let failed!: (error: Error) => void;
    const running: Running = {
      child,
      ready: new Promise<void>((resolve, reject) => {
        started = resolve;
        failed = reject;
      }),
      gone: null,
      goneListeners: new Set(),
      exited: new Promise<void>((resolve) => {
        // A spawn that fails (too many processes) says so with 'error' and may never say 'exit'.
        const end = (how: string) => {
          if (running.gone !== null) return;
          running.gone = how;
          if (this.running === running) this.running = null;
          failed(new ImageProcessError('stopped', `the image process did not start (${how})`));
          for (const listener of running.goneListeners) listener(how);
          resolve();
        };
        child.once('exit', (code, signal) => end(signal ?? `exit code ${code}`));
        child.once('error', (error) => {
          child.kill('SIGKILL');
          end(error.message);
        });
      }),
    };
    // Awaited by every job; a child that never starts must not be an unhandled rejection meanwhile.
    running.ready.catch(() => {});
    const onReady = (message: unknown) => {
      if ((message as { ready?: boolean } | null)?.ready !== true) return;
      child.off('message', onReady);
      started();
    };
    child.on('message', onReady);
    this.running = running;
    return running;
  }
}

interface Running {
  child: ChildProcess;
  /** Resolves when the child has loaded its module and listens for jobs. */
  ready: Promise<void>;
  /** How the child ended (its exit code or signal, or why it could not start); null while it runs. */
  gone: string | null;
  /** Told once, when it ends: the job it was working on fails. */
  goneListeners: Set<(how: string) => void>;
  exited: Promise<void>;
}

/**
 * The setup as plain data for the channel: the config's credentials carry a toJSON that hides the
 * secret from logs, and a function cannot be cloned. The channel is a pipe to our own child.
 */
function plainSetup({ policy, store }: ImageSetup): ImageSetup {
  const plainPolicy = { allowPrivate: policy.allowPrivate, allowPlainHttp: policy.allowPlainHttp };
  if (store.kind === 'directory') return { policy: plainPolicy, store: { kind: 'directory', dir: store.dir } };
  const { credentials } = store;
  return {
    policy: plainPolicy,
    store: { ...store, credentials: credentials ? { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey } : null },
  };
}
