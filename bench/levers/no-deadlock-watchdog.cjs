// A lever for `BENCH_LEVER_NODE_OPTIONS="--require ./bench/levers/no-deadlock-watchdog.cjs" npm run
// bench:step-parts`: the worker's workflow threads run workflow code without the `vm` timeout the
// SDK gives every call into a workflow's context (its deadlock detector: Node starts and joins a
// watchdog thread for each such call). Only measured, never shipped: without it a workflow stuck in
// a loop would hold its thread forever instead of failing its task with "Potential deadlock".
const { isMainThread } = require('node:worker_threads');

if (!isMainThread) {
  const vm = require('node:vm');
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (context, options) {
    if (options && typeof options === 'object' && 'timeout' in options) {
      const { timeout: _ignored, ...rest } = options;
      return runInContext.call(this, context, rest);
    }
    return runInContext.call(this, context, options);
  };
}
