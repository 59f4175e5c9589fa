// A lever for `BENCH_LEVER_NODE_OPTIONS="--require ./bench/levers/no-stack-traces.cjs" npm run
// bench:step-parts`: the worker's workflow threads run without the SDK's promise hook, which takes
// a stack trace of every promise workflow code makes (for the `__stack_trace` query, the Temporal
// UI's "Stack Trace" tab). The SDK's own fallback for a Node without promise hooks is used: it
// warns once a thread and answers that query without stacks. Only the hook the SDK's vm-shared
// module asks for is refused; other callers (async_hooks in other threads) are untouched.
const { isMainThread } = require('node:worker_threads');

if (!isMainThread) {
  const v8 = require('node:v8');
  const createHook = v8.promiseHooks.createHook;
  v8.promiseHooks.createHook = (hooks) => {
    if (new Error().stack.includes('vm-shared')) throw new Error('promise hooks are off for this bench lever');
    return createHook(hooks);
  };
}
