// src/mcp/config.ts: MCP config files, ${VAR} expansion, tool names.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expandEnv, mcpToolName, parseMcpConfigFile, parseMcpServers } from '../../../src/mcp/config.js';

describe('MCP config', () => {
  test('a config file with stdio and http servers; editor keys are tolerated and dropped', () => {
    const servers = parseMcpConfigFile(
      JSON.stringify({
        mcpServers: {
          github: {
            type: 'stdio',
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-github'],
            env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' },
            disabled: false,
            timeout: 60,
          },
          remote: { type: 'http', url: 'http://localhost:3000/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        },
        otherEditorSetting: true,
      }),
      '.faheem/mcp.json',
    );
    assert.deepEqual(servers, {
      github: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } },
      remote: { url: 'http://localhost:3000/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
    });
    assert.deepEqual(parseMcpServers({}), {});
  });

  test('invalid JSON and a wrong top level are readable errors naming the file', () => {
    assert.throws(() => parseMcpConfigFile('{"mcpServers": {', 'mcp.json'), /^InvalidRequestError: mcp\.json is not valid JSON: /);
    assert.throws(() => parseMcpConfigFile('{"servers": {}}', 'mcp.json'), /mcp\.json must be a JSON object of the form \{"mcpServers"/);
  });

  test('each problem is listed with its path', () => {
    const bad = {
      both: { command: 'x', url: 'http://y' },
      neither: { args: [] },
      'bad name!': { command: 'x' },
      ['x'.repeat(33)]: { command: 'x' },
      emptyCommand: { command: '' },
      badArgs: { command: 'x', args: ['ok', 7] },
      ftp: { url: 'ftp://example.com' },
      notObject: 'npx server',
    };
    let message = '';
    try {
      parseMcpConfigFile(JSON.stringify({ mcpServers: bad }), 'project/.mcp.json');
    } catch (err) {
      message = (err as Error).message;
    }
    assert.match(message, /^Invalid MCP server config in project\/\.mcp\.json:\n/);
    assert.match(message, /mcpServers\.both: has both "command" and "url"/);
    assert.match(message, /mcpServers\.neither: needs "command" .* or "url"/);
    assert.match(message, /server name "bad name!": server names may only use letters, digits, "_" and "-", 1 to 32 characters/);
    assert.match(message, /server name "x{33}"/);
    assert.match(message, /mcpServers\.emptyCommand\.command: "command" must not be empty/);
    assert.match(message, /mcpServers\.badArgs\.args\[1\]: must be a string/);
    assert.match(message, /mcpServers\.ftp\.url: "url" must be an http:\/\/ or https:\/\/ URL/);
    assert.match(message, /mcpServers\.notObject: must be an object/);
    assert.throws(
      () => parseMcpServers({ a: { command: 'x', url: 'http://y' } }, 'conversation settings'),
      /in conversation settings:\n {2}- a: has both/,
    );
  });

  test('expandEnv: ${VAR}, ${VAR:-default}, and a clear error for a missing variable', () => {
    const env = { TOKEN: 's3cret', EMPTY: '' };
    assert.equal(expandEnv('Bearer ${TOKEN}', env), 'Bearer s3cret');
    assert.equal(expandEnv('${MISSING:-fallback}/${EMPTY:-was empty}/${TOKEN:-unused}', env), 'fallback/was empty/s3cret');
    assert.equal(expandEnv('${EMPTY}', env), '');
    assert.equal(expandEnv('no variables, $TOKEN stays', env), 'no variables, $TOKEN stays');
    assert.throws(() => expandEnv('x ${NOPE} y', env), { message: "${NOPE} is not set in the worker's environment" });
  });

  test('mcpToolName sanitises and keeps names within 64 characters, distinct', () => {
    assert.equal(mcpToolName('github', 'create_issue'), 'mcp__github__create_issue');
    assert.equal(mcpToolName('everything', 'get-sum'), 'mcp__everything__get-sum');
    assert.equal(mcpToolName('fs', 'read file.v2/x'), 'mcp__fs__read_file_v2_x');
    const long1 = mcpToolName('server', 'a'.repeat(80) + '1');
    const long2 = mcpToolName('server', 'a'.repeat(80) + '2');
    assert.equal(long1.length, 64);
    assert.equal(long2.length, 64);
    assert.notEqual(long1, long2);
    assert.match(long1, /^mcp__server__a+_[0-9a-f]{8}$/);
    assert.equal(mcpToolName('s', 'x'.repeat(56)), `mcp__s__${'x'.repeat(56)}`); // exactly 64: kept as is
    assert.match(mcpToolName('s', 'x'.repeat(57)), /^mcp__s__x{47}_[0-9a-f]{8}$/);
  });
});
