// The risk rule for a call the model rated: under the `risky` confirmation policy, a call rated
// HIGH, or not rated at all, asks the user first. The rating is the model's own, so it is advisory;
// for terminal commands, rules for known-destructive commands are added to it: a rule can make a
// call ask, never let one through. Pure: the built-in tools (their needsApproval, worked out on the
// model-call worker and recorded with the call) and the workflow (a call with no plan) use it.

/** The ratings the model gives a terminal or file_editor call in its `security_risk` argument. */
export type SecurityRisk = 'LOW' | 'MEDIUM' | 'HIGH';

/** Whether a call with these arguments asks first under `risky`: only LOW and MEDIUM go ahead. */
export function riskyUnlessRatedLow(args: unknown): boolean {
  const risk = (args as { security_risk?: unknown } | null | undefined)?.security_risk;
  return !(risk === 'LOW' || risk === 'MEDIUM');
}

/** A simple command's words (quotes removed), and whether its input is piped from the command before it. */
interface SimpleCommand {
  words: string[];
  /** Targets of `>` / `>>` redirections. */
  writes: string[];
  piped: boolean;
}

/**
 * Splits a command line into simple commands at `;`, `&`, `|`, newlines, `(`, `)`, `{`, `}`,
 * backticks and `$(`; quotes group words (and are removed), a backslash escapes. One pass: linear
 * in the command's length, whatever the model sends.
 */
function simpleCommands(line: string): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], writes: [], piped: false };
  let word: string | undefined;
  let redirect = false;
  const endWord = () => {
    if (word === undefined) return;
    if (redirect) current.writes.push(word);
    else current.words.push(word);
    word = undefined;
    redirect = false;
  };
  const endCommand = (piped: boolean) => {
    endWord();
    if (current.words.length || current.writes.length) out.push(current);
    current = { words: [], writes: [], piped };
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\') {
      word = (word ?? '') + (line[i + 1] ?? '');
      i++;
    } else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      const stop = end < 0 ? line.length : end;
      word = (word ?? '') + line.slice(i + 1, stop);
      i = stop;
    } else if (c === '|') {
      const double = line[i + 1] === '|';
      endCommand(!double);
      if (double) i++;
    } else if (c === '$' && line[i + 1] === '(') {
      endCommand(false);
      i++;
    } else if (';&\n()`{}'.includes(c)) {
      endCommand(false);
    } else if (c === '>') {
      endWord();
      while (line[i + 1] === '>' || line[i + 1] === '|' || line[i + 1] === '&') i++;
      redirect = true;
    } else if (c === ' ' || c === '\t') {
      const pending: boolean = redirect && word === undefined;
      endWord();
      redirect = pending;
    } else {
      word = (word ?? '') + c;
    }
  }
  endCommand(false);
  return out;
}

/** Words that run the command after them (their own options skipped). */
const WRAPPERS = new Set(['env', 'xargs', 'nohup', 'time', 'nice', 'exec', 'command', 'builtin', 'timeout', 'stdbuf', 'ionice']);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh']);

/** The command's name (a path's last part) and its arguments, past assignments and wrappers. */
function commandOf(words: readonly string[]): { name: string; args: string[] } | undefined {
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
    else if (WRAPPERS.has(w.replace(/^.*\//, ''))) {
      i++;
      while (i < words.length && (words[i]!.startsWith('-') || /^\d/.test(words[i]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) i++;
    } else break;
  }
  const first = words[i];
  return first === undefined ? undefined : { name: first.replace(/^.*\//, ''), args: words.slice(i + 1) };
}

/** Short option clusters (`-rf`) and long options of a command's arguments. */
const hasShort = (args: readonly string[], letters: RegExp) => args.some((a) => /^-[A-Za-z]+$/.test(a) && letters.test(a.slice(1)));
const hasLong = (args: readonly string[], ...names: string[]) => args.some((a) => names.some((n) => a === n || a.startsWith(`${n}=`)));

/** Places a write must not go: the system's configuration, programs, boot files, raw disks, ssh keys. */
const SYSTEM_PATH =
  /^(?:\/etc(?:\/|$)|\/boot(?:\/|$)|\/usr\/|\/bin\/|\/sbin\/|\/lib\d*\/|\/dev\/(?:sd|hd|nvme|vd|xvd|mmcblk|disk)|(?:~|\$HOME|\$\{HOME\})\/\.ssh(?:\/|$))/;

/** What a git command does that cannot be undone, if anything. */
function gitRisk(args: readonly string[]): string | undefined {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += ['-C', '-c'].includes(args[i]!) ? 2 : 1;
  const sub = args[i];
  const rest = args.slice(i + 1);
  if (
    sub === 'push' &&
    (hasLong(rest, '--force', '--force-with-lease', '--mirror') || hasShort(rest, /f/) || rest.some((a) => a.startsWith('+')))
  )
    return 'git push --force: rewrites a remote branch';
  if (sub === 'reset' && rest.includes('--hard')) return 'git reset --hard: discards uncommitted work';
  if (sub === 'clean' && (hasShort(rest, /f/) || hasLong(rest, '--force'))) return 'git clean -f: deletes untracked files';
  return undefined;
}

/** What one simple command does that is known to be destructive, if anything. */
function simpleRisk(c: SimpleCommand, previous: SimpleCommand | undefined, depth: number): string | undefined {
  if (c.writes.some((w) => SYSTEM_PATH.test(w))) return 'writes to /etc, /usr, /boot, a raw disk or ~/.ssh';
  const found = commandOf(c.words);
  if (!found) return undefined;
  const { name, args } = found;
  switch (name) {
    case 'sudo':
    case 'doas':
    case 'su':
      return "sudo: runs with another user's rights";
    case 'rm':
      if ((hasShort(args, /[rR]/) || hasLong(args, '--recursive')) && (hasShort(args, /f/) || hasLong(args, '--force')))
        return 'rm -rf: deletes a tree without asking';
      return undefined;
    case 'git':
      return gitRisk(args);
    case 'dd':
      return args.some((a) => a.startsWith('of=')) ? 'dd of=: writes raw blocks' : undefined;
    case 'chmod':
    case 'chown':
    case 'chgrp':
      return hasShort(args, /R/) || hasLong(args, '--recursive') ? `${name} -R: changes a whole tree` : undefined;
    case 'shutdown':
    case 'reboot':
    case 'halt':
    case 'poweroff':
      return 'shuts the machine down';
    case 'init':
      return args[0] === '0' || args[0] === '6' ? 'shuts the machine down' : undefined;
    case 'kill': {
      const targets =
        args[0] === '-s' || args[0] === '-n' ? args.slice(2) : args.length > 1 && args[0]!.startsWith('-') ? args.slice(1) : args;
      return targets.includes('-1') ? 'kill -1: signals every process' : undefined;
    }
    case 'find': {
      const exec = args.findIndex((a) => a === '-exec' || a === '-execdir');
      return args.includes('-delete') || (exec >= 0 && args[exec + 1]?.replace(/^.*\//, '') === 'rm')
        ? 'find -delete: deletes what it finds'
        : undefined;
    }
    case 'tee':
      return args.some((a) => SYSTEM_PATH.test(a)) ? 'writes to /etc, /usr, /boot, a raw disk or ~/.ssh' : undefined;
    case 'cp':
    case 'mv':
    case 'install':
    case 'ln':
    case 'rsync':
    case 'truncate':
      return SYSTEM_PATH.test(args[args.length - 1] ?? '') ? 'writes to /etc, /usr, /boot, a raw disk or ~/.ssh' : undefined;
    case 'sed':
      return args.some((a) => a.startsWith('-i')) && args.some((a) => SYSTEM_PATH.test(a))
        ? 'writes to /etc, /usr, /boot, a raw disk or ~/.ssh'
        : undefined;
    case 'eval':
      return depth < 3 ? commandRisk(args.join(' '), depth + 1) : undefined;
  }
  if (/^(?:mkfs(?:\..+)?|mke2fs|wipefs|fdisk|sfdisk|parted|shred)$/.test(name)) return 'formats, partitions or shreds a disk';
  if (SHELLS.has(name)) {
    const prev = previous && c.piped ? commandOf(previous.words) : undefined;
    if (prev && (prev.name === 'curl' || prev.name === 'wget')) return 'curl … | sh: runs a script from the network';
    const script = args[args.indexOf('-c') + 1];
    if (args.includes('-c') && script !== undefined) {
      if (/\$\(\s*(?:curl|wget)\b|`\s*(?:curl|wget)\b/.test(script)) return 'curl … | sh: runs a script from the network';
      if (depth < 3) return commandRisk(script, depth + 1);
    }
  }
  return undefined;
}

function commandRisk(command: string, depth: number): string | undefined {
  if (/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}/.test(command)) return 'a fork bomb';
  if (/\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b/i.test(command)) return 'drops a database table';
  if (/\b(?:ba|z|da|k)?sh\s+<\(\s*(?:curl|wget)\b/.test(command)) return 'curl … | sh: runs a script from the network';
  const commands = simpleCommands(command);
  for (let i = 0; i < commands.length; i++) {
    const risk = simpleRisk(commands[i]!, commands[i - 1], depth);
    if (risk) return risk;
  }
  return undefined;
}

/**
 * What the first known-destructive command in `command` does (`rm -rf`, `git push --force`, `git
 * reset --hard`, `dd of=`, `mkfs`, `chmod -R`, `curl … | sh`, `sudo`, a write to /etc, …), or
 * undefined when none is recognised. A recogniser, not a parser: it errs towards asking.
 */
export function destructiveCommandReason(command: string): string | undefined {
  return commandRisk(command, 0);
}

/**
 * The terminal's rule under `risky`: the model's rating (HIGH or unrated asks), and a command this
 * recognises as destructive asks whatever the rating.
 */
export function terminalNeedsApproval(args: unknown): boolean {
  if (riskyUnlessRatedLow(args)) return true;
  const command = (args as { command?: unknown } | null | undefined)?.command;
  return typeof command === 'string' && destructiveCommandReason(command) !== undefined;
}
