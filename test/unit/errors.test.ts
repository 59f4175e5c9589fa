import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ConversationClosedError,
  ConversationNotFoundError,
  DecryptionError,
  EncryptionConfigError,
  FaheemError,
  InvalidRequestError,
  NoWorkerError,
  SandboxError,
  ServerUnreachableError,
  ToolInterruptedError,
  UsageError,
  WaitTimeoutError,
  ServerStartError,
} from '../../src/errors.js';
import * as pkg from '../../src/index.js';
import { CommandInterrupted } from '../../src/tools/terminal.js';

test('every kind is a FaheemError with its own name and code', () => {
  const cases: [FaheemError, string, string][] = [
    [new ConversationNotFoundError('c1'), 'ConversationNotFoundError', 'conversation_not_found'],
    [new ConversationClosedError('c1'), 'ConversationClosedError', 'conversation_closed'],
    [new InvalidRequestError('no'), 'InvalidRequestError', 'invalid_request'],
    [new NoWorkerError('none'), 'NoWorkerError', 'no_worker'],
    [new ServerUnreachableError('localhost:1', 'connection refused'), 'ServerUnreachableError', 'server_unreachable'],
    [new SandboxError('no bwrap'), 'SandboxError', 'sandbox'],
    [new EncryptionConfigError('bad key'), 'EncryptionConfigError', 'encryption_config'],
    [new DecryptionError('wrong key'), 'DecryptionError', 'decryption'],
    [new ToolInterruptedError('so far'), 'ToolInterruptedError', 'tool_interrupted'],
    [new UsageError('bad flag'), 'UsageError', 'usage'],
    [new WaitTimeoutError('c1', 'timed out'), 'WaitTimeoutError', 'timeout'],
    [new ServerStartError('port taken'), 'ServerStartError', 'server_start'],
  ];
  const codes = new Set<string>();
  for (const [err, name, code] of cases) {
    assert.ok(err instanceof FaheemError, name);
    assert.ok(err instanceof Error, name);
    assert.equal(err.name, name);
    assert.equal(err.code, code);
    assert.match(String(err), new RegExp(`^${name}: `));
    codes.add(err.code);
  }
  assert.equal(codes.size, cases.length, 'one code per kind');
});

test('the errors carry what callers need', () => {
  const notFound = new ConversationNotFoundError('conv-1');
  assert.equal(notFound.id, 'conv-1');
  assert.match(notFound.message, /no conversation with id "conv-1".*faheem list/);
  assert.equal(new ConversationClosedError('conv-1').message, 'conversation conv-1 is closed');
  assert.equal(new ConversationClosedError('conv-1', 'cannot pause: closed').message, 'cannot pause: closed');
  const unreachable = new ServerUnreachableError('localhost:7233', 'connection refused');
  assert.equal(unreachable.address, 'localhost:7233');
  assert.equal(unreachable.reason, 'connection refused');
  assert.match(unreachable.message, /cannot reach Temporal at localhost:7233 \(connection refused\).*npx faheem server/);
  const interrupted = new ToolInterruptedError('partial');
  assert.equal(interrupted.partialOutput, 'partial');
  const cause = new Error('under');
  assert.equal(new InvalidRequestError('x', { cause }).cause, cause);
});

test('classes defined elsewhere are the same classes', () => {
  assert.equal(CommandInterrupted, ToolInterruptedError);
  assert.equal(pkg.ConversationNotFoundError, ConversationNotFoundError);
  assert.equal(pkg.FaheemError, FaheemError);
  assert.equal(pkg.InvalidRequestError, InvalidRequestError);
});
