// The Temporal Web UI shows a conversation readably: summaries, current details, activity summaries.
// Drives Debian's chromium headless through playwright-core (installed by .ci/run).
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { Script } from '../../src/testing/scripted-model.js';
import { ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';
import { tempDir } from '../support/temp-dirs.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let h: Harness;
let browser: Browser;

before(async () => {
  h = await startHarness({ name: 'web-ui', script: () => ({ content: 'ok' }), ui: true });
  await h.startWorker();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
after(async () => {
  await browser?.close();
  await h?.close();
});

test('the workflow list shows one row per conversation, with its status column (the streams stay out)', async () => {
  // Five conversations: three run to the end, one is paused mid-call, one waits for its first run.
  h.model.setScript((req) => {
    const first = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
    if (first.startsWith('Refactor')) return { content: 'Working on it', gate: 'hold' };
    return req.body.messages.some((m) => m.role === 'tool')
      ? { content: 'Done.' }
      : { toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] };
  });
  h.model.hold('hold');
  const agent = new Agent({ llm: new LLM({}), tools: ['terminal'] });
  const start = async (firstMessage: string, run: boolean) =>
    Conversation.create(h.client, { agent, workspace: await h.workspace(), firstMessage, run });
  const finished = await Promise.all(
    ['Add a README with build instructions', 'Fix the failing date parser test', 'List the files in the repository'].map((m) =>
      start(m, true),
    ),
  );
  // Each followed to its end, live: each has its stream workflow, which the list must not show.
  await Promise.all(
    finished.map(async (c) => {
      for await (const item of c.follow({ live: true, until: (s) => s.status === 'finished' })) void item;
    }),
  );
  const paused = await start('Refactor the HTTP client into its own module', true);
  await h.model.reached('hold');
  await paused.pause();
  await paused.waitUntil((s) => s.status === 'paused', 100, 60_000);
  h.model.release('hold');
  const idle = await start('Upgrade the dependencies', false);
  const ids = [...finished, paused, idle].map((c) => c.id);

  const page = await browser.newPage({ viewport: { width: 1400, height: 700 } });
  // The columns a person picks once with "Configure columns" (kept in the browser): the conversation's status.
  const columns = ['Status', 'Workflow ID', 'ConversationStatus', 'Type', 'Start', 'End'].map((label, i) => ({
    label,
    pinned: i < 2,
  }));
  await page.addInitScript(
    `localStorage.setItem('namespace-workflow-table-columns', ${JSON.stringify(JSON.stringify({ default: columns }))})`,
  );
  await page.goto(`${h.server.uiUrl}/namespaces/default/workflows`);
  await waitFor(
    'every conversation in the list',
    async () => {
      const text = await page.evaluate('document.body.innerText').then(String);
      return ids.every((id) => text.includes(id)) && text.includes('paused') ? text : undefined;
    },
    60_000,
    250,
  );
  const text = String(await page.evaluate('document.body.innerText'));
  assert.ok(!text.includes('::live') && !text.includes('liveStream'), 'no stream workflow in the list');
  const dir = process.env.FAHEEM_UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs') : await tempDir('faheem-screens-');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, 'web-ui-list.png'), fullPage: true });
  await Promise.all([...finished, paused, idle].map((c) => c.close()));
});

test('a conversation reads like a log in the Web UI', async () => {
  let turn = 0;
  const script: Script = () =>
    turn++ === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "hello from the agent" > hello.txt' } }] }
      : { content: 'Created hello.txt.' };
  h.model.setScript(script);
  const conversation = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor'] }),
    workspace: await h.workspace(),
    firstMessage: 'Write a greeting into hello.txt',
    run: true,
  });
  await conversation.waitUntil((s) => s.status === 'finished', 100, 60_000);

  const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  await page.goto(`${h.server.uiUrl}/namespaces/default/workflows/${conversation.id}`);
  // The timeline names each activity by what it did: the model call and the command.
  await page
    .getByText(/LLM openai\/gpt-4o-mini · step 1/)
    .filter({ visible: true })
    .first()
    .waitFor({ timeout: 30_000 });
  await page
    .getByText(/\$ echo "hello from the agent"/)
    .filter({ visible: true })
    .first()
    .waitFor({ timeout: 30_000 });
  await page
    .getByText(/idle timeout/)
    .filter({ visible: true })
    .first()
    .waitFor({ timeout: 30_000 });
  // The README's screenshots are rewritten only when asked (`npm run screenshots`); otherwise they go
  // to a temporary folder, so the test leaves the tree as it found it.
  const dir = process.env.FAHEEM_UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs') : await tempDir('faheem-screens-');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, 'web-ui-timeline.png'), fullPage: true });

  // User metadata: the summary (first message), static details and current details. The UI renders
  // markdown in sandboxed frames, so read the text of every frame.
  const allText = async () =>
    (await Promise.all(page.frames().map((f) => f.evaluate('document.body ? document.body.innerText : ""').then(String, () => '')))).join(
      '\n',
    );
  await waitFor(
    'the summary and details in User Metadata',
    async () => {
      await page
        .getByText('User Metadata', { exact: true })
        .first()
        .click({ timeout: 2_000 })
        .catch(() => undefined);
      const text = await allText();
      return (
        text.includes('Write a greeting into hello.txt') &&
        /Workspace:/.test(text) &&
        /Status:\s*finished/.test(text) &&
        /Cost:\s*\$/.test(text) &&
        /Last action:/.test(text)
      );
    },
    60_000,
    250,
  );
  await page.screenshot({ path: path.join(dir, 'web-ui-metadata.png'), fullPage: true });
  assert.ok((await page.content()).includes(conversation.id));
});

test('a delegation shows the sub-agent under its parent (Relationships), summarised by its task', async () => {
  h.model.setScript((req) => {
    const first = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
    const results = req.body.messages.filter((m) => m.role === 'tool');
    if (first.startsWith('Review')) {
      return results.length === 0
        ? { toolCalls: [{ name: 'delegate', arguments: { task: 'List the files in the workspace and report how many there are' } }] }
        : { content: `Review done: ${results[0]?.content}` };
    }
    return results.length === 0
      ? { toolCalls: [{ name: 'terminal', arguments: { command: 'ls | wc -l' } }] }
      : { content: 'There are 0 files.' };
  });
  const parent = await Conversation.create(h.client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'delegate'] }),
    workspace: await h.workspace(),
    firstMessage: 'Review the workspace with a sub-agent',
    run: true,
  });
  await parent.waitUntil((s) => s.status === 'finished', 100, 60_000);
  const child = `${parent.id}.sub-1`;
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${h.server.uiUrl}/namespaces/default/workflows/${parent.id}`);
  await page
    .getByText(/Relationships/)
    .filter({ visible: true })
    .first()
    .click({ timeout: 30_000 });
  await page.getByText(child).filter({ visible: true }).first().waitFor({ timeout: 30_000 });
  const dir = process.env.FAHEEM_UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs') : await tempDir('faheem-screens-');
  await page.screenshot({ path: path.join(dir, 'web-ui-delegation.png'), fullPage: true });
  // The child's own page: summarised by its task, with its parent.
  await page.goto(`${h.server.uiUrl}/namespaces/default/workflows/${child}`);
  await waitFor(
    "the child's summary in User Metadata",
    async () => {
      await page
        .getByText('User Metadata', { exact: true })
        .first()
        .click({ timeout: 2_000 })
        .catch(() => undefined);
      const text = (
        await Promise.all(page.frames().map((f) => f.evaluate('document.body ? document.body.innerText : ""').then(String, () => '')))
      ).join('\n');
      return text.includes(`sub-agent of ${parent.id}: List the files in the workspace`) && text.includes('Depth:');
    },
    60_000,
    250,
  );
});
