// `prepare` (npm ci / npm install in a clone, npm pack, and `npx faheem` in the clone, which links the
// package into npx's cache and runs this again): builds dist/ unless it is newer than everything it is
// made from. npx hides this script's output, so an unneeded build would be a silent half-minute.
import { execFileSync } from 'node:child_process';
import { distIsFresh } from './dist-fresh.mjs';

if (distIsFresh()) {
  console.log('dist/ is newer than src/ and the build files: not built again (`npm run build` forces it)');
} else {
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
}
