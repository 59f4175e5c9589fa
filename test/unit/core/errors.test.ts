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
  ModelConfigError,
  HttpError,
} from '../../../src/core/errors.js';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HooksConfigError } from '../../../src/hooks/config.js';
import { ModelConfigError as ProviderModelConfigError, resolveModel } from '../../../src/models/provider.js';
import { HttpError as ConsoleHttpError } from '../../../src/console-server/requests.js';
import { NotStarted } from '../../../src/conversation/workflow/runner/host-call.js';
import { CheckpointError } from '../../../src/time-travel/git.js';
import { ObjectStoreError } from '../../../src/storage/object-store.js';
import * as pkg from '../../../src/index.js';
import { CommandInterrupted } from '../../../src/tools/terminal.js';
import { modelSettings } from '../../../src/settings/models.js';

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
    [new ModelConfigError('no model'), 'ModelConfigError', 'model_config'],
    [new HttpError(415, 'json please'), 'HttpError', 'http'],
    [new HooksConfigError('bad hooks'), 'HooksConfigError', 'hooks_config'],
    [new CheckpointError('not_found', 'no such checkpoint'), 'CheckpointError', 'checkpoint'],
    [new ObjectStoreError('too_large', 'past the cap'), 'ObjectStoreError', 'object_store'],
    [new NotStarted(), 'NotStarted', 'tool_not_started'],
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
  assert.equal(new HttpError(413, 'too big').status, 413);
});

test('a missing model setting is a ModelConfigError (code model_config) that names the variable', () => {
  assert.throws(
    () => resolveModel('', undefined, modelSettings({})),
    (err: unknown) => err instanceof ModelConfigError && err.code === 'model_config' && /set LLM_MODEL/.test(err.message),
  );
});

const SRC = path.join(import.meta.dirname, '..', '..', '..', 'src');
const sources = () =>
  readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.c?ts$/.test(f))
    .map((f) => ({ file: f, text: readFileSync(path.join(SRC, f), 'utf8') }));

test('every error class in src/ extends FaheemError (directly or through one of its kinds); one HttpError', () => {
  const classes = new Map<string, { base: string; file: string }>();
  for (const { file, text } of sources())
    for (const m of text.matchAll(/\bclass (\w+) extends (\w+)/g)) classes.set(m[1]!, { base: m[2]!, file });
  const errorLike = [...classes].filter(([name, c]) => /Error$|Failure$/.test(name) || /Error$/.test(c.base));
  assert.ok(errorLike.length >= 20, `found ${errorLike.length} error classes`);
  for (const [name, { base, file }] of errorLike) {
    let b = base;
    for (let hops = 0; b !== 'FaheemError' && classes.has(b) && hops < 5; hops++) b = classes.get(b)!.base;
    if (name === 'FaheemError') continue;
    assert.equal(b, 'FaheemError', `${name} (src/${file}) extends ${base}, not FaheemError`);
  }
  const http = [...sources()].filter(({ text }) => /\bclass HttpError\b/.test(text)).map((s) => s.file);
  assert.deepEqual(http, ['core/errors.ts']);
});

test('one promise-with-a-time-limit helper: src/core/timeout.ts (else withDeadline or AbortSignal.timeout)', () => {
  // The pattern each of the four hand-written helpers had: a timer whose callback only rejects.
  const rolled = sources()
    .filter(({ file, text }) => file !== 'core/timeout.ts' && /setTimeout\(\s*\(\)\s*=>\s*reject\(/.test(text))
    .map((s) => s.file);
  assert.deepEqual(rolled, []);
});

test('classes defined elsewhere are the same classes', () => {
  assert.equal(CommandInterrupted, ToolInterruptedError);
  assert.equal(pkg.ConversationNotFoundError, ConversationNotFoundError);
  assert.equal(pkg.FaheemError, FaheemError);
  assert.equal(pkg.InvalidRequestError, InvalidRequestError);
  assert.equal(pkg.ModelConfigError, ModelConfigError);
  assert.equal(ProviderModelConfigError, ModelConfigError);
  assert.equal(ConsoleHttpError, HttpError);
});

test('instanceof holds across two copies of the package (by kind, not by prototype)', async () => {
  // A second copy of the module: its classes are other objects, as when the SDK and the CLI each load one.
  const copy = (await import(`../../../src/core/errors.js?copy=${Date.now()}`)) as typeof import('../../../src/core/errors.js');
  assert.notEqual(copy.FaheemError, FaheemError);
  const theirs = new copy.ConversationNotFoundError('c1');
  assert.ok(theirs instanceof FaheemError);
  assert.ok(theirs instanceof ConversationNotFoundError);
  assert.ok(!(theirs instanceof ConversationClosedError));
  assert.ok(new ConversationClosedError('c1') instanceof copy.FaheemError);
  assert.ok(new ConversationClosedError('c1') instanceof copy.ConversationClosedError);
  // A subclass defined elsewhere is still its own kind and a FaheemError.
  assert.ok(new HooksConfigError('bad') instanceof copy.FaheemError);
  assert.ok(!(new Error('plain') instanceof FaheemError));
  assert.ok(!FaheemError[Symbol.hasInstance](null) && !FaheemError[Symbol.hasInstance]('text'));
  assert.ok(new Error('plain') instanceof Error);
});
