// Skills: folders with a SKILL.md (front matter `name` and `description`, instructions below), in the
// workspace's `.agents/skills/` and in the host's `<FAHEEM_HOME>/skills/`. The worker lists them
// (name, description, where the file is); the model reads a body itself when it needs it.
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { redact } from '../security/redact.js';
import { PathRefused, WorkspaceFs } from '../security/workspace-fs.js';
import { parseFrontMatter } from './front-matter.js';
import type { SkillInfo } from './prompt.js';

export type { SkillInfo } from './prompt.js';

/** Where a workspace keeps its skills, relative to the workspace. */
export const WORKSPACE_SKILLS_DIR = path.join('.agents', 'skills');
/** The file that makes a folder a skill. */
export const SKILL_FILE = 'SKILL.md';
/** A SKILL.md larger than this is skipped with a warning. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
/** At most this many skills are offered (the prompt lists each); the rest are skipped with a warning. */
export const MAX_SKILLS = 100;

/** What a scan found: the skills (by name) and one readable warning per skipped file. */
export interface SkillsScan {
  skills: SkillInfo[];
  warnings: string[];
}

/** Agent Skills' rules: lowercase letters, digits and single hyphens, at most 64 characters. */
export const SkillName = z
  .string()
  .max(64, 'must be at most 64 characters')
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be lowercase letters, digits and hyphens (not at the start or end, not two in a row)');

const SkillFront = z.object({
  name: SkillName,
  description: z.string().trim().min(1, 'must not be empty').max(1024, 'must be at most 1024 characters'),
});

/** Where to look. */
export interface ReadSkillsOptions {
  /** The workspace (absolute); its `.agents/skills/*\/SKILL.md` are read. */
  workspace: string;
  /** The host's faheem home (faheemHome()); its `skills/*\/SKILL.md` are read too. Absent: workspace only. */
  home?: string;
  /** Values masked in names, descriptions and warnings. */
  secretValues?: readonly string[];
}

/**
 * Lists the skills of a workspace and of the host: every `<root>/<name>/SKILL.md` whose front matter
 * has a valid `name` (equal to the folder's name) and `description`. A workspace skill wins over the
 * host's skill of the same name. Malformed, oversized (> 256 KB), unreadable or symlinked SKILL.md
 * files are skipped, each with a warning. Never throws; sorted by name.
 *
 * The host's skills have absolute paths outside the workspace: the model reads them with the
 * terminal (file_editor stays inside the workspace), which a sandboxed worker hides them from.
 */
export async function readSkills(options: ReadSkillsOptions): Promise<SkillsScan> {
  const warnings: string[] = [];
  const found = new Map<string, SkillInfo>();
  const roots: { dir: string; scope: SkillInfo['scope'] }[] = [
    { dir: path.join(options.workspace, WORKSPACE_SKILLS_DIR), scope: 'workspace' },
  ];
  if (options.home) roots.push({ dir: path.join(options.home, 'skills'), scope: 'user' });
  for (const root of roots) {
    for (const skill of await readRoot(root.dir, root.scope, options.workspace, warnings)) {
      if (found.has(skill.name)) {
        if (root.scope === 'user') continue; // the workspace's own skill of this name wins
      }
      found.set(skill.name, skill);
    }
  }
  let skills = [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (skills.length > MAX_SKILLS) {
    warnings.push(`${skills.length} skills were found; only the first ${MAX_SKILLS} by name are offered.`);
    skills = skills.slice(0, MAX_SKILLS);
  }
  const secrets = options.secretValues ?? [];
  return {
    skills: skills.map((s) => ({ ...s, description: redact(s.description, secrets) })),
    warnings: warnings.map((w) => redact(w, secrets)),
  };
}

/**
 * How a root is walked. The workspace's goes through its no-follow resolver (the one file_editor and
 * AGENTS.md use): a linked `.agents`, `skills` or skill folder, or a linked SKILL.md, is skipped with
 * a warning, never followed to a folder the sandbox hides. The host's own folder is the operator's:
 * plain reads, but a linked skill folder or SKILL.md is skipped there too.
 */
interface SkillRoot {
  /** The skill folders' names (sorted); a warning for each entry that is a link. Throws when the root cannot be read. */
  folders(warnings: string[]): Promise<string[]>;
  /** A folder's SKILL.md as text, or why it cannot be read. */
  read(folder: string): Promise<string | { error: string }>;
}

function hostRoot(dir: string): SkillRoot {
  return {
    async folders() {
      const out: string[] = [];
      for (const entry of (await readdir(dir)).sort()) {
        if (entry.startsWith('.')) continue;
        const isDir = await lstat(path.join(dir, entry)).then(
          (st) => st.isDirectory(),
          () => false,
        );
        if (isDir) out.push(entry); // a README beside the skills, say, or a link: not a skill folder
      }
      return out;
    },
    read: (folder) => readSkillFile(path.join(dir, folder, SKILL_FILE)).catch((err: Error) => ({ error: err.message })),
  };
}

function workspaceRoot(workspace: string): SkillRoot {
  const fs = WorkspaceFs.open(workspace, { who: 'the skills reader' });
  const at = (...parts: string[]) => path.join(WORKSPACE_SKILLS_DIR, ...parts);
  return {
    async folders(warnings) {
      const ws = await fs;
      const dir = ws.resolve(at());
      const st = await ws.lstat(dir);
      if (st === undefined) return [];
      if (st.isSymbolicLink()) throw new PathRefused(`${at()} is a symbolic link; only a plain folder is read`, 'link');
      if (!st.isDirectory()) return [];
      const out: string[] = [];
      for (const line of await ws.list(dir, 1)) {
        if (line.endsWith('/')) out.push(line.slice(0, -1));
        else if (line.endsWith(' -> (link)'))
          warnings.push(`The skill ${at(line.slice(0, -' -> (link)'.length))} is skipped: it is a symbolic link.`);
      }
      return out;
    },
    async read(folder) {
      let file;
      try {
        file = await (await fs).open((await fs).resolve(at(folder, SKILL_FILE)));
      } catch (err) {
        if (err instanceof PathRefused && err.reason === 'missing') return { error: `there is no ${SKILL_FILE} in its folder` };
        if (err instanceof PathRefused && err.reason === 'link')
          return { error: `${SKILL_FILE} is a symbolic link; only a plain file is read` };
        return { error: (err as Error).message };
      }
      try {
        if (file.size > MAX_SKILL_FILE_BYTES)
          return { error: `it has ${file.size} bytes, more than the ${MAX_SKILL_FILE_BYTES} a skill file may have` };
        const buf = await file.read(MAX_SKILL_FILE_BYTES + 1);
        if (buf.length > MAX_SKILL_FILE_BYTES) return { error: `it has more than the ${MAX_SKILL_FILE_BYTES} bytes a skill file may have` };
        return buf.toString('utf8');
      } finally {
        await file.close();
      }
    },
  };
}

async function readRoot(dir: string, scope: SkillInfo['scope'], workspace: string, warnings: string[]): Promise<SkillInfo[]> {
  const root = scope === 'workspace' ? workspaceRoot(workspace) : hostRoot(dir);
  let entries: string[];
  try {
    entries = await root.folders(warnings);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      warnings.push(`The skills folder ${shown(dir, scope, workspace)} could not be read: ${(err as Error).message}`);
    return [];
  }
  const out: SkillInfo[] = [];
  for (const entry of entries) {
    const folder = path.join(dir, entry);
    const file = path.join(folder, SKILL_FILE);
    const where = shown(file, scope, workspace);
    const skip = (why: string) => warnings.push(`The skill ${where} is skipped: ${why}.`);
    const text = await root.read(entry);
    if (typeof text === 'object') {
      skip(text.error);
      continue;
    }
    const fm = parseFrontMatter(text);
    if (!fm.ok) {
      skip(fm.error);
      continue;
    }
    const parsed = SkillFront.safeParse(fm.fields);
    if (!parsed.success) {
      skip(
        parsed.error.issues
          .map(
            (i) =>
              `${i.path.join('.') || 'front matter'} ${i.code !== 'invalid_type' ? i.message : fm.fields[String(i.path[0])] === undefined ? 'is missing' : 'must be text'}`,
          )
          .join('; '),
      );
      continue;
    }
    if (parsed.data.name !== entry) {
      skip(`its name "${parsed.data.name}" is not its folder's name "${entry}"`);
      continue;
    }
    out.push({ name: parsed.data.name, description: parsed.data.description.replace(/\s+/g, ' '), path: where, scope });
  }
  return out;
}

/** Workspace paths relative to it (what the model passes to its tools); the host's absolute. */
function shown(file: string, scope: SkillInfo['scope'], workspace: string): string {
  return scope === 'workspace' ? path.relative(workspace, file) : file;
}

/**
 * A SKILL.md as text: a plain file (not a symlink: it could lead to a file the worker can read and
 * the agent should not), at most MAX_SKILL_FILE_BYTES.
 */
async function readSkillFile(file: string): Promise<string | { error: string }> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { error: `there is no ${SKILL_FILE} in its folder` };
    if (code === 'ELOOP') return { error: `${SKILL_FILE} is a symbolic link; only a plain file is read` };
    return { error: (err as Error).message };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { error: `${SKILL_FILE} is not a plain file` };
    if (info.size > MAX_SKILL_FILE_BYTES)
      return { error: `it has ${info.size} bytes, more than the ${MAX_SKILL_FILE_BYTES} a skill file may have` };
    const buf = Buffer.alloc(MAX_SKILL_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_SKILL_FILE_BYTES) return { error: `it has more than the ${MAX_SKILL_FILE_BYTES} bytes a skill file may have` };
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
