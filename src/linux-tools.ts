import { accessSync, constants } from 'node:fs';

/**
 * util-linux's programs the service runs to set a thread's or a child's scheduling and limits,
 * where they exist (Debian and its images; not Alpine's busybox, nor macOS): null elsewhere, and
 * the callers then run without them (niceness only, no data-size limit).
 */
function linuxTool(name: string): string | null {
  if (process.platform !== 'linux') return null;
  return [`/usr/bin/${name}`, `/bin/${name}`].find((file) => executable(file)) ?? null;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `chrt`, which puts a thread or a child under Linux's SCHED_IDLE. */
export const CHRT = linuxTool('chrt');

/** `prlimit`, which sets a child's data-size limit before it becomes node. */
export const PRLIMIT = linuxTool('prlimit');
