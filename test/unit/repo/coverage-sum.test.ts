import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeCoverage, percent, summarise, type Coverage } from '../../support/coverage-sum.js';

test('a line or branch that ran in either group ran; two branches on one line stay two', () => {
  const a: Coverage = {
    '/s/a.ts': {
      lines: [
        [1, 1],
        [2, 0],
        [3, 0],
      ],
      branches: [
        [2, 1],
        [2, 0],
      ],
    },
  };
  const b: Coverage = {
    '/s/a.ts': {
      lines: [
        [1, 0],
        [2, 1],
        [3, 0],
      ],
      branches: [
        [2, 0],
        [2, 1],
      ],
    },
    '/s/b.ts': { lines: [[1, 1]], branches: [] },
  };
  const merged = mergeCoverage(a, b);
  assert.deepEqual(merged['/s/a.ts'], {
    lines: [
      [1, 1],
      [2, 1],
      [3, 0],
    ],
    branches: [
      [2, 1],
      [2, 1],
    ],
  });
  assert.deepEqual(merged['/s/b.ts'], b['/s/b.ts']);
});

test('files no test loaded count as lines not run; files outside the sources do not count', () => {
  const coverage: Coverage = {
    '/s/a.ts': {
      lines: [
        [1, 1],
        [2, 0],
        [3, 1],
        [4, 1],
      ],
      branches: [
        [1, 1],
        [3, 0],
      ],
    },
    '/elsewhere/x.ts': { lines: [[1, 1]], branches: [[1, 1]] },
  };
  const s = summarise(
    coverage,
    new Map([
      ['/s/a.ts', 4],
      ['/s/b.ts', 6],
    ]),
  );
  assert.deepEqual(s.lines, { covered: 3, total: 4 });
  assert.deepEqual(s.branches, { covered: 1, total: 2 });
  assert.equal(s.loadedFiles, 1);
  assert.deepEqual(s.unloaded, { files: 1, lines: 6 });
  assert.deepEqual(s.allLines, { covered: 3, total: 10 });
  assert.equal(percent(s.allLines), '30.0 % (3 of 10)');
  assert.equal(percent({ covered: 1234, total: 1705 }), '72.4 % (1,234 of 1,705)');
});
