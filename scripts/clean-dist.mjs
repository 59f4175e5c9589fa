// Empties dist/ before a build, so files of deleted sources do not linger in the package.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist/', import.meta.url), { recursive: true, force: true });
