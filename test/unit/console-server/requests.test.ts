// What the console's API accepts, and how errors become answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  HttpError,
  actionBodies,
  conversationId,
  errorAnswer,
  followQuery,
  isAction,
  listQuery,
  newConversationBody,
  parseOr400,
} from '../../../src/console-server/requests.js';
import { listQueryText, matchesSearch, shownModel } from '../../../src/console-server/conversations.js';
import { DEFAULTS } from '../../../src/core/types.js';
import { ConversationClosedError, ConversationNotFoundError, InvalidRequestError, NoWorkerError } from '../../../src/core/errors.js';

const status = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return errorAnswer(err).status;
  }
  return 200;
};

test('action bodies: the fields each action takes, nothing more', () => {
  assert.deepEqual(parseOr400(actionBodies.pause, { now: true }), { now: true });
  assert.deepEqual(parseOr400(actionBodies.pause, {}), {});
  assert.equal(
    status(() => parseOr400(actionBodies.pause, { now: 'yes' })),
    400,
  );
  assert.equal(
    status(() => parseOr400(actionBodies.resume, { extra: 1 })),
    400,
  );
  assert.deepEqual(parseOr400(actionBodies.send, { text: 'hi' }), { text: 'hi' });
  assert.equal(
    status(() => parseOr400(actionBodies.send, { text: '' })),
    400,
  );
  assert.equal(
    status(() => parseOr400(actionBodies.send, { text: 5 })),
    400,
  );
  assert.equal(
    status(() => parseOr400(actionBodies.send, { text: 'x'.repeat(100_001) })),
    400,
  );
  assert.deepEqual(parseOr400(actionBodies.reject, { reason: 'no' }), { reason: 'no' });
  assert.equal(
    status(() => parseOr400(actionBodies.reject, [])),
    400,
  );
  assert.ok(isAction('approve') && isAction('close'));
  assert.ok(!isAction('toString') && !isAction('__proto__') && !isAction('launch'));
});

test('a 400 names the field', () => {
  try {
    parseOr400(actionBodies.send, { text: 5 });
    assert.fail('should have thrown');
  } catch (err) {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 400);
    assert.match(err.message, /^text: /);
  }
});

test('list and follow queries: defaults, limits, page tokens', () => {
  assert.deepEqual(parseOr400(listQuery, {}), { pageSize: 50 });
  assert.deepEqual(parseOr400(listQuery, { status: 'paused', pageSize: '10', pageToken: 'abc_-1' }), {
    status: 'paused',
    pageSize: 10,
    pageToken: 'abc_-1',
  });
  assert.equal(
    status(() => parseOr400(listQuery, { status: 'sleeping' })),
    400,
  );
  assert.equal(
    status(() => parseOr400(listQuery, { pageSize: '5000' })),
    400,
  );
  assert.equal(
    status(() => parseOr400(listQuery, { pageToken: "x' OR 1=1" })),
    400,
  );
  assert.deepEqual(parseOr400(followQuery, { from: '3', liveFrom: '7' }), { from: 3, liveFrom: 7 });
  assert.deepEqual(parseOr400(followQuery, {}), { from: 0 });
  assert.equal(
    status(() => parseOr400(followQuery, { from: '-1' })),
    400,
  );
  assert.equal(
    status(() => parseOr400(conversationId, 'a/b')),
    400,
  );
  // An id made before ids were checked stays reachable (safe as one file name).
  assert.equal(parseOr400(conversationId, 'fix bug'), 'fix bug');
  assert.equal(parseOr400(conversationId, 'conv-1.sub-1'), 'conv-1.sub-1');
});

test('the visibility query quotes what it is given', () => {
  assert.equal(listQueryText({}), `WorkflowType = 'conversation'`);
  assert.equal(listQueryText({ status: 'paused' }), `WorkflowType = 'conversation' AND ConversationStatus = 'paused'`);
  assert.equal(listQueryText({ parentId: "a'b" }), `WorkflowType = 'conversation' AND ParentWorkflowId = 'a''b'`);
});

test('errors: ours by code, others 500 with a short message', () => {
  assert.deepEqual(errorAnswer(new HttpError(415, 'json please')), { status: 415, error: 'json please' });
  assert.equal(errorAnswer(new ConversationNotFoundError('x')).status, 404);
  assert.equal(errorAnswer(new ConversationClosedError('x')).status, 409);
  assert.equal(errorAnswer(new InvalidRequestError('nothing waits for confirmation')).status, 409);
  assert.equal(errorAnswer(new NoWorkerError('no worker')).status, 503);
  const other = errorAnswer(new Error('x'.repeat(2000)));
  assert.equal(other.status, 500);
  assert.ok(other.error.length < 600);
  assert.equal(errorAnswer('plain').error, 'plain');
});

test('the new-conversation form: the message and id rules of `faheem start`, an absolute workspace, empty fields as none', () => {
  const ok = parseOr400(newConversationBody, { message: 'Fix the bug', workspace: '/tmp/w', model: '', confirm: 'risky', id: '  ' });
  assert.deepEqual({ ...ok }, { message: 'Fix the bug', workspace: '/tmp/w', confirm: 'risky', model: undefined, id: undefined });
  assert.deepEqual(parseOr400(newConversationBody, { message: 'x', workspace: ' /w ', model: 'openai/gpt-4o', id: 'my-task.1' }), {
    message: 'x',
    workspace: '/w',
    model: 'openai/gpt-4o',
    confirm: 'never',
    id: 'my-task.1',
  });
  const refused = (body: unknown) => {
    try {
      parseOr400(newConversationBody, body);
    } catch (err) {
      assert.ok(err instanceof HttpError);
      assert.equal(err.status, 400);
      return err.message;
    }
    assert.fail(`accepted ${JSON.stringify(body)}`);
  };
  assert.match(refused({ message: '   ', workspace: '/w' }), /^message: the message is empty/);
  assert.match(refused({ message: 'x'.repeat(DEFAULTS.maxMessageChars + 1), workspace: '/w' }), /longer than/);
  assert.match(refused({ message: 'x', workspace: 'relative/dir' }), /^workspace: give the folder as an absolute path/);
  assert.match(refused({ message: 'x', workspace: '' }), /^workspace: say which folder/);
  assert.match(refused({ message: 'x', workspace: '/w', id: '../etc' }), /^id: conversation id "..\/etc" is not valid/);
  // An id only an old conversation may have (a space) is not one a new conversation may take.
  assert.match(refused({ message: 'x', workspace: '/w', id: 'fix bug' }), /^id: conversation id/);
  assert.match(refused({ message: 'x', workspace: '/w', model: 'gpt 4' }), /^model: a model name has no spaces/);
  assert.match(refused({ message: 'x', workspace: '/w', confirm: 'sometimes' }), /^confirm:/);
  assert.match(refused({ message: 'x', workspace: '/w', extra: 1 }), /extra/);
  assert.match(refused({ workspace: '/w' }), /^message:/);
});

test('search: every word in the title, id or workspace, any case; the model shown is the one the calls used', () => {
  const row = { id: 'conv-1a2b', title: 'Fix the Login bug', workspace: '/home/me/shop' };
  assert.ok(matchesSearch(row, 'login'));
  assert.ok(matchesSearch(row, 'shop fix'));
  assert.ok(matchesSearch(row, 'CONV-1A'));
  assert.ok(matchesSearch(row, '  '));
  assert.ok(!matchesSearch(row, 'login payments'));
  // A conversation started before titles were kept is found by id and workspace.
  assert.ok(matchesSearch({ id: 'old-one', title: null, workspace: null }, 'old'));
  assert.ok(!matchesSearch({ id: 'old-one', title: null, workspace: null }, 'null'));
  assert.equal(shownModel('default', 'scripted/demo'), 'scripted/demo');
  assert.equal(shownModel('default', ''), null);
  assert.equal(shownModel('default', undefined), null);
  assert.equal(shownModel('openai/gpt-4o', undefined), 'openai/gpt-4o');
  assert.equal(shownModel(null, undefined), null);
});
