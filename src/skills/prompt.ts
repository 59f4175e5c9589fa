// The system prompt's section on skills: each skill's name, description and SKILL.md path, and how
// to use them. Never a body: the model reads a SKILL.md with its tools when a skill applies. Pure (no
// Node imports): the workflow builds the prompt.

/** A skill as the model is shown it (readSkills finds these). Plain data: it goes into prepareTools' result. */
export interface SkillInfo {
  /** The skill's name (its folder's name). */
  name: string;
  /** When to use it, from its front matter. */
  description: string;
  /** Its SKILL.md: relative to the workspace for workspace skills, absolute for the host's own. */
  path: string;
  /** `workspace`: in `.agents/skills/`; `user`: in `<FAHEEM_HOME>/skills/` on the worker's host. */
  scope: 'workspace' | 'user';
}

/** What the section needs of a skill. */
export type SkillListing = Pick<SkillInfo, 'name' | 'description' | 'path'> & Partial<Pick<SkillInfo, 'scope'>>;

/** The heading the section starts with. */
export const SKILLS_HEADING = '## Skills';

/**
 * The system prompt's skills section, or '' when there are none. Lists `- name: description (path)`
 * and tells the model to read a skill's SKILL.md (its instructions) before a task it applies to, and
 * only then; files a skill mentions are relative to its folder.
 */
export function skillsPromptSection(skills: readonly SkillListing[]): string {
  if (skills.length === 0) return '';
  const outside = skills.some((s) => s.scope === 'user' || s.path.startsWith('/'));
  const lines = skills.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ').trim()} (${s.path})`);
  return [
    SKILLS_HEADING,
    'Skills are instructions for particular kinds of task, each kept in a SKILL.md file. Below are their names, what each is for, and where its SKILL.md is.',
    "When a task matches a skill's description, read that SKILL.md in full before you start, and follow it; files it mentions are relative to its folder. " +
      'Do not read skills that do not apply.' +
      (outside
        ? ' Paths relative to the workspace can be viewed with file_editor; read absolute paths outside the workspace with the terminal (cat).'
        : ''),
    '',
    ...lines,
  ].join('\n');
}
