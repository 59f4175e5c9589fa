// The one text for "this worker does not have the tool": said when a conversation starts
// (prepareTools) and when a call reaches a worker without it (runTool).

/**
 * Why the tool `name` cannot run on the worker of `taskQueue`, and how to give it to that worker.
 * `consequence` (e.g. "The agent goes on without it.") follows the advice.
 */
export function toolNotAvailable(name: string, taskQueue: string, consequence?: string): string {
  return (
    `The tool "${name}" is not available: the worker on task queue ${taskQueue} does not have it ` +
    '(start it with createWorker({ tools: [...] }) or `faheem worker --tools <module>`).' +
    (consequence ? ` ${consequence}` : '')
  );
}
