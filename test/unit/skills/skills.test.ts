// Skills: SKILL.md front matter read simply and robustly, folders scanned in the workspace and on the
// host, bad files skipped with a warning, the prompt section listing them without their bodies.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseFrontMatter } from '../../../src/skills/front-matter.js';
import { skillsPromptSection } from '../../../src/skills/prompt.js';
import { MAX_SKILL_FILE_BYTES, readSkills } from '../../../src/skills/read-skills.js';

let root: string;
let ws: string;
let home: string;

function skill(base: string, folder: string, text: string): void {
  mkdirSync(path.join(base, folder), { recursive: true });
  writeFileSync(path.join(base, folder, 'SKILL.md'), text);
}
const md = (name: string, description: string, body = '# Steps\nDo the thing.\n') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

before(() => {
  root = mkdtempSync(path.join(tmpdir(), 'faheem-skills-'));
  ws = path.join(root, 'ws');
  home = path.join(root, 'home');
  const wsSkills = path.join(ws, '.agents', 'skills');
  const homeSkills = path.join(home, 'skills');
  skill(wsSkills, 'pdf-forms', md('pdf-forms', 'Fill in PDF forms with pdftk. Use when a PDF form must be filled.', 'SECRET BODY TEXT'));
  skill(wsSkills, 'release', md('release', '"Cut a release: bump, tag, changelog"'));
  skill(wsSkills, 'no-front', '# Just markdown\n');
  skill(wsSkills, 'unclosed', '---\nname: unclosed\ndescription: x\n');
  skill(wsSkills, 'Bad_Name', md('Bad_Name', 'x'));
  skill(wsSkills, 'other-folder', md('mismatch', 'x'));
  skill(wsSkills, 'no-desc', '---\nname: no-desc\n---\nbody');
  skill(wsSkills, 'huge', md('huge', 'big', 'x'.repeat(MAX_SKILL_FILE_BYTES + 10)));
  mkdirSync(path.join(wsSkills, 'empty-folder'));
  writeFileSync(path.join(wsSkills, 'README.md'), 'not a skill');
  mkdirSync(path.join(wsSkills, 'linked'));
  symlinkSync(path.join(wsSkills, 'release', 'SKILL.md'), path.join(wsSkills, 'linked', 'SKILL.md'));
  skill(homeSkills, 'release', md('release', 'the host copy, shadowed by the workspace'));
  skill(homeSkills, 'code-review', md('code-review', 'Review a diff for bugs.'));
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('readSkills', () => {
  test('lists valid skills, workspace over host, and skips each bad file with a warning', async () => {
    const scan = await readSkills({ workspace: ws, home });
    assert.deepEqual(scan.skills, [
      {
        name: 'code-review',
        description: 'Review a diff for bugs.',
        path: path.join(home, 'skills', 'code-review', 'SKILL.md'),
        scope: 'user',
      },
      {
        name: 'pdf-forms',
        description: 'Fill in PDF forms with pdftk. Use when a PDF form must be filled.',
        path: '.agents/skills/pdf-forms/SKILL.md',
        scope: 'workspace',
      },
      { name: 'release', description: 'Cut a release: bump, tag, changelog', path: '.agents/skills/release/SKILL.md', scope: 'workspace' },
    ]);
    const w = scan.warnings.join('\n');
    const expect: [string, RegExp][] = [
      ['no-front', /does not start with a front matter/],
      ['unclosed', /no closing "---"/],
      ['Bad_Name', /name must be lowercase letters, digits and hyphens/],
      ['other-folder', /its name "mismatch" is not its folder's name "other-folder"/],
      ['no-desc', /description is missing/],
      ['huge', /more than the 262144 a skill file may have/],
      ['empty-folder', /there is no SKILL\.md in its folder/],
      ['linked', /SKILL\.md is a symbolic link/],
    ];
    for (const [folder, why] of expect) {
      const line = scan.warnings.find((x) => x.includes(`.agents/skills/${folder}/SKILL.md`));
      assert.ok(line, `a warning for ${folder} in:\n${w}`);
      assert.match(line!, /^The skill \.agents\/skills\/.+ is skipped: /);
      assert.match(line!, why);
    }
    assert.equal(scan.warnings.length, expect.length, w);
    assert.doesNotMatch(w, /README/);
  });

  test('no skills folders: nothing, no warnings; secrets in descriptions are masked', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'faheem-skills-none-'));
    try {
      assert.deepEqual(await readSkills({ workspace: empty, home: path.join(empty, 'nohome') }), { skills: [], warnings: [] });
      skill(path.join(empty, '.agents', 'skills'), 'deploy', md('deploy', 'Deploy with token sk-live-abcdef123456'));
      const scan = await readSkills({ workspace: empty, secretValues: ['sk-live-abcdef123456'] });
      assert.equal(scan.skills[0]!.description, 'Deploy with token <secret-hidden>');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('readSkills never follows a link out of the workspace', () => {
  test('a linked .agents, .agents/skills or skill folder is skipped with a warning; what it points to is never offered', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'faheem-skills-links-'));
    try {
      // A folder the sandbox hides (the worker's home, say) with a skill in it.
      const hidden = path.join(base, 'hidden');
      skill(path.join(hidden, '.agents', 'skills'), 'exfil', md('exfil', 'HIDDEN-DESCRIPTION'));
      skill(path.join(hidden, 'one'), 'exfil', md('exfil', 'HIDDEN-DESCRIPTION'));
      const cases: [string, (ws: string) => void, RegExp][] = [
        ['a linked .agents', (ws) => symlinkSync(path.join(hidden, '.agents'), path.join(ws, '.agents')), /\.agents is a symbolic link/],
        [
          'a linked .agents/skills',
          (ws) => {
            mkdirSync(path.join(ws, '.agents'));
            symlinkSync(path.join(hidden, '.agents', 'skills'), path.join(ws, '.agents', 'skills'));
          },
          /\.agents\/skills is a symbolic link/,
        ],
        [
          'a linked skill folder',
          (ws) => {
            mkdirSync(path.join(ws, '.agents', 'skills'), { recursive: true });
            symlinkSync(path.join(hidden, 'one', 'exfil'), path.join(ws, '.agents', 'skills', 'exfil'));
          },
          /exfil is skipped: it is a symbolic link/,
        ],
      ];
      for (const [name, plant, warning] of cases) {
        const ws = mkdtempSync(path.join(base, 'ws-'));
        plant(ws);
        const scan = await readSkills({ workspace: ws });
        assert.deepEqual(scan.skills, [], name);
        assert.equal(scan.warnings.length, 1, `${name}: ${scan.warnings.join(' | ')}`);
        assert.match(scan.warnings[0]!, warning, name);
        assert.doesNotMatch(scan.warnings.join(' '), /HIDDEN-DESCRIPTION/);
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('parseFrontMatter', () => {
  test('YAML through the yaml package: quotes, block scalars, comments, and nested keys kept', () => {
    const text = [
      '\uFEFF---',
      '# a comment',
      'name: "quoted-name"',
      "title: 'it''s'",
      'description: >-',
      '  Folded over',
      '  two lines.',
      'notes: |',
      '  line one',
      '  line two',
      'license: MIT # trailing comment',
      'allowed-tools:',
      '  - Bash',
      '  - Read',
      'metadata:',
      '  version: "1.0"',
      '  owners: [ana, bo]',
      '  nested:',
      '    deep: true',
      'plain: starts here',
      '  and goes on',
      '---',
      'Body',
    ].join('\r\n');
    const fm = parseFrontMatter(text);
    assert.ok(fm.ok);
    assert.deepEqual(fm.fields, {
      name: 'quoted-name',
      title: "it's",
      description: 'Folded over two lines.',
      notes: 'line one\nline two\n', // YAML's clip: one final newline kept
      license: 'MIT',
      'allowed-tools': ['Bash', 'Read'],
      metadata: { version: '1.0', owners: ['ana', 'bo'], nested: { deep: true } },
      plain: 'starts here and goes on',
    });
    assert.equal(fm.body, 'Body');
  });

  test('a plain one-line value holding ": " is read as the text it is (as skill files are often written)', () => {
    const fm = parseFrontMatter(
      "---\nname: pdf\ndescription: Use when: the user's PDF needs filling # a comment\nmetadata:\n  k: v\n---\nbody",
    );
    assert.deepEqual(fm, {
      ok: true,
      fields: { name: 'pdf', description: "Use when: the user's PDF needs filling", metadata: { k: 'v' } },
      body: 'body',
    });
  });

  test('an empty front matter has no fields; "..." also closes it', () => {
    assert.deepEqual(parseFrontMatter('---\n---\nbody'), { ok: true, fields: {}, body: 'body' });
    assert.deepEqual(parseFrontMatter('---\nname: a\n...\nbody'), { ok: true, fields: { name: 'a' }, body: 'body' });
  });

  test("what is wrong, with the file's line; never a throw", () => {
    const error = (text: string) => {
      const fm = parseFrontMatter(text);
      assert.equal(fm.ok, false, text);
      return (fm as { error: string }).error;
    };
    assert.match(error('no front matter'), /does not start with a front matter/);
    assert.match(error('---\nname: x\n'), /no closing/);
    assert.match(error('---\njust words\n---\n'), /not a map of "key: value" lines/);
    assert.match(error('---\n- a\n- b\n---\n'), /not a map of "key: value" lines/);
    assert.match(error('---\nname: x\ndescription: "open\n---\n'), /^front matter line 3 is not valid YAML: Missing closing "quote/);
    assert.match(error('---\nname: a\nname: b\n---\n'), /line 3 is not valid YAML: Map keys must be unique/);
    assert.match(
      error('---\ndescription: Use when: asked\n  more: x\n---\n'),
      /line 2 is not valid YAML: .*\(quote a value that holds ": "\)/,
    );
    assert.match(error('---\nname: *nowhere\n---\n'), /cannot be read|not valid YAML/);
  });

  test('a billion laughs is refused, not expanded', () => {
    const lines = ['---', 'a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(', ')}]`,
      );
    lines.push('---', '');
    const fm = parseFrontMatter(lines.join('\n'));
    assert.equal(fm.ok, false);
    assert.match((fm as { error: string }).error, /cannot be read: .*alias/i);
  });
});

describe('skillsPromptSection', () => {
  test('names, descriptions and paths, and when to read them; never a body', async () => {
    const scan = await readSkills({ workspace: ws, home });
    const section = skillsPromptSection(scan.skills);
    assert.match(section, /^## Skills\n/);
    assert.match(
      section,
      /^- pdf-forms: Fill in PDF forms with pdftk\. Use when a PDF form must be filled\. \(\.agents\/skills\/pdf-forms\/SKILL\.md\)$/m,
    );
    assert.match(section, /^- code-review: Review a diff for bugs\. \(\/.+\/home\/skills\/code-review\/SKILL\.md\)$/m);
    assert.match(section, /read that SKILL\.md in full before you start/);
    assert.match(section, /with the terminal \(cat\)/);
    assert.doesNotMatch(section, /SECRET BODY TEXT|Do the thing/);
    assert.equal(skillsPromptSection([]), '');
    assert.doesNotMatch(skillsPromptSection([{ name: 'a', description: 'd', path: '.agents/skills/a/SKILL.md' }]), /terminal \(cat\)/);
  });
});
