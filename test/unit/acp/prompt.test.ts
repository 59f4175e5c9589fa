// What the editor sends, as the conversation takes it: prompts, MCP servers (no literal secrets),
// modes, and stop reasons.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkMode, mcpServersOf, mentionOf, promptText, secretKeeper, secretName, stopReasonOf } from '../../../src/acp/prompt.js';
import { InvalidRequestError } from '../../../src/core/errors.js';

const ws = '/work/project';

test('a prompt: text as it is, a file link as a mention, an embedded file as its text', () => {
  assert.equal(
    promptText(
      [
        { type: 'text', text: 'Look at' },
        { type: 'resource_link', uri: 'file:///work/project/src/a.ts', name: 'a.ts' },
        { type: 'text', text: ' and fix it.' },
      ],
      ws,
    ),
    'Look at @src/a.ts and fix it.',
  );
  assert.equal(
    promptText(
      [
        { type: 'text', text: 'Explain' },
        { type: 'resource', resource: { uri: 'file:///etc/hosts', text: '127.0.0.1 localhost' } },
      ],
      ws,
    ),
    'Explain @/etc/hosts\n\n/etc/hosts:\n```\n127.0.0.1 localhost\n```',
  );
  assert.equal(mentionOf('https://example.com/x', ws), 'https://example.com/x');
});

test('images, audio, binary resources, empty and malformed prompts are declined with a reason', () => {
  assert.throws(() => promptText([{ type: 'image', data: 'AA', mimeType: 'image/png' }], ws), /image content is not supported/);
  assert.throws(() => promptText([{ type: 'audio', data: 'AA', mimeType: 'audio/wav' }], ws), /audio content is not supported/);
  assert.throws(() => promptText([{ type: 'resource', resource: { uri: 'file:///x.bin', blob: 'AA' } }], ws), /binary resources/);
  assert.throws(() => promptText([{ type: 'text', text: '  ' }], ws), /empty/);
  assert.throws(() => promptText('hello', ws), InvalidRequestError);
  assert.throws(() => promptText([{ type: 'video' }], ws), InvalidRequestError);
});

test("the client's MCP servers as ours, with no literal value kept in the config", () => {
  const kept: string[] = [];
  const keep = (v: string) => (kept.push(v), `\${${secretName(v)}}`);
  const servers = mcpServersOf(
    [
      {
        name: 'files',
        command: '/usr/bin/mcp-files',
        args: ['--root', '/x'],
        env: [
          { name: 'TOKEN', value: 'abc123' },
          { name: 'HOME_DIR', value: '${HOME}' },
        ],
      },
      { type: 'http', name: 'remote api', url: 'http://127.0.0.1:3001/mcp', headers: [{ name: 'Authorization', value: 'Bearer s3cret' }] },
    ],
    keep,
  );
  assert.deepEqual(servers, {
    files: { command: '/usr/bin/mcp-files', args: ['--root', '/x'], env: { TOKEN: `\${${secretName('abc123')}}`, HOME_DIR: '${HOME}' } },
    remote_api: { url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: `\${${secretName('Bearer s3cret')}}` } },
  });
  assert.deepEqual(kept, ['abc123', 'Bearer s3cret']);
  assert.match(secretName('abc123'), /^FAHEEM_SECRET_ACP_[0-9A-F]{16}$/);
  assert.equal(mcpServersOf([], keep), undefined);
  assert.throws(() => mcpServersOf([{ type: 'sse', name: 's', url: 'http://x', headers: [] }], keep), /SSE is not supported/);
  assert.throws(
    () =>
      mcpServersOf(
        [
          { name: 'a', command: 'x', args: [], env: [] },
          { name: 'a', command: 'y', args: [], env: [] },
        ],
        keep,
      ),
    /two MCP servers/,
  );
});

test('modes are the confirmation policies', () => {
  assert.equal(checkMode('risky'), 'risky');
  assert.throws(() => checkMode('yolo'), /unknown mode "yolo"/);
});

test('stop reasons', () => {
  const turn = { cancelled: false, refused: false, truncated: false };
  assert.equal(stopReasonOf({ status: 'finished', lastError: null }, turn), 'end_turn');
  assert.equal(stopReasonOf({ status: 'paused', lastError: null }, turn), 'cancelled');
  assert.equal(stopReasonOf({ status: 'finished', lastError: null }, { ...turn, cancelled: true }), 'cancelled');
  assert.equal(stopReasonOf({ status: 'error', lastError: 'reached the maximum of 5 iterations in this run' }, turn), 'max_turn_requests');
  assert.equal(stopReasonOf({ status: 'finished', lastError: null }, { ...turn, refused: true }), 'refusal');
  assert.equal(stopReasonOf({ status: 'finished', lastError: null }, { ...turn, truncated: true }), 'max_tokens');
  assert.equal(stopReasonOf({ status: 'error', lastError: 'the model failed' }, turn), 'end_turn');
  assert.equal(
    stopReasonOf({ status: 'error', lastError: 'reached the maximum of 2 iterations in this run' }, { ...turn, truncated: true }),
    'max_tokens',
    'every reply cut: the cap is why',
  );
});

test('a value that mixes ${VAR} with literal text is kept out of the config as a whole; only a lone ${VAR} goes as it is', () => {
  const kept: string[] = [];
  const keep = (v: string) => (kept.push(v), `\${${secretName(v)}}`);
  const servers = mcpServersOf(
    [
      {
        name: 'm',
        command: 'x',
        args: [],
        env: [
          { name: 'A', value: '${HOME}' },
          { name: 'B', value: 'sk-live-9d2f7a ${HOME}' },
          { name: 'C', value: '${NOPE:-fallback-s3cret}' },
        ],
      },
    ],
    keep,
  );
  assert.deepEqual(servers?.m, {
    command: 'x',
    env: { A: '${HOME}', B: `\${${secretName('sk-live-9d2f7a ${HOME}')}}`, C: `\${${secretName('${NOPE:-fallback-s3cret}')}}` },
  });
  assert.ok(!JSON.stringify(servers).includes('sk-live-9d2f7a') && !JSON.stringify(servers).includes('fallback-s3cret'));
  assert.deepEqual(kept, ['sk-live-9d2f7a ${HOME}', '${NOPE:-fallback-s3cret}']);
});

test('secretKeeper: the embedded worker fills in references as the worker would and keeps the whole value in its environment', () => {
  const env: NodeJS.ProcessEnv = { TOKEN: 'tok-1f2e' };
  const keep = secretKeeper({ embedded: true, encrypted: false, env });
  const ref = keep('Bearer ${TOKEN}');
  const name = secretName('Bearer tok-1f2e');
  assert.equal(ref, `\${${name}}`);
  assert.equal(env[name], 'Bearer tok-1f2e', 'a FAHEEM_SECRET_* value: the worker masks it');
  assert.throws(() => keep('${UNSET_VAR_X}'), /UNSET_VAR_X.*not set/);
  // Encrypted history: as it is (the worker fills it in). Neither: refused, saying what to do.
  assert.equal(secretKeeper({ embedded: false, encrypted: true, env: {} })('Bearer ${T}'), 'Bearer ${T}');
  assert.throws(() => secretKeeper({ embedded: false, encrypted: false, env: {} })('Bearer ${T}'), /one \$\{VAR\}.*FAHEEM_ENCRYPTION_KEY/);
});
