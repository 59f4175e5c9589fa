// The console's list with many conversations (figures, not asserts): `npx tsx bench/console-list.ts`.
// On the embedded dev server, BENCH_CONSOLE_N (1,000) conversations started without a worker (they
// wait in visibility like any open conversation, titles and workspaces in their memo); then, 20
// times each, the time of the requests the page makes every 2 s: a page of 50, a search matching
// one title (the oldest: it reads every page), a search matching none (it reads up to
// SEARCH_SCAN_ROWS), and a search with the status filter.
import { Agent, Conversation, LLM } from '../src/client/client.js';
import { SEARCH_SCAN_ROWS, listConversations, listQueryText } from '../src/console-server/conversations.js';
import { startHarness } from '../test/support/harness.js';
import { pct } from './step.js';

const n = Number(process.env.BENCH_CONSOLE_N ?? 1000);
const rounds = 20;
const h = await startHarness({ name: 'console-list-bench', script: () => ({ content: 'ok' }) });
try {
  const workspace = await h.workspace();
  const agent = new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
  const started = performance.now();
  for (let i = 0; i < n; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, (_, j) =>
        Conversation.create(h.client, { agent, workspace, firstMessage: `Tidy module m${i + j}q of the billing service` }),
      ),
    );
  }
  console.log(`started ${n} conversations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Visibility is eventually consistent: wait until every one lists.
  while ((await h.client.workflow.count(listQueryText({}))).count < n) await new Promise((r) => setTimeout(r, 200));
  const time = async (what: string, options: Parameters<typeof listConversations>[1], expect: (rows: number) => boolean) => {
    const ms: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      const page = await listConversations(h.client, options);
      ms.push(performance.now() - t);
      if (!expect(page.conversations.length)) throw new Error(`${what}: ${page.conversations.length} rows`);
    }
    ms.sort((a, b) => a - b);
    console.log(`${what}: p50 ${pct(ms, 50).toFixed(1)} ms, max ${ms.at(-1)!.toFixed(1)} ms`);
  };
  await time('a page of 50', { pageSize: 50 }, (rows) => rows === 50);
  await time('search matching the oldest title', { pageSize: 50, search: 'm0q' }, (rows) => rows === 1);
  await time(
    `search matching none (reads up to ${SEARCH_SCAN_ROWS} rows)`,
    { pageSize: 50, search: 'no such words' },
    (rows) => rows === 0,
  );
  await time('search "billing" with status idle', { pageSize: 50, search: 'billing', status: 'idle' }, (rows) => rows >= 50);
} finally {
  await h.close();
}
