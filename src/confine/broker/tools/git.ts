// Running a tool that runs git (gh) on the confined command's repository, without running
// what the command wrote there.
//
// The repository's .git is the command's to change, and git runs programs that .git names: hooks,
// core.fsmonitor, and through .git/config core.sshCommand, credential.helper, diff and filter
// drivers, include.path, and so on. So the tool never runs git on that .git. It runs on a clone of
// it made where the command cannot write (a private directory of confine's), with hooks and the
// file system monitor off, and only if every configuration file in it (config, config.worktree,
// those of submodules) differs from what it was when confine started in nothing but what gh and
// `git push` write:
//
//   remote.NAME.gh-resolved            gh: which remote is the base repository
//   remote.NAME.url                    gh repo fork, gh pr create to a fork: a network URL only
//   remote.NAME.fetch                  added refspecs only (refs/…:refs/…)
//   branch.NAME.remote, .pushremote    git push -u, gh pr checkout: a remote that is defined, or
//                                      a network URL (a pull request from a fork)
//   branch.NAME.merge                  git push -u, gh pr checkout: refs/…
//   branch.NAME.gh-merge-base          gh pr create
//
// and with no include.path that the command could write, and objects/info/alternates as it was
// (else git, outside, could read and push objects of another repository of yours). When the tool has finished by itself,
// the clone replaces .git, so what the tool changed (config, refs, objects) is kept; what the
// command changed in .git meanwhile is then lost. Nothing of the clone is kept if the tool was
// stopped (the shim went away, confine is exiting).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { PrivateRepo, withPrivateRepo } from '../../../git/private-git';
import { isInsideAny } from '../../../paths/inside';

/** Refused: the message says why the tool cannot run on this repository. */
export class GitRefused extends Error {
  override readonly name = 'GitRefused';
}

export interface RepoSnapshot {
  /** The work tree's top (real path); its .git is a directory. */
  top: string;
  /** Each configuration file under .git, by path relative to .git, as it was. */
  files: Map<string, Buffer>;
  /** Files that must be as they were, byte for byte (EXACT), or absent (undefined) as they were. */
  exact: Map<string, Buffer | undefined>;
}

/**
 * Files other than configuration that make git read from elsewhere: alternates would let git,
 * outside, read objects of another repository of yours (and push them).
 */
const EXACT = ['objects/info/alternates', 'objects/info/http-alternates'];

/**
 * Directories whose every file must be as it was: remotes/ and branches/ define remotes the old
 * way, outside the configuration, so the configuration check would not see a remote added there
 * (one that pushes to a repository of the command's, whose configuration git would then obey).
 */
const EXACT_DIRS = ['remotes', 'branches'];

/** The files of EXACT_DIRS in a .git, as relative paths. */
function exactDirFiles(gitDir: string): string[] {
  const out: string[] = [];
  for (const d of EXACT_DIRS) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(gitDir, d));
    } catch {
      continue;
    }
    for (const n of names) out.push(`${d}/${n}`);
  }
  return out.sort();
}

function readIfFile(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/** A configuration entry as `git config --list` gives it: key (section and name lower-case), value. */
export type ConfigEntry = [key: string, value: string | null];

/** The nearest directory from `dir` up that has a `.git`, and what that .git is. */
export function findRepository(dir: string): { top: string; kind: 'dir' | 'file' | 'other' } | undefined {
  let p = dir;
  for (;;) {
    try {
      const st = fs.lstatSync(path.join(p, '.git'));
      return { top: p, kind: st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other' };
    } catch {
      /* none here */
    }
    const up = path.dirname(p);
    if (up === p) return undefined;
    p = up;
  }
}

// Directories of .git that hold no configuration, and are large: not searched for it.
const NO_CONFIG_IN = new Set(['objects', 'refs', 'logs', 'hooks', 'lfs', 'info', 'rr-cache']);

/** Paths (relative to gitDir) of every configuration file git may read: config, config.worktree. */
export function listConfigFiles(gitDir: string): string[] {
  const found: string[] = [];
  const walk = (rel: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(gitDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === 'config' || e.name === 'config.worktree') found.push(child);
      else if (e.isDirectory() && depth < 8 && !NO_CONFIG_IN.has(e.name)) walk(child, depth + 1);
    }
  };
  walk('', 0);
  return found.sort();
}

/** Records the configuration of the repository `dir` is in, as confine starts. */
export function snapshotRepository(dir: string): RepoSnapshot | undefined {
  const repo = findRepository(fs.realpathSync(dir));
  if (!repo || repo.kind !== 'dir') return undefined;
  const gitDir = path.join(repo.top, '.git');
  const files = new Map<string, Buffer>();
  for (const rel of listConfigFiles(gitDir)) {
    try {
      const file = path.join(gitDir, rel);
      if (fs.lstatSync(file).isFile()) files.set(rel, fs.readFileSync(file));
    } catch {
      /* gone meanwhile: then it differs later, and the tool is refused */
    }
  }
  const exact = new Map<string, Buffer | undefined>();
  for (const rel of [...EXACT, ...exactDirFiles(gitDir)]) exact.set(rel, readIfFile(path.join(gitDir, rel)));
  return { top: repo.top, files, exact };
}

/**
 * Parses configuration files' text with git (never with their includes), in one private
 * repository, where `then` may run more git before it is removed.
 */
export async function parseConfigs(texts: Buffer[], then?: (repo: PrivateRepo, parsed: ConfigEntry[][]) => Promise<unknown>): Promise<ConfigEntry[][]> {
  return withPrivateRepo(async (repo) => {
    const out: ConfigEntry[][] = [];
    for (let i = 0; i < texts.length; i++) {
      const file = path.join(repo.root, `config-${i}`);
      fs.writeFileSync(file, texts[i]);
      let stdout: Buffer;
      try {
        stdout = (await repo.git(['config', '--file', file, '--no-includes', '--list', '--null'])).stdout;
      } catch (err) {
        throw new GitRefused(`its git configuration cannot be read: ${(err as Error).message}`);
      }
      const entries: ConfigEntry[] = [];
      for (const item of stdout.toString('utf8').split('\0')) {
        if (item === '') continue;
        const nl = item.indexOf('\n');
        entries.push(nl < 0 ? [item, null] : [item.slice(0, nl), item.slice(nl + 1)]);
      }
      out.push(entries);
    }
    if (then) await then(repo, out);
    return out;
  });
}

function splitKey(key: string): { section: string; subsection?: string; name: string } {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first < 0) return { section: key, name: '' };
  if (first === last) return { section: key.slice(0, first), name: key.slice(last + 1) };
  return { section: key.slice(0, first), subsection: key.slice(first + 1, last), name: key.slice(last + 1) };
}

function valuesByKey(entries: ConfigEntry[]): Map<string, (string | null)[]> {
  const m = new Map<string, (string | null)[]>();
  for (const [k, v] of entries) {
    const list = m.get(k) ?? [];
    list.push(v);
    m.set(k, list);
  }
  return m;
}

function sameValues(a: (string | null)[], b: (string | null)[]): boolean {
  if (a.length !== b.length) return false;
  const sa = a.map((v) => JSON.stringify(v)).sort();
  const sb = b.map((v) => JSON.stringify(v)).sort();
  return sa.every((v, i) => v === sb[i]);
}

/** A URL git reaches over the network (not a local path, file://, ext:: or another helper). */
export function isNetworkUrl(url: string): boolean {
  let host: string | undefined;
  const full = /^(?:https?|ssh|git):\/\/(?:[^/@\s]*@)?(\[[^\]]*\]|[A-Za-z0-9][^/:\s]*)/i.exec(url);
  if (full) host = full[1];
  else {
    const scp = /^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):[^/\s-][^\s]*$/.exec(url); // git@github.com:owner/repo
    if (scp) host = scp[1];
  }
  if (host === undefined || /\s/.test(url)) return false;
  // A repository on this machine is one the command may have made: git there (receive-pack over
  // ssh to localhost) would run with its configuration and hooks, outside any sandbox.
  return !isThisMachine(host);
}

/** Whether a host names this machine (localhost, a loopback address, its own name). */
export function isThisMachine(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1' || h === '0.0.0.0' || /^127\./.test(h) || /^0*:[0:]*:0*1$/.test(h)) return true;
  const self = os.hostname().toLowerCase();
  return h === self || h === self.split('.')[0];
}

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const REFSPEC = /^\+?refs\/[^\s:]*:refs\/[^\s:]*$/;

/**
 * Which keys differ between two configurations, and which of those are not what gh and git push
 * write (see the top of this file). Pure: `before` is confine's snapshot, `after` the clone's.
 */
export function configChanges(before: ConfigEntry[], after: ConfigEntry[]): { changed: string[]; refused: string[] } {
  const b = valuesByKey(before);
  const a = valuesByKey(after);
  const remotesAfter = new Set<string>();
  for (const key of a.keys()) {
    const k = splitKey(key);
    if (k.section === 'remote' && k.subsection !== undefined && k.name === 'url') remotesAfter.add(k.subsection);
  }
  const changed: string[] = [];
  const refused: string[] = [];
  for (const key of new Set([...b.keys(), ...a.keys()])) {
    const was = b.get(key) ?? [];
    const now = a.get(key) ?? [];
    if (sameValues(was, now)) continue;
    changed.push(key);
    const k = splitKey(key);
    const values = now.filter((v): v is string => v !== null);
    let ok = false;
    if (k.subsection !== undefined && values.length === now.length) {
      if (k.section === 'remote' && REMOTE_NAME.test(k.subsection)) {
        if (k.name === 'gh-resolved') ok = true;
        else if (k.name === 'url') ok = now.length === 1 && isNetworkUrl(values[0]);
        else if (k.name === 'fetch') ok = was.every((v) => now.includes(v)) && values.every((v) => REFSPEC.test(v));
      } else if (k.section === 'branch') {
        // gh pr checkout of a pull request from a fork names the fork by its URL.
        if (k.name === 'remote' || k.name === 'pushremote') ok = now.length === 1 && ((REMOTE_NAME.test(values[0]) && remotesAfter.has(values[0])) || isNetworkUrl(values[0]));
        else if (k.name === 'merge') ok = now.length === 1 && /^refs\/[^\s]+$/.test(values[0]);
        else if (k.name === 'gh-merge-base') ok = now.length <= 1;
      }
    } else if (now.length === 0 && k.subsection !== undefined) {
      // Removed: what gh and git may remove of their own keys (a branch's upstream, gh-resolved).
      ok = (k.section === 'remote' && k.name === 'gh-resolved') ||
        (k.section === 'branch' && ['remote', 'pushremote', 'merge', 'gh-merge-base'].includes(k.name));
    }
    if (!ok) refused.push(key);
  }
  return { changed, refused };
}

/**
 * `NAME URL` for each remote of a configuration: its pushurl if it has one, else its url; and
 * `branch:NAME URL` for a branch that pushes to a URL rather than a remote (branch.NAME.pushremote,
 * remote.pushdefault as `*`).
 */
export function remotesOf(entries: ConfigEntry[]): string[] {
  const urls = new Map<string, { url?: string; push?: string }>();
  const direct: string[] = [];
  for (const [key, value] of entries) {
    const k = splitKey(key);
    if (value !== null && isUrlLike(value)) {
      if (k.section === 'branch' && k.subsection !== undefined && (k.name === 'pushremote' || k.name === 'remote')) direct.push(`branch:${k.subsection} ${value}`);
      if (k.section === 'remote' && k.subsection === undefined && k.name === 'pushdefault') direct.push(`branch:* ${value}`);
    }
    if (k.section !== 'remote' || k.subsection === undefined || value === null) continue;
    const r = urls.get(k.subsection) ?? {};
    if (k.name === 'url' && r.url === undefined) r.url = value;
    if (k.name === 'pushurl' && r.push === undefined) r.push = value;
    urls.set(k.subsection, r);
  }
  return [...[...urls].filter(([, r]) => r.url !== undefined || r.push !== undefined).map(([name, r]) => `${name} ${r.push ?? r.url}`), ...direct];
}

/** A value that names a place (a URL, user@host:path, a path) rather than a remote's name. */
function isUrlLike(value: string): boolean {
  return /[:/]/.test(value);
}

/**
 * include.path and includeIf.*.path entries that name a file the command could write: a relative
 * one (read from the clone, which is a copy of what the command left in .git), one inside the
 * directory or any writable path. `~/` is the home directory, which confine hides from the command.
 */
export function unsafeIncludes(entries: ConfigEntry[], home: string, writable: string[]): string[] {
  const bad: string[] = [];
  for (const [key, value] of entries) {
    const k = splitKey(key);
    const isInclude = (k.section === 'include' && k.name === 'path') || (k.section === 'includeif' && k.name === 'path');
    if (!isInclude) continue;
    if (value === null) continue;
    const target = value.startsWith('~/') ? path.join(home, value.slice(2)) : value;
    if (!path.isAbsolute(target) || isInsideAny(target, writable, 'resolved')) bad.push(`${key}=${value}`);
  }
  return bad;
}

/**
 * Copies a .git directory, sharing blocks where the file system can (FICLONE, clonefile). Refuses
 * symbolic links and special files: a link would let git read, through the clone, a file the
 * command can still change.
 */
export function copyGitDir(src: string, dst: string): void {
  fs.mkdirSync(dst, { mode: 0o700 });
  const walk = (s: string, d: string): void => {
    for (const e of fs.readdirSync(s, { withFileTypes: true })) {
      const from = path.join(s, e.name);
      const to = path.join(d, e.name);
      if (e.isDirectory()) {
        fs.mkdirSync(to, { mode: fs.lstatSync(from).mode & 0o7777 });
        walk(from, to);
      } else if (e.isFile()) {
        fs.copyFileSync(from, to, fs.constants.COPYFILE_FICLONE);
      } else {
        throw new GitRefused(`its .git holds ${e.isSymbolicLink() ? 'a symbolic link' : 'a special file'}, ${path.relative(src, from)}`);
      }
    }
  };
  walk(src, dst);
}

/**
 * Paths, sizes, modes and times of a tree but `skip` (compared by content instead): equal before
 * and after means the tool changed nothing.
 */
function treeSignature(dir: string, skip: string): string {
  const parts: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (child === skip) continue;
      const st = fs.lstatSync(path.join(dir, child));
      parts.push(`${child}\0${st.mode}\0${st.size}\0${st.mtimeMs}`);
      if (e.isDirectory()) walk(child);
    }
  };
  walk('');
  return parts.join('\n');
}

/**
 * What git is made to do whatever any configuration file says. Settings from the environment
 * (GIT_CONFIG_COUNT) come after every file, and git passes them on to the git it starts in a
 * submodule, so a nested repository's own configuration cannot undo them either.
 */
export const GIT_PINS: readonly [key: string, value: string, why: string][] = [
  ['core.hooksPath', '/dev/null', 'no hook of the repository (or of a nested one, or of a local remote) runs'],
  ['core.fsmonitor', 'false', 'no file system monitor program'],
  // git never enters a nested repository (a submodule, or any repository the index records), where
  // the configuration is the command's: filters, textconv, diff drivers, pagers, ssh commands.
  ['diff.ignoreSubmodules', 'all', 'git status and git diff do not run git in submodules'],
  ['status.submoduleSummary', 'false', 'git status does not run git log in submodules'],
  ['diff.submodule', 'short', 'git diff does not run git log or git diff in submodules'],
  ['submodule.recurse', 'false', 'checkout, pull and the rest do not recurse'],
  ['fetch.recurseSubmodules', 'false', 'git fetch (gh pr checkout) does not fetch in submodules'],
  ['push.recurseSubmodules', 'no', 'git push does not push (or check) submodules'],
  // Transports that run programs, or read another local repository, named by .gitmodules or a
  // legacy .git/remotes file: ext:: runs a command; file:// only when the user gives it.
  ['protocol.ext.allow', 'never', 'an ext:: URL would run a command'],
  // A local repository pushed to or fetched from runs receive-pack or upload-pack there, without
  // these pins (git clears them for a local transport): its own hooks and configuration would run.
  ['protocol.file.allow', 'never', 'no push or fetch to a repository on this file system'],
];

/**
 * The variables that make every git the tool runs use our settings over any configuration file
 * (GIT_PINS), and no pager, editor or prompt. Settings the user's own environment had come first;
 * ours win.
 */
export function pinnedGitEnv(env: Record<string, string | undefined>): Record<string, string> {
  const pins = GIT_PINS.map(([k, v]) => [k, v] as const);
  const start = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const n = Number.isInteger(start) && start >= 0 && start < 1000 ? start : 0;
  const out: Record<string, string> = {};
  pins.forEach(([k, v], i) => {
    out[`GIT_CONFIG_KEY_${n + i}`] = k;
    out[`GIT_CONFIG_VALUE_${n + i}`] = v;
  });
  out.GIT_CONFIG_COUNT = String(n + pins.length);
  // git reads GIT_CONFIG_PARAMETERS (git -c) after GIT_CONFIG_COUNT: the pins go last there too.
  out.GIT_CONFIG_PARAMETERS = [env.GIT_CONFIG_PARAMETERS, ...pins.map(([k, v]) => `'${k}'='${v}'`)].filter((p) => p).join(' ');
  // No pager or editor on the command's terminal (they run commands typed into them), and no
  // prompt there for a user name or password.
  Object.assign(out, { GIT_PAGER: 'cat', GIT_EDITOR: 'false', GIT_SEQUENCE_EDITOR: 'false', GIT_TERMINAL_PROMPT: '0' });
  return out;
}

/**
 * Attributes that name a program's driver (filter, diff with textconv or a command, merge), unset
 * for every path. The clone's info/attributes comes before every .gitattributes of the work tree,
 * at any depth, and its last line wins: so it is added at the end, and taken out again afterwards.
 */
export const NEUTRAL_ATTRIBUTES = '* !filter !diff !merge\n';

/** Variables of the user's that would name another repository than the one we give git. */
export const REPOSITORY_VARIABLES = [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_CEILING_DIRECTORIES', 'GIT_DISCOVERY_ACROSS_FILESYSTEM',
];

/** A path that can never exist (under /dev/null), so git finds no repository whatever is made meanwhile. */
export const NO_REPOSITORY = '/dev/null/no-repository';

export interface GitContext {
  /** confine's snapshot, or undefined if the directory was in no repository then. */
  snapshot: RepoSnapshot | undefined;
  /** The directory the command is confined to (real path). */
  root: string;
  /** Paths the command can write: the clone is made in none of them. */
  writable: string[];
  home: string;
  /** The user's environment (for GIT_CONFIG_COUNT). */
  env: Record<string, string | undefined>;
}

export interface PreparedGit {
  /** Variables to add to the tool's environment (and REPOSITORY_VARIABLES to remove). */
  env: Record<string, string>;
  /** The repository's top, if there is one (for the question and messages). */
  top?: string;
  /**
   * Each remote as `NAME URL` (its push URL where it has one), read from confine's own copy of the
   * configuration, after the checks: where a push goes. For the question.
   */
  remotes: string[];
  /** The private directory holding the clone, which the tool must be able to write. */
  privateDir?: string;
  /**
   * Ends the tool's use of the clone: if `keep`, the clone replaces .git when the tool changed
   * it. Resolves with a warning to show the user, if something could not be done.
   */
  finish(keep: boolean): Promise<string | undefined>;
}

/** Where the clone can go: beside the repository if the command cannot write there, else home. */
function privateParent(top: string, context: GitContext): string {
  const candidates = [path.dirname(top), path.join(context.home, '.local', 'state', 'confine')];
  for (const c of candidates) {
    if (isInsideAny(c, [context.root, ...context.writable], 'resolved')) continue;
    try {
      fs.mkdirSync(c, { recursive: true, mode: 0o700 });
      fs.accessSync(c, fs.constants.W_OK);
      return c;
    } catch {
      /* try the next */
    }
  }
  throw new GitRefused(`there is nowhere the command cannot write to put a copy of ${top}/.git`);
}

/**
 * Adds NEUTRAL_ATTRIBUTES at the end of the clone's info/attributes; restore() puts back what was
 * there (nothing, if there was no file or no info directory).
 */
function neutraliseAttributes(clone: string): { restore(): void } {
  const info = path.join(clone, 'info');
  const file = path.join(info, 'attributes');
  const hadInfo = fs.existsSync(info);
  const original = readIfFile(file);
  if (!hadInfo) fs.mkdirSync(info, { mode: 0o755 });
  const text = original === undefined ? '' : original.toString('latin1');
  fs.writeFileSync(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${NEUTRAL_ATTRIBUTES}`, 'latin1');
  return {
    restore: () => {
      if (original !== undefined) fs.writeFileSync(file, original);
      else if (hadInfo) fs.rmSync(file, { force: true });
      else fs.rmSync(info, { recursive: true, force: true });
    },
  };
}

/** Moves (or copies) the clone into place as top/.git. */
function replaceGitDir(top: string, clone: string): void {
  const stage = fs.mkdtempSync(path.join(top, '.git.confine-'));
  try {
    const fresh = path.join(stage, 'new');
    try {
      fs.renameSync(clone, fresh);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      copyGitDir(clone, fresh);
    }
    const old = path.join(stage, 'old');
    const gitDir = path.join(top, '.git');
    let moved = false;
    try {
      fs.renameSync(gitDir, old);
      moved = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    try {
      fs.renameSync(fresh, gitDir);
    } catch (err) {
      if (moved) fs.renameSync(old, gitDir);
      throw err;
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Gets a clone of the repository the tool would run in ready, or refuses (GitRefused). `cwd` is
 * the tool's working directory (real path, inside the root).
 */
export async function prepareGit(cwd: string, context: GitContext): Promise<PreparedGit> {
  const pinned = pinnedGitEnv(context.env);
  const repo = findRepository(cwd);
  if (!repo) {
    // No repository: none may appear for git while the tool runs either.
    return { env: { ...pinned, GIT_DIR: NO_REPOSITORY }, remotes: [], finish: async () => undefined };
  }
  if (repo.kind === 'file') throw new GitRefused(`${repo.top}/.git is a file (a worktree or a submodule), which is not supported`);
  if (repo.kind !== 'dir') throw new GitRefused(`${repo.top}/.git is not a directory`);
  const snapshot = context.snapshot;
  if (!snapshot || snapshot.top !== repo.top) {
    throw new GitRefused(`the repository ${repo.top} was not there when confine started`);
  }

  const parent = privateParent(repo.top, context);
  const dir = fs.mkdtempSync(path.join(parent, '.confine-git-'));
  const clone = path.join(dir, 'git');
  let done = false;
  const dispose = (): void => {
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    copyGitDir(path.join(repo.top, '.git'), clone);
    if (fs.existsSync(path.join(clone, 'commondir'))) throw new GitRefused(`${repo.top}/.git names another repository (commondir)`);

    for (const rel of exactDirFiles(clone)) {
      if (!snapshot.exact.has(rel)) throw new GitRefused(`its .git/${rel} is new since confine started`);
    }
    for (const [rel, was] of snapshot.exact) {
      const now = readIfFile(path.join(clone, rel));
      if ((was === undefined) !== (now === undefined) || (was && now && !was.equals(now))) {
        throw new GitRefused(`its .git/${rel} changed since confine started`);
      }
    }

    const files = listConfigFiles(clone);
    const names = new Set([...files, ...snapshot.files.keys()]);
    const rels = [...names].sort();
    for (const rel of rels) {
      if (!files.includes(rel)) throw new GitRefused(`its .git/${rel} is gone since confine started`);
      if (!snapshot.files.has(rel)) throw new GitRefused(`its .git/${rel} is new since confine started`);
    }
    const texts: Buffer[] = [];
    for (const rel of rels) texts.push(snapshot.files.get(rel) as Buffer, fs.readFileSync(path.join(clone, rel)));
    // The work tree is named in the clone's own config rather than by GIT_WORK_TREE, which would
    // also apply to a repository the tool makes (gh repo clone) and make git refuse. It is set in
    // the same private repository the configuration is read in, and taken out again at the end.
    const config = path.join(clone, 'config');
    const configIndex = rels.indexOf('config');
    if (configIndex < 0) throw new GitRefused(`${repo.top}/.git has no config`);
    const original = fs.readFileSync(config);
    let hadWorktree = false;
    const parsed = await parseConfigs(texts, async (r, entries) => {
      hadWorktree = entries[2 * configIndex + 1].some(([k]) => k === 'core.worktree');
      if (!hadWorktree) await r.git(['config', '--file', config, 'core.worktree', repo.top]);
    });
    for (let i = 0; i < rels.length; i++) {
      const before = parsed[2 * i];
      const after = parsed[2 * i + 1];
      const { refused } = configChanges(before, after);
      if (refused.length > 0) {
        throw new GitRefused(`its git configuration (.git/${rels[i]}) changed since confine started: ${refused.join(', ')}`);
      }
      const includes = unsafeIncludes(after, context.home, [context.root, ...context.writable]);
      if (includes.length > 0) throw new GitRefused(`its git configuration (.git/${rels[i]}) includes a file the command can change: ${includes.join(', ')}`);
    }
    const withWorktree = fs.readFileSync(config);
    const attributes = neutraliseAttributes(clone);
    const before = treeSignature(clone, 'config');

    return {
      // GIT_OPTIONAL_LOCKS=0: git status does not rewrite the index just to refresh it, so the
      // clone replaces .git only when the tool changed something.
      env: { ...pinned, GIT_DIR: clone, GIT_OPTIONAL_LOCKS: '0' },
      top: repo.top,
      remotes: remotesOf(parsed[2 * configIndex + 1]),
      privateDir: dir,
      finish: async (keep: boolean) => {
        if (done) return undefined;
        done = true;
        try {
          if (!keep) return undefined;
          const now = fs.readFileSync(config);
          const configChanged = !now.equals(withWorktree);
          const treeChanged = treeSignature(clone, 'config') !== before;
          attributes.restore();
          if (!hadWorktree) {
            if (!configChanged) fs.writeFileSync(config, original);
            else await withPrivateRepo((r) => r.git(['config', '--file', config, '--unset', 'core.worktree'], { okStatuses: [0, 5] }));
          }
          if (!configChanged && !treeChanged) return undefined;
          replaceGitDir(repo.top, clone);
          return undefined;
        } catch (err) {
          return `cannot put back ${repo.top}/.git after gh changed it: ${(err as Error).message}`;
        } finally {
          dispose();
        }
      },
    };
  } catch (err) {
    dispose();
    throw err;
  }
}

/** For tests and for messages: where confine keeps its clones when beside the repository will not do. */
export function stateDirectory(home = os.homedir()): string {
  return path.join(home, '.local', 'state', 'confine');
}
