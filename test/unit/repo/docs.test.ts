// The README stays short and every relative link in it and in docs/ leads somewhere (the reference
// sections moved to docs/; a link left pointing at a README anchor that is gone would fail here).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.join(import.meta.dirname, '..', '..', '..');
const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

test('the README is well under 300 lines and keeps the two commands', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length < 250, `README.md has ${readme.split('\n').length} lines`);
  assert.match(readme, /^npm ci && npm run demo$/m);
  assert.match(readme, /^npm ci && npm test$/m);
});

test('every relative link in the README and docs/ resolves, anchors included', () => {
  let links = 0;
  for (const page of pages) {
    const text = readFileSync(path.join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
      const [file, hash] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
      assert.ok(existsSync(path.join(ROOT, resolved)), `${page} links to ${target}: no ${resolved}`);
      if (hash && resolved.endsWith('.md'))
        assert.ok(anchors(resolved).has(hash), `${page} links to ${target}: no heading "#${hash}" in ${resolved}`);
      links++;
    }
  }
  assert.ok(links > 20, `found ${links} links`);
});
