// `faheem console` in Chromium against a real dev server: the list, a transcript with model output
// shown as text, the controls acting on real conversations, and the requests it refuses.
// Drives Debian's chromium headless through playwright-core (installed by .ci/run).
import assert from 'node:assert/strict';
import { execa, type ResultPromise } from 'execa';
import http from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { Agent, Conversation, LLM, type CreateOptions } from '../../src/client/client.js';
import { countdownScript, type RecordedRequest, type ScriptedReply } from '../../src/testing/scripted-model.js';
import { startConsole } from '../../src/console-server/server.js';
import type { ConversationInput } from '../../src/core/types.js';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers.js';
import { ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp-dirs.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const XSS = 'Careful: <script>window.__xss=1</script> and <img src=x onerror="window.__xss=1"> are just text.';
const STREAMED =
  'Streaming words arrive in the page one at a time while the model call is still running, and then the reply lands as an event.';
let h: Harness;
let browser: Browser;
let consoleProcess: ResultPromise;
let url: string;
let origin: string;
let token: string;

/** One model for the whole file: what it answers depends on the conversation's first message. */
// The countdown's reply after its first step is held at the gate 'countdown' (its stream open):
// the page's Pause lands while that call is under way, however long the page takes to open.
const countdown = countdownScript({ delayMs: 0, gates: { 1: 'countdown' } });
function script(req: RecordedRequest): ScriptedReply {
  const first = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
  const tools = req.body.messages.filter((m) => m.role === 'tool').length;
  if (first.startsWith('XSS')) return { content: XSS };
  if (first.startsWith('Risky') || first.startsWith('Run the test suite')) {
    return tools === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo approved-and-ran' } }] }
      : { content: 'The command ran.' };
  }
  if (first.startsWith('Tour')) {
    if (tools === 0)
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'printf "alpha\\nbeta\\n" > notes.txt && wc -l notes.txt' } }] };
    if (tools === 1)
      return {
        content: 'Now the greeting script.',
        toolCalls: [
          {
            name: 'file_editor',
            arguments: { command: 'create', path: 'hello.py', file_text: 'def greet(name):\n    return f"Hello, {name}!"\n' },
          },
        ],
      };
    if (tools === 2)
      return {
        toolCalls: [
          {
            name: 'file_editor',
            arguments: { command: 'str_replace', path: 'hello.py', old_str: 'Hello, {name}!', new_str: 'Hello, {name}! Welcome.' },
          },
        ],
      };
    return { content: 'notes.txt has 2 lines and hello.py greets by name. Run `python3 -c "import hello; print(hello.greet(\'you\'))"`.' };
  }
  if (first.startsWith('Sub:')) return { content: 'The workspace is empty.' };
  if (first.startsWith('Count the TODO')) {
    return tools === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'grep -rc TODO . || echo "no TODO comments"' } }] }
      : { content: 'There are no TODO comments in this workspace.' };
  }
  if (first.startsWith('Write a haiku')) {
    return tools === 0
      ? {
          toolCalls: [
            {
              name: 'file_editor',
              arguments: {
                command: 'create',
                path: 'haiku.txt',
                file_text: 'A worker restarts\nthe workflow keeps its place\nnothing is lost here\n',
              },
            },
          ],
        }
      : { content: 'haiku.txt holds a haiku about durable workflows.' };
  }
  if (first.startsWith('Delegate')) {
    return tools === 0
      ? { toolCalls: [{ name: 'delegate', arguments: { task: 'Sub: look at the workspace' } }] }
      : { content: 'Done with help.' };
  }
  if (first.startsWith('Stream')) {
    if (tools === 0)
      return {
        content: STREAMED,
        wordByWord: true,
        // Three words out, then held until the test has seen them in the page.
        gate: 'stream',
        gateAfter: 3,
        toolCalls: [
          { name: 'terminal', arguments: { command: 'echo first-line; while [ ! -f go ]; do sleep 0.05; done; echo second-line' } },
        ],
      };
    return { content: 'Both lines printed.' };
  }
  return countdown(req) as ScriptedReply;
}

before(async () => {
  h = await startHarness({ name: 'console', script });
  await h.startWorker();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  let out = '';
  consoleProcess = execa('node', [path.join(ROOT, 'bin/faheem.js'), 'console', '--port', '0'], {
    cwd: ROOT,
    env: { ...h.env, TEMPORAL_UI_URL: 'http://127.0.0.1:9' },
    reject: false,
    all: true,
  });
  consoleProcess.all?.on('data', (d: Buffer) => (out += d.toString()));
  url = await waitFor(
    'the console prints its URL',
    () => {
      if (consoleProcess.exitCode !== null) throw new Error(`faheem console exited: ${out}`);
      return /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(out)?.[0];
    },
    60_000,
  );
  const u = new URL(url);
  origin = u.origin;
  token = u.searchParams.get('token')!;
});
after(async () => {
  consoleProcess?.kill('SIGTERM');
  await consoleProcess;
  await browser?.close();
  await h?.close();
});

const agent = (tools = ['terminal', 'file_editor']) => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools });
async function create(firstMessage: string, extra: Partial<CreateOptions> = {}): Promise<Conversation> {
  return Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage, run: true, ...extra });
}

/** The requests of a page opened by openConversation that failed (4xx, 5xx), as `status path`. */
const failedRequests = new WeakMap<Page, string[]>();

/** Waits for `locator` to show; when it does not, the error carries what the page showed instead. */
async function shows(page: Page, locator: Locator, timeout = 30_000): Promise<void> {
  try {
    await locator.waitFor({ timeout });
  } catch (err) {
    const shown = await page
      .locator('main')
      .innerText({ timeout: 2_000 })
      .catch((e: Error) => `(no text: ${e.message})`);
    throw new Error(
      `${(err as Error).message}\nthe page showed:\n${shown.slice(-3000)}\nfailed requests: ${(failedRequests.get(page) ?? []).join(', ')}`,
      {
        cause: err,
      },
    );
  }
}

async function openConversation(id: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const failed: string[] = [];
  failedRequests.set(page, failed);
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(url);
  // Listed by id (visibility may take a moment to show a new workflow).
  await page
    .getByRole('link', { name: new RegExp(id) })
    .first()
    .click({ timeout: 30_000 });
  await page.getByRole('heading', { name: id }).waitFor({ timeout: 10_000 });
  return page;
}

/**
 * Waits until the page's controls are enabled (true) or disabled (false) as said: they follow the
 * status the page last fetched.
 */
async function controlsAre(page: Page, expected: Record<string, boolean>): Promise<void> {
  const seen = async () => {
    const out: Record<string, boolean> = {};
    for (const name of Object.keys(expected)) out[name] = await page.getByRole('button', { name, exact: true }).isEnabled();
    return out;
  };
  await waitFor(
    `controls ${JSON.stringify(expected)}`,
    async () => JSON.stringify(await seen()) === JSON.stringify(expected),
    15_000,
    100,
  ).catch(async (err: unknown) => {
    throw new Error(`controls are ${JSON.stringify(await seen())}, not ${JSON.stringify(expected)}`, { cause: err });
  });
}

/** A raw request, so that the Host and Origin headers are exactly what the test says. */
function request(
  pathname: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const u = new URL(pathname, origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

test('the list shows a conversation by id; model output with <script> and onerror= is shown as text, never run', async () => {
  const conversation = await create('XSS check: say something with markup');
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const page = await openConversation(conversation.id);
  await page.getByText(XSS).first().waitFor({ timeout: 30_000 });
  assert.equal(await page.evaluate('typeof window.__xss'), 'undefined');
  assert.equal(await page.locator('.transcript script, .transcript img').count(), 0);
  // The token has left the address bar (history, bookmarks, screen shares); a reload still opens it.
  assert.ok(!page.url().includes('token='), page.url());
  assert.ok(!page.url().includes(token), page.url());
  await page.reload();
  await page.getByText(XSS).first().waitFor({ timeout: 30_000 });
  const link = await page.getByRole('link', { name: 'Open in Temporal Web UI' }).getAttribute('href');
  assert.equal(link, `http://127.0.0.1:9/namespaces/${h.namespace}/workflows/${conversation.id}`);
  // Nothing the page asked for was missing: its icon included (a favicon 404 was the one).
  assert.deepEqual(failedRequests.get(page), []);
  await page.close();
});

/** A conversation's start input (its first history event), decoded. */
async function startInput(id: string): Promise<ConversationInput> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const [input] = await decodeArrayFromPayloads(h.client.options.loadedDataConverter, payloads);
  return input as ConversationInput;
}

test('New conversation: the form starts one as `faheem start` does, it runs to finished, and the list shows its title, workspace and model', async () => {
  const workspace = await h.workspace();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  await page.getByRole('link', { name: 'New conversation' }).click();
  await page.getByRole('heading', { name: 'New conversation' }).waitFor({ timeout: 10_000 });
  // The folder the console was started in is where the form begins.
  await waitFor('the default workspace', async () => (await page.getByLabel('Workspace').inputValue()) === ROOT, 10_000);
  const message = 'Tour: count the lines of notes.txt and write a greeting script';
  await page.getByLabel('First message').fill(message);
  const start = page.getByRole('button', { name: 'Start', exact: true });
  const refused = async (pattern: RegExp) => {
    await start.click();
    await page.getByRole('alert').filter({ hasText: pattern }).waitFor({ timeout: 10_000 });
  };
  // Bad input says why, in the page; nothing starts.
  await page.getByLabel('Workspace').fill(path.join(workspace, 'missing'));
  await refused(/missing does not exist: create it or choose another folder/);
  await writeFile(path.join(workspace, 'a-file'), '');
  await page.getByLabel('Workspace').fill(path.join(workspace, 'a-file'));
  await refused(/a-file is not a directory/);
  await page.getByLabel('Workspace').fill('relative/folder');
  await refused(/absolute path/);
  await page.getByLabel('Workspace').fill(workspace);
  await page.getByLabel('Conversation id', { exact: true }).fill('../escape');
  await refused(/is not valid/);
  await page.getByLabel('Model').fill('not a model');
  await page.getByLabel('Conversation id', { exact: true }).fill('');
  await refused(/a model name has no spaces/);
  await page.getByLabel('Model').fill('');
  const id = `console-form-${Date.now()}`;
  await page.getByLabel('Conversation id', { exact: true }).fill(id);
  await page.getByLabel('Ask before actions').selectOption('never');
  await start.click();
  // It opens the new conversation, which runs to finished on the worker's model.
  await page.getByRole('heading', { name: id }).waitFor({ timeout: 30_000 });
  const conversation = await Conversation.attach(h.client, id);
  const done = await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  assert.equal(done.workspace, workspace);
  await page
    .getByText(/hello\.py greets by name/)
    .first()
    .waitFor({ timeout: 30_000 });
  // The edit's card is a unified diff, its line numbers from the observation.
  await page.locator('pre.diff').filter({ hasText: '@@ -2,1 +2,1 @@ hello.py' }).waitFor({ timeout: 10_000 });
  await page.locator('pre.diff').filter({ hasText: '+    return f"Hello, {name}! Welcome."' }).waitFor({ timeout: 10_000 });
  await page.locator('pre.diff').filter({ hasText: '-    return f"Hello, {name}!"' }).first().waitFor({ timeout: 10_000 });
  // The list shows the title, the workspace and the model the calls used (not "default").
  const row = page.locator('.rows a.row').filter({ hasText: id });
  await row.locator('.row-title').filter({ hasText: message }).waitFor({ timeout: 30_000 });
  await row.locator('.row-workspace').filter({ hasText: workspace }).waitFor({ timeout: 10_000 });
  // (The worker's LLM_MODEL is openai/gpt-4o-mini; its calls name the model they used.)
  await row.locator('.row-meta').filter({ hasText: 'gpt-4o-mini' }).waitFor({ timeout: 30_000 });
  assert.ok(!(await row.innerText()).includes('default'), await row.innerText());
  await page.locator('.metrics').filter({ hasText: 'gpt-4o-mini' }).waitFor({ timeout: 10_000 });
  await controlsAre(page, { Pause: false, 'Pause now': false, Resume: false, Send: true, Close: true });

  // The same start as the CLI's: the input differs only in what was asked differently.
  const cli = await h.cli(['start', message, '--workspace', workspace]);
  const [fromForm, fromCli] = await Promise.all([startInput(id), startInput(cli.stdout.trim())]);
  assert.deepEqual(fromForm, fromCli);
  await page.close();
});

test('search finds a conversation by title, id or workspace; with the status filter too', async () => {
  const workspace = await h.workspace();
  const wanted = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'XSS search: a uniquely named zebra task',
    run: true,
    id: `console-search-${Date.now()}`,
  });
  await wanted.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const other = await create('XSS search: something else entirely');
  await other.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  const titles = () => page.locator('.rows .row-title').allTextContents();
  const shows = async (what: string, expected: string[]) =>
    waitFor(`the list for ${what}`, async () => JSON.stringify(await titles()) === JSON.stringify(expected), 15_000).catch(
      async (err: unknown) => {
        throw new Error(`the list for ${what} shows ${JSON.stringify(await titles())}`, { cause: err });
      },
    );
  const search = page.getByLabel('Search');
  const title = 'XSS search: a uniquely named zebra task';
  await search.fill('ZEBRA uniquely');
  await shows('title words', [title]);
  await search.fill(wanted.id);
  await shows('the id', [title]);
  await search.fill(path.basename(workspace));
  await shows('the workspace', [title]);
  // A conversation with no title in its memo (started without a message, or before titles were kept) lists by its id.
  const untitled = await Conversation.create(h.client, { agent: agent(), workspace, id: `console-untitled-${Date.now()}` });
  await search.fill(untitled.id);
  await shows('an untitled one', [untitled.id]);
  await untitled.close();
  await search.fill('zebra');
  await page.getByLabel('Status').selectOption('running');
  await shows('zebra and running', []);
  await page.getByText('No conversations with status running matching “zebra”.').waitFor({ timeout: 10_000 });
  await page.getByLabel('Status').selectOption('finished');
  await shows('zebra and finished', [title]);
  await search.fill('');
  await page.getByLabel('Status').selectOption('');
  await waitFor('every conversation again', async () => (await titles()).length > 2, 15_000);
  await page.close();
});

test('Pause, Send (while paused), Resume act on a running conversation', async () => {
  const conversation = await create('Create countdown.txt with 100 down to 1');
  const held = await h.model.reached('countdown');
  const page = await openConversation(conversation.id);
  // Running: the pauses apply, Resume does not; the difference between the two is written beside them.
  await controlsAre(page, { Pause: true, 'Pause now': true, Resume: false, Send: true, Close: true });
  assert.equal(await page.getByRole('button', { name: 'Approve', exact: true }).count(), 0);
  assert.match(await page.locator('#pause-help').innerText(), /Pause now also interrupts the running command/);
  assert.equal(await page.getByRole('button', { name: 'Pause now', exact: true }).getAttribute('aria-describedby'), 'pause-help');
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await conversation.waitUntil((s) => s.status === 'paused', 100, 30_000);
  await waitFor('the held call cancelled by the pause', () => held.aborted);
  await page.locator('.conv-head .status').filter({ hasText: 'paused' }).waitFor({ timeout: 10_000 });
  await controlsAre(page, { Pause: false, 'Pause now': false, Resume: true, Send: true, Close: true });

  await page.getByLabel('Message').fill("Actually, stop. Create hello.txt with 'Hello, World!' instead.");
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const paused = await conversation.waitUntil((s) => s.pendingMessages === 1, 100, 30_000);
  assert.equal(paused.status, 'paused');
  await waitFor('the message box emptied once sent', async () => (await page.getByLabel('Message').inputValue()) === '', 10_000);

  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  const done = await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  assert.equal(done.pendingMessages, 0);
  // The transcript shows the file edit as a diff and the final reply.
  await page.getByText('+Hello, World!').first().waitFor({ timeout: 30_000 });
  await page
    .getByText(/I created hello\.txt/)
    .first()
    .waitFor({ timeout: 30_000 });

  // Close ends it; the buttons say so by being disabled.
  await controlsAre(page, { Pause: false, 'Pause now': false, Resume: false, Send: true, Close: true });
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  await waitFor('closed', () => conversation.isClosed(), 30_000, 200);
  await page.locator('.conv-head .status').filter({ hasText: '(closed)' }).waitFor({ timeout: 10_000 });
  await controlsAre(page, { Pause: false, 'Pause now': false, Resume: false, Send: false, Close: false });
  // The list says its order, and a closed row says when it closed (its place in that order).
  await page.locator('.list-order').filter({ hasText: 'open ones newest first, then closed ones by when they closed' }).waitFor();
  await page
    .locator('.rows a.row')
    .filter({ hasText: conversation.id })
    .locator('.row-meta')
    .filter({ hasText: /· closed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/ })
    .waitFor({ timeout: 30_000 });
  await page.close();
});

test('Pause now, and an action that fails shows its error', async () => {
  const conversation = await create('Create countdown.txt with 100 down to 1', { id: `console-now-${Date.now()}` });
  await h.model.reached('countdown'); // (the first test's call left the gate when its pause cancelled it)
  const page = await openConversation(conversation.id);
  await page.getByRole('button', { name: 'Pause now', exact: true }).click();
  // On a failure, say what the conversation and the page showed (an action the server refused shows an alert).
  await conversation
    .waitUntil((s) => s.status === 'paused', 100, 30_000)
    .catch(async (err: unknown) => {
      const state = await conversation.state();
      const events = (await conversation.events()).map((e) => e.kind).join(' ');
      const alerts = await page.getByRole('alert').allTextContents();
      throw new Error(`not paused: status ${state.status}, events ${events}; page alerts ${JSON.stringify(alerts)}`, { cause: err });
    });
  const events = await conversation.events();
  assert.ok(events.some((e) => e.kind === 'pause' && e.now));
  // Nothing waits for confirmation: approving is refused, and the page says why.
  const r = await page.evaluate(
    async ([id, t]) => {
      const res = await fetch(`/api/conversations/${id}/approve`, {
        method: 'POST',
        headers: { 'X-Faheem-Token': t!, 'Content-Type': 'application/json' },
        body: '{}',
      });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    },
    [conversation.id, token],
  );
  assert.equal(r.status, 409, JSON.stringify(r));
  assert.ok(r.body.error);
  await page.getByLabel('Message').fill('   ');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: /send/ }).waitFor({ timeout: 10_000 });
  await conversation.close();
  await page.close();
});

test('Approve runs the action that waits; Reject sends the reason to the model', async () => {
  const approved = await create('Risky: run a command', { confirmationPolicy: 'always' });
  await approved.waitUntil((s) => s.status === 'waiting_for_confirmation', 100, 60_000);
  const page = await openConversation(approved.id);
  await page.getByText('echo approved-and-ran').first().waitFor({ timeout: 10_000 });
  await controlsAre(page, { Approve: true, Reject: true, Pause: false, 'Pause now': false, Resume: false, Close: true });
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await approved.waitUntil((s) => s.status === 'finished', 100, 60_000);
  await page.locator('pre.output').filter({ hasText: 'approved-and-ran' }).first().waitFor({ timeout: 30_000 });
  await page.close();

  const rejected = await create('Risky: run a command', { confirmationPolicy: 'always' });
  await rejected.waitUntil((s) => s.status === 'waiting_for_confirmation', 100, 60_000);
  const page2 = await openConversation(rejected.id);
  await page2.getByLabel('Reason').fill('not on this machine');
  await page2.getByRole('button', { name: 'Reject', exact: true }).click();
  await rejected.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const obs = (await rejected.events()).find((e) => e.kind === 'observation');
  assert.ok(obs && obs.kind === 'observation' && obs.content.includes('not on this machine'), JSON.stringify(obs));
  await page2.close();
});

test('requests without the token get 401, with a wrong one 403; cross-origin and foreign-Host requests are refused', async () => {
  const conversation = await create('XSS again');
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const host = new URL(origin).host;
  const api = '/api/conversations';
  assert.equal((await request(api, { headers: { Host: host } })).status, 401);
  assert.equal((await request(api, { headers: { Host: host, 'X-Faheem-Token': 'wrong' } })).status, 403);
  assert.equal((await request(api, { headers: { Host: host, 'X-Faheem-Token': `${token.slice(0, -1)}x` } })).status, 403);
  assert.equal((await request('/', { headers: { Host: host } })).status, 401);
  assert.equal((await request('/?token=nope', { headers: { Host: host } })).status, 403);
  // The icon holds nothing secret: served without the token, at the name browsers guess too.
  for (const icon of ['/favicon.svg', '/favicon.ico']) {
    const answer = await request(icon, { headers: { Host: host } });
    assert.equal(answer.status, 200, icon);
    assert.equal(answer.headers['content-type'], 'image/svg+xml');
    assert.match(answer.body, /^<svg /);
  }
  const ok = await request(api, { headers: { Host: host, 'X-Faheem-Token': token } });
  assert.equal(ok.status, 200);
  assert.match(String(ok.headers['content-security-policy']), /script-src 'self'/);
  assert.equal(ok.headers['x-content-type-options'], 'nosniff');
  assert.equal(ok.headers['access-control-allow-origin'], undefined);
  // DNS rebinding: another name that resolves here carries its own Host header.
  assert.equal((await request(api, { headers: { Host: `evil.example:${new URL(origin).port}`, 'X-Faheem-Token': token } })).status, 403);
  // A cross-site POST (even one that somehow had the token) does not close the conversation.
  const close = `${api}/${conversation.id}/close`;
  const json = { Host: host, 'X-Faheem-Token': token, 'Content-Type': 'application/json' };
  assert.equal((await request(close, { method: 'POST', headers: { ...json, Origin: 'http://evil.example' }, body: '{}' })).status, 403);
  assert.equal((await request(close, { method: 'POST', headers: { ...json, 'Sec-Fetch-Site': 'cross-site' }, body: '{}' })).status, 403);
  assert.equal((await request(close, { method: 'POST', headers: { ...json, 'Content-Type': 'text/plain' }, body: '{}' })).status, 415);
  const bad = await request(`${api}/${conversation.id}/send`, { method: 'POST', headers: json, body: '{"text": 5}' });
  assert.equal(bad.status, 400);
  assert.ok((JSON.parse(bad.body) as { error: string }).error);
  assert.equal((await request(`${api}/${conversation.id}/launch`, { method: 'POST', headers: json, body: '{}' })).status, 404);
  assert.equal((await request(`${api}/no-such-conversation`, { headers: json })).status, 404);
  // Careless input gets a clear 4xx, and the server stays up.
  assert.equal((await request(`${api}/${conversation.id}/send`, { method: 'POST', headers: json, body: '{"text": ' })).status, 400);
  const big = await request(`${api}/${conversation.id}/send`, { method: 'POST', headers: json, body: 'x'.repeat(2_000_000) }).catch(() => ({
    status: 413,
  }));
  assert.equal(big.status, 413);
  assert.equal((await request(`${api}/%E0%A4%A`, { headers: json })).status, 400);
  assert.equal((await request(`${api}?pageSize=abc`, { headers: json })).status, 400);
  assert.equal((await request(api, { method: 'DELETE', headers: json })).status, 405);
  assert.equal((await request(api, { headers: json })).status, 200);
  assert.equal(await conversation.isClosed(), false);
  // A second console on the same port says so and exits.
  const again = await h.cli(['console', '--port', new URL(origin).port], { reject: false });
  assert.notEqual(again.exitCode, 0);
  assert.match(again.stderr, /is in use: pass another --port/);
  // Its own origin may.
  assert.equal((await request(close, { method: 'POST', headers: { ...json, Origin: origin }, body: '{}' })).status, 200);
  await waitFor('closed', () => conversation.isClosed(), 30_000, 200);
});

test("a streaming reply appears in the page before the call completes; a running command's output before it ends", async () => {
  const workspace = await h.workspace();
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace,
    firstMessage: 'Stream a reply, then run a slow command',
    run: true,
    id: `console-stream-${Date.now()}`,
  });
  const page = await openConversation(conversation.id);
  const streaming = page.locator('.msg.streaming');
  await streaming.filter({ hasText: 'Streaming words arrive' }).waitFor({ timeout: 30_000 });
  // The proof that the call is still under way: the reply is not an event yet.
  assert.equal(
    (await conversation.events()).some((e) => e.kind === 'action' || (e.kind === 'message' && e.source === 'agent')),
    false,
  );
  const partial = await streaming.innerText();
  assert.ok(!partial.includes('lands as an event'), partial);
  h.model.release('stream');
  // The reply lands: the event replaces the streamed block.
  await page.locator('.msg-agent:not(.streaming)').filter({ hasText: STREAMED }).waitFor({ timeout: 30_000 });
  assert.equal(await streaming.count(), 0);
  // The command's first line shows while it still runs.
  await page.locator('pre.output.live').filter({ hasText: 'first-line' }).waitFor({ timeout: 30_000 });
  assert.equal(
    (await conversation.events()).some((e) => e.kind === 'observation'),
    false,
  );
  await writeFile(path.join(workspace, 'go'), '');
  await page.locator('pre.output:not(.live)').filter({ hasText: 'second-line' }).waitFor({ timeout: 30_000 });
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  // The landed reply (the streamed block shows the same words a moment before it lands).
  await shows(page, page.locator('.msg-agent:not(.streaming)').filter({ hasText: 'Both lines printed.' }));
  assert.equal(await streaming.count(), 0);
  await page.close();
});

test('a follow stream ends when the browser goes away, and at once for a closed conversation', async () => {
  const server = await startConsole({ client: h.client, port: 0 });
  try {
    const conversation = await create('XSS follow');
    await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
    const abort = new AbortController();
    const res = await fetch(`${server.origin}/api/conversations/${conversation.id}/follow`, {
      headers: { 'X-Faheem-Token': server.token },
      signal: abort.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    await waitFor('the reply in the stream', async () => {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${text}`);
      text += decoder.decode(value, { stream: true });
      return text.split('\n').some((l) => l.includes('"source":"agent"') && (JSON.parse(l) as { text?: string }).text === XSS);
    });
    assert.equal(server.followers(), 1);
    abort.abort();
    await waitFor('the follow ended on the server', () => server.followers() === 0, 10_000);

    await conversation.close();
    await waitFor('closed', () => conversation.isClosed(), 30_000, 200);
    const closed = await fetch(`${server.origin}/api/conversations/${conversation.id}/follow?from=1`, {
      headers: { 'X-Faheem-Token': server.token },
    });
    const lines = (await closed.text())
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { index?: number; end?: boolean; closed?: boolean });
    assert.equal(lines[0]?.index, 1);
    assert.deepEqual(lines.at(-1), { end: true, closed: true });
    assert.equal(server.followers(), 0);
  } finally {
    await server.close();
  }
});

test('a sub-agent shows under its parent in the list and in the tree; the list pages through visibility', async () => {
  const parent = await create('Delegate: look at the workspace with a sub-agent', { agent: agent(['terminal', 'delegate']) });
  await parent.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const child = `${parent.id}.sub-1`;
  const page = await openConversation(parent.id);
  const parentItem = page.locator('.rows > li').filter({ has: page.getByRole('link', { name: new RegExp(parent.id) }) });
  await parentItem
    .locator('ul.children')
    .getByRole('link', { name: new RegExp(child) })
    .waitFor({ timeout: 30_000 });
  await page.locator('.subagents').getByRole('link', { name: child }).waitFor({ timeout: 30_000 });
  await page.locator('.subagents').getByRole('link', { name: child }).click();
  await page.getByRole('heading', { name: child }).waitFor({ timeout: 10_000 });
  await shows(page, page.locator('.msg-agent:not(.streaming)').filter({ hasText: 'The workspace is empty.' }));
  await page.close();

  // Pages: each a visibility request; the token of one gives the next, and they do not overlap.
  const get = async (q: string) => {
    const r = await request(`/api/conversations?${q}`, { headers: { Host: new URL(origin).host, 'X-Faheem-Token': token } });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as { conversations: { id: string; parentId: string | null }[]; nextPageToken: string | null };
  };
  const one = await get('pageSize=2');
  assert.equal(one.conversations.length, 2);
  assert.ok(one.nextPageToken);
  const two = await get(`pageSize=2&pageToken=${one.nextPageToken}`);
  assert.ok(two.conversations.length > 0);
  assert.ok(!two.conversations.some((c) => one.conversations.some((o) => o.id === c.id)));
  const all = await get('pageSize=200');
  assert.equal(all.conversations.find((c) => c.id === child)?.parentId, parent.id);
  const finished = await get('status=finished&pageSize=200');
  assert.ok(finished.conversations.length > 0 && finished.conversations.every((c) => all.conversations.some((a) => a.id === c.id)));
});

test('a narrow window shows the list above the conversation', async () => {
  const conversation = await create('Tour: count the lines of notes.txt and write a greeting script', { id: `console-tour-${Date.now()}` });
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const narrow = await openConversation(conversation.id, { width: 400, height: 800 });
  const list = await narrow.getByRole('navigation', { name: 'Conversations' }).boundingBox();
  const main = await narrow.getByRole('main').boundingBox();
  assert.ok(list && main && list.y + list.height <= main.y + 1, JSON.stringify({ list, main }));
  assert.ok(main.width <= 400, JSON.stringify(main));
  await narrow.close();
});

test('the README screenshot: the console after a run of 5 conversations', async () => {
  // A namespace of its own, so the list is what a person has after five tasks, not this file's tests.
  const docs = await startHarness({ name: 'console-docs', script });
  const server = await startConsole({ client: docs.client, port: 0 });
  try {
    await docs.startWorker();
    const make = async (firstMessage: string, extra: Partial<CreateOptions> = {}) =>
      Conversation.create(docs.client, { agent: agent(), workspace: await docs.workspace(), firstMessage, run: true, ...extra });
    const finished = (c: Conversation) => c.waitUntil((s) => s.status === 'finished', 100, 60_000);
    await finished(await make('Count the TODO comments in the workspace and list the files that have them'));
    await finished(await make('Write a haiku about durable workflows in haiku.txt'));
    const release = await make('Run the test suite before the release', { confirmationPolicy: 'always' });
    await release.waitUntil((s) => s.status === 'waiting_for_confirmation', 100, 60_000);
    const countdownRun = await make('Create countdown.txt with 100 down to 1');
    await docs.model.reached('countdown');
    await countdownRun.pause();
    await countdownRun.waitUntil((s) => s.status === 'paused', 100, 30_000);
    const tour = await make('Tour: count the lines of notes.txt and write a greeting script', { id: 'conv-greeting-script' });
    await finished(tour);

    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(server.url);
    await page.getByRole('link', { name: /conv-greeting-script/ }).click({ timeout: 30_000 });
    await page.getByRole('heading', { name: tour.id }).waitFor({ timeout: 10_000 });
    await page
      .getByText(/hello\.py greets by name/)
      .first()
      .waitFor({ timeout: 30_000 });
    await page.getByText('+def greet(name):').first().waitFor({ timeout: 10_000 });
    // Five rows, each with its title, and the models and costs asked in the background.
    await waitFor(
      'five rows with their model',
      async () => {
        const metas = await page.locator('.rows .row-meta').allTextContents();
        return metas.length === 5 && metas.every((m) => m.includes('openai/gpt-4o-mini') && m.includes('$'));
      },
      30_000,
    );
    // The README's screenshot is rewritten only when asked (FAHEEM_UPDATE_SCREENSHOTS=1).
    const dir = process.env.FAHEEM_UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs') : await tempDir('faheem-screens-');
    await mkdir(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'console.png') });
    await page.close();
    await countdownRun.close();
    await release.close();
  } finally {
    await server.close();
    await docs.close();
  }
});
