import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The CLI the system tests spawn (bin/vinhistory.js) runs the build in dist/ when it is current and
 * the sources through tsx when not: a stale build is rebuilt first, so that the spawned CLIs run
 * what production runs, built from the sources under test, and start in a third of tsx's time.
 * Only the system project spawns CLIs, so only it waits for this.
 */
export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../../bin/build.js', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
}
