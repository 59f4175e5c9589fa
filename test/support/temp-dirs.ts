// Temporary folders for a test file: made under the OS tmpdir, removed when its process exits
// (node --test runs each file in a process of its own), so a run leaves /tmp as it found it.
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const made: string[] = [];

process.once('exit', () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // left behind rather than failing a finished run
    }
  }
});

/** A new folder `<tmpdir>/<prefix>XXXXXX`, removed when the test process exits. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
