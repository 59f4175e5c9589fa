import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { prepareWorkspace, tenantConversationId, workspaceFolder, workspaceName } from '../../../src/api/conversations.js';
import { ApiProblem } from '../../../src/api/problems.js';

const root = await mkdtemp(path.join(os.tmpdir(), 'faheem-ws-'));
after(() => rm(root, { recursive: true, force: true }));

const refused = (fn: () => unknown) =>
  assert.throws(fn, (err: unknown) => err instanceof ApiProblem && err.status === 400, 'refused with 400');

test('a workspace is a folder name under the tenant’s own folder', () => {
  assert.equal(workspaceFolder('/w', 'acme', 'site'), '/w/acme/site');
  for (const bad of ['..', '../other', '/etc', 'a/b', 'a\\b', '.hidden', '', 'x'.repeat(129), 'a..b', '~'])
    refused(() => workspaceFolder('/w', 'acme', bad));
});

test('the status names the workspace, never the host path', () => {
  assert.equal(workspaceName('/w', 'acme', '/w/acme/site'), 'site');
  assert.equal(workspaceName('/w', 'acme', '/w/other/site'), null);
  assert.equal(workspaceName('/w', 'acme', '/elsewhere'), null);
  assert.equal(workspaceName('/w', 'acme', '/w/acme/a/b'), null);
});

test("a caller's own id is put under its tenant; ':' and '..' are refused", () => {
  assert.equal(tenantConversationId('acme', 'fix-1'), 'acme:fix-1');
  for (const bad of ['other:x', 'a..b', '-x', 'x'.repeat(130), 'a b']) refused(() => tenantConversationId('acme', bad));
});

test('a workspace folder that is a symbolic link is refused, never followed', async () => {
  await prepareWorkspace(root, 'acme', path.join(root, 'acme', 'ok'));
  await mkdir(path.join(root, 'acme'), { recursive: true });
  await symlink('/etc', path.join(root, 'acme', 'link'));
  await assert.rejects(prepareWorkspace(root, 'acme', path.join(root, 'acme', 'link')), ApiProblem);
  await symlink('/tmp', path.join(root, 'evil'));
  await assert.rejects(prepareWorkspace(root, 'evil', path.join(root, 'evil', 'x')), ApiProblem);
});
