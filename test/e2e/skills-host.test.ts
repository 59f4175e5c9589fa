// Skills through a real worker: prepareTools, on the workspace's host, reports the workspace's and the
// host's skills (names, descriptions, paths; never a body) and a warning for each skipped file.
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client.js';
import { historyText, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'skills-host', script: () => ({ content: 'ok' }), record: false });
  await h.startWorker();
});
after(async () => h?.close());

async function skill(root: string, name: string, text: string) {
  await mkdir(path.join(root, name), { recursive: true });
  await writeFile(path.join(root, name, 'SKILL.md'), text);
}

test('prepareTools lists the skills of the workspace and the host, with a warning for a malformed one', async () => {
  const workspace = await h.workspace();
  await skill(
    path.join(workspace, '.agents', 'skills'),
    'pdf-forms',
    '---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nBODY-NOT-SHOWN\n',
  );
  await skill(path.join(workspace, '.agents', 'skills'), 'broken', 'no front matter\n');
  await skill(path.join(h.home, 'skills'), 'code-review', '---\nname: code-review\ndescription: Review a diff.\n---\nBODY-NOT-SHOWN\n');
  const agent = new Agent({ llm: new LLM({ usageId: 'agent', model: 'openai/gpt-4o-mini' }), tools: [] });
  const conversation = await Conversation.create(h.client, { agent, workspace, firstMessage: 'hi' });
  assert.equal((await conversation.run()).status, 'finished');
  const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
  const completed = (history.events ?? []).map((e) => e.activityTaskCompletedEventAttributes).filter(Boolean);
  const result = completed
    .map((a) => JSON.parse(Buffer.from(a!.result!.payloads![0]!.data!).toString('utf8')))
    .find((r) => r && Array.isArray(r.tools));
  assert.ok(result, 'the prepareTools result');
  assert.deepEqual(result.skills, [
    { name: 'code-review', description: 'Review a diff.', path: path.join(h.home, 'skills', 'code-review', 'SKILL.md'), scope: 'user' },
    { name: 'pdf-forms', description: 'Fill in PDF forms.', path: '.agents/skills/pdf-forms/SKILL.md', scope: 'workspace' },
  ]);
  assert.deepEqual(result.warnings, [
    'The skill .agents/skills/broken/SKILL.md is skipped: it does not start with a front matter (a line "---", then name: and description:, then "---").',
  ]);
  assert.ok(!historyText(history).includes('BODY-NOT-SHOWN'));
});
