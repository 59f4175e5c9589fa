// A namespace of its own for each test file, so that files sharing one dev server (see
// run-tests.ts) never see each other's conversations, workers or search results.
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { randomUUID } from 'node:crypto';
import { SEARCH_ATTRIBUTES } from '../../src/client/search-attributes.js';

/** Registers `<name>-<random>` with our search attributes and answers once both are usable. */
export async function testNamespace(connection: Connection, name: string): Promise<string> {
  const namespace = `${name.replace(/[^a-zA-Z0-9-]/g, '-')}-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const deadline = Date.now() + 30_000;
  let added = false;
  for (;;) {
    try {
      if (!added) {
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((n) => [n, 2 /* KEYWORD */])),
        });
        added = true;
      }
      const listed = await connection.operatorService.listSearchAttributes({ namespace });
      if (Object.keys(SEARCH_ATTRIBUTES).every((n) => n in (listed.customAttributes ?? {}))) {
        await connection.workflowService.countWorkflowExecutions({ namespace, query: `ConversationStatus = 'idle'` });
        return namespace;
      }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`namespace ${namespace} did not become usable: ${(err as Error).message}`);
    }
    if (Date.now() > deadline) throw new Error(`namespace ${namespace} did not become usable`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
