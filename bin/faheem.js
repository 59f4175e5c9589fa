#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so `npx faheem` works from a clone with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/index.ts');
