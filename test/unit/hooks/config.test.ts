// The hooks file: what parses, what is refused with which message, and which hooks an event picks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FaheemError } from '../../../src/core/errors.js';
import {
  HOOK_EVENTS,
  HooksConfigError,
  hasHooks,
  hooksActivityTimeoutSeconds,
  matcherMatches,
  matchingHooks,
  parseHooks,
  parseHooksFile,
  safeParseHooks,
} from '../../../src/hooks/config.js';

const cmd = (command: string, extra: object = {}) => ({ type: 'command', command, ...extra });

describe('parseHooks', () => {
  test('a Claude Code hooks file parses into plain data', () => {
    const config = parseHooksFile(
      JSON.stringify({
        permissions: { allow: [] }, // other settings.json keys are ignored
        hooks: {
          PreToolUse: [
            { matcher: 'terminal|file_editor', hooks: [cmd('./policy.sh', { timeout: 30, onFailure: 'block', statusMessage: 'x' })] },
          ],
          PostToolUse: [{ hooks: [cmd('echo done')] }],
          UserPromptSubmit: [{ hooks: [cmd('date')] }],
          Stop: [],
          SessionStart: [{ matcher: '', hooks: [cmd('cat notes.md')] }],
        },
      }),
    );
    assert.deepEqual(config.hooks.PreToolUse, [
      { matcher: 'terminal|file_editor', hooks: [{ type: 'command', command: './policy.sh', timeout: 30, onFailure: 'block' }] },
    ]);
    assert.deepEqual(config.hooks.PostToolUse, [{ hooks: [{ type: 'command', command: 'echo done' }] }]);
    assert.deepEqual(Object.keys(config.hooks), ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SessionStart']);
    assert.deepEqual(parseHooks({ hooks: {} }), { hooks: {} });
  });

  test('an unknown event is refused, naming the known ones', () => {
    const err = (() => {
      try {
        parseHooks({ hooks: { PreToolUse: [], Notification: [{ hooks: [cmd('x')] }] } });
      } catch (e) {
        return e as Error;
      }
      throw new Error('no error');
    })();
    assert.ok(err instanceof HooksConfigError && err instanceof FaheemError);
    assert.equal((err as HooksConfigError).code, 'hooks_config');
    assert.equal(err.name, 'HooksConfigError');
    assert.match(
      err.message,
      /"Notification" is not a hook event faheemcode runs; the known events are PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart/,
    );
  });

  test('each kind of mistake says where and what', () => {
    const cases: [unknown, RegExp][] = [
      [null, /must be an object like \{"hooks"/],
      [{}, /hooks: is missing \(must be an object\)/],
      [{ hooks: { PreToolUse: {} } }, /hooks.PreToolUse: must be a list/],
      [
        { hooks: { PreToolUse: [{ hooks: [{ type: 'prompt', prompt: 'x' }] }] } },
        /PreToolUse\[0\]\.hooks\[0\]\.type: only hooks of type "command"/,
      ],
      [{ hooks: { PreToolUse: [{ hooks: [cmd('  ')] }] } }, /hooks\[0\]\.command: must be a non-empty command line/],
      [{ hooks: { Stop: [{ hooks: [cmd('x', { timeout: 0 })] }] } }, /timeout: must be a positive number of seconds/],
      [{ hooks: { Stop: [{ hooks: [cmd('x', { timeout: 99999 })] }] } }, /timeout: must be at most 3600 seconds/],
      [{ hooks: { Stop: [{ hooks: [cmd('x', { onFailure: 'deny' })] }] } }, /onFailure/],
      [
        { hooks: { PreToolUse: [{ matcher: 'file_(editor', hooks: [cmd('x')] }] } },
        /PreToolUse\[0\]\.matcher: the matcher "file_\(editor" is not a valid regular expression/,
      ],
      [{ hooks: { PreToolUse: [{ matcher: 'terminal' }] } }, /PreToolUse\[0\].hooks: is missing \(must be a list\)/],
    ];
    for (const [value, message] of cases) {
      const r = safeParseHooks(value);
      assert.equal(r.ok, false, JSON.stringify(value));
      assert.match((r as { error: string }).error, /^invalid hooks configuration: /);
      assert.match((r as { error: string }).error, message, JSON.stringify(value));
      assert.throws(() => parseHooks(value), HooksConfigError);
    }
    assert.throws(() => parseHooksFile('{"hooks": '), /the hooks file is not valid JSON/);
  });
});

describe('matchers', () => {
  test('tool-name patterns as in Claude Code', () => {
    const cases: [string | undefined, string, boolean][] = [
      [undefined, 'terminal', true],
      ['', 'anything', true],
      ['*', 'mcp__x__y', true],
      ['terminal', 'terminal', true],
      ['terminal', 'terminal2', false], // plain names match exactly
      ['terminal|file_editor', 'file_editor', true],
      ['terminal|file_editor', 'think', false],
      ['file', 'file_editor', false],
      ['mcp__github__.*', 'mcp__github__create_issue', true],
      ['mcp__github__.*', 'mcp__gitlab__x', false],
      ['^file_', 'file_editor', true],
      ['edit', 'file_editor', false],
      ['.*edit.*', 'file_editor', true],
      ['(', 'x', false], // invalid (parseHooks refuses it): matches nothing
    ];
    for (const [m, tool, want] of cases) assert.equal(matcherMatches(m, tool), want, `${m} ~ ${tool}`);
  });

  test('matchingHooks picks by tool for tool events, takes all for the others, once each, in order', () => {
    const config = parseHooks({
      hooks: {
        PreToolUse: [
          { matcher: 'terminal', hooks: [cmd('a'), cmd('b')] },
          { matcher: 'file_editor', hooks: [cmd('c')] },
          { matcher: '*', hooks: [cmd('a'), cmd('d', { timeout: 5 })] },
        ],
        UserPromptSubmit: [{ matcher: 'terminal', hooks: [cmd('u')] }],
      },
    });
    assert.deepEqual(
      matchingHooks(config, 'PreToolUse', 'terminal').map((h) => h.command),
      ['a', 'b', 'd'],
    );
    assert.deepEqual(
      matchingHooks(config, 'PreToolUse', 'file_editor').map((h) => h.command),
      ['c', 'a', 'd'],
    );
    assert.deepEqual(
      matchingHooks(config, 'PreToolUse').map((h) => h.command),
      ['a', 'd'],
    );
    assert.deepEqual(matchingHooks(config, 'PostToolUse', 'terminal'), []);
    assert.deepEqual(
      matchingHooks(config, 'UserPromptSubmit').map((h) => h.command),
      ['u'],
    ); // matcher ignored
    assert.deepEqual(matchingHooks(undefined, 'Stop'), []);
    assert.equal(hasHooks(config, 'PreToolUse'), true);
    assert.equal(hasHooks(config, 'Stop'), false);
    assert.equal(hooksActivityTimeoutSeconds(matchingHooks(config, 'PreToolUse', 'terminal')), 75);
    assert.equal(hooksActivityTimeoutSeconds([], 60), 75);
    assert.equal(HOOK_EVENTS.length, 5);
  });
});
