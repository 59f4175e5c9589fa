// runProgram: a program run to its end through the spawn helper (or in-process), its output whole
// and byte for byte, a missing program as ProgramStartError with the system's code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProgramStartError, runProgram, setUpSpawner } from '../../../src/sandbox/spawner.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
setUpSpawner({ helper: true, env }); // as a worker's entry point does

for (const useHelper of [true, false]) {
  const how = useHelper ? 'through the helper' : 'in this process';
  test(`${how}: stdin in, stdout and stderr apart and byte for byte, the exit code`, async () => {
    const input = Buffer.from([0, 1, 2, 255, 254, 10, 0]);
    const r = await runProgram('sh', ['-c', 'cat; echo err >&2; exit 3'], { cwd: '/', env, input }, useHelper);
    assert.equal(r.code, 3);
    assert.deepEqual(r.stdout, input);
    assert.equal(r.stderr.toString('utf8'), 'err\n');
  });

  test(`${how}: a missing program is a ProgramStartError with ENOENT`, async () => {
    await assert.rejects(
      runProgram('no-such-program-faheem', [], { cwd: '/', env }, useHelper),
      (e: unknown) => e instanceof ProgramStartError && e.errno === 'ENOENT',
    );
  });
}
