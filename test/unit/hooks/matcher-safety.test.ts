// Hook matchers run inside workflow code: a pattern that can backtrack catastrophically is refused
// where the hooks are parsed (the CLI's --hooks, Conversation.create({ hooks })), and the workflow
// does not run one that reaches it anyway (an old history, a config built by hand).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HooksConfigError, hasUnsafeMatcher, matcherMatches, matchingHooks, parseHooks } from '../../../src/hooks/config.js';
import { MAX_MATCHER_LENGTH, unsafeMatcherReason } from '../../../src/hooks/matcher-safety.js';
import { conversationStart, Agent, LLM } from '../../../src/client/client.js';

const SAFE = [
  'Bash',
  'Edit|Write',
  'mcp__.*',
  '.*',
  'terminal',
  'mcp__github__.*',
  '^mcp__(github|gitlab)__.*$',
  'Notebook.*',
  'file_(editor|viewer)',
  '(?:terminal)?',
  'x{2,5}',
  '[a-z]+_tool',
  '(ab)+',
  '(?<name>ab)*',
  '\\d+$',
  '[(]+',
  '\\(a+\\)+',
];

const UNSAFE = [
  '(a+)+',
  '(a*)*',
  '(a|aa)+',
  '(a|a)*$',
  '(\\w+\\s?)*',
  '((ab)+)+',
  '(?:a+)+b',
  '(x+x+)+y',
  '([a-z]+)*$',
  '(a?){2,}',
  '((a|b))+',
  '(.*a){3,}',
  '(a+)+?',
  '(a)\\1',
  '(?<x>a)\\k<x>',
  '.*.*.*.*x',
  '[]](a+)+',
  '[^](a+)+',
  'a'.repeat(MAX_MATCHER_LENGTH + 1),
];

test('the matchers of docs and configs are safe', () => {
  for (const m of SAFE) assert.equal(unsafeMatcherReason(m), undefined, m);
});

test('patterns that can backtrack catastrophically are unsafe, each with a reason', () => {
  for (const m of UNSAFE) assert.match(unsafeMatcherReason(m) ?? '', /exponential|long|longer than/, m);
});

test('parseHooks (the CLI and Conversation.create) refuses an unsafe matcher with a clear error', () => {
  const config = (matcher: string) => ({ hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'true' }] }] } });
  for (const m of SAFE) parseHooks(config(m));
  assert.throws(
    () => parseHooks(config('(a+)+$')),
    (err: unknown) =>
      err instanceof HooksConfigError &&
      /hooks\.PreToolUse\[0\]\.matcher: the matcher "\(a\+\)\+\$" repeats a group that holds a quantifier/.test(err.message) &&
      /use tool names separated by \|/.test(err.message),
  );
  const agent = new Agent({ llm: new LLM({}) });
  assert.throws(() => conversationStart({ agent, workspace: '/tmp', hooks: config('(a|aa)+') as never }), HooksConfigError);
});

test('the workflow does not run an unsafe matcher that reaches it; a safe one matches as before', () => {
  const hook = { type: 'command' as const, command: 'true' };
  // Built by hand (parseHooks would refuse it): `(ter+)+minal` does match "terminal" when run.
  const config = { hooks: { PreToolUse: [{ matcher: '(ter+)+minal', hooks: [hook] }] } };
  assert.equal(hasUnsafeMatcher(config, 'PreToolUse'), true);
  assert.equal(hasUnsafeMatcher(config, 'UserPromptSubmit'), false);
  assert.deepEqual(matchingHooks(config, 'PreToolUse', 'terminal'), [hook], 'histories from before the rule: it ran');
  assert.deepEqual(matchingHooks(config, 'PreToolUse', 'terminal', { skipUnsafe: true }), []);
  // Not run at all: a name that would take exponential time returns at once.
  assert.equal(matcherMatches('(a+)+$', `${'a'.repeat(64)}!`, { skipUnsafe: true }), false);
  const safe = { hooks: { PreToolUse: [{ matcher: 'mcp__.*', hooks: [hook] }] } };
  assert.equal(hasUnsafeMatcher(safe, 'PreToolUse'), false);
  assert.deepEqual(matchingHooks(safe, 'PreToolUse', 'mcp__x__y', { skipUnsafe: true }), [hook]);
});
