// The failure converter every process uses when an encryption key is configured: error messages and
// stack traces go into the failure's encoded attributes, which the payload codec encrypts (Temporal
// otherwise keeps them in plain text). CommonJS (.cts → .cjs) because Temporal loads it by path with
// require(), in workers and clients, and webpack bundles it into workflow code built from sources.
// Plain JavaScript syntax on purpose: the workflow bundler does not run a TypeScript loader on .cts.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
