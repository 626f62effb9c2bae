// Git, run so that nothing outside arb can configure it. A directory arb forks or diffs may be a
// fork a confined command changed, its .git/config, hooks and .gitattributes included, and git
// runs programs named there (core.fsmonitor, core.hooksPath, diff.external, filter drivers,
// core.pager…). So arb never runs git in such a repository: it runs git on a repository of its
// own, made in the temporary directory, with no system or global configuration, no hooks, no
// fsmonitor, and attributes neutralised, and removes it afterwards (on error too).
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { visible } from '../tree/paths';
import { ArbError } from '../errors';
import { commonlyWritable, findProgram, isUntrusted } from '../paths/programs';

// Which git: found once, by an absolute path, on PATH but in no directory a confined command could
// have written: the directories arb works on (the fork, its base, the directory forked, -d and -w
// of confine), the working directory, the temporary directories and caches. A `git` planted in
// node_modules/.bin or a project's bin (on PATH through npm run or direnv) is never run.
let chosenGit: string | undefined;
const untrustedDirs: string[] = [];

/**
 * Adds directories where git is never taken from (the callers' directories, as they start). If
 * the git already chosen is in one, it is found again.
 */
export function trustGitOutside(dirs: readonly string[]): void {
  for (const d of dirs) if (path.isAbsolute(d)) untrustedDirs.push(path.resolve(d));
  if (chosenGit !== undefined && isUntrusted(chosenGit, untrustedDirs)) chosenGit = undefined;
}

/** The git arb runs (see trustGitOutside). */
export function gitProgram(): string {
  if (chosenGit !== undefined) return chosenGit;
  // The working directory, unless it is / (which would leave no git anywhere: nobody works in
  // a fork from there).
  const cwd = process.cwd();
  const untrusted = [...untrustedDirs, ...(cwd === '/' ? [] : [cwd]), ...commonlyWritable(process.env, process.env.HOME ?? os.homedir())];
  const found = findProgram('git', process.env.PATH, untrusted);
  if (found === undefined) {
    throw new ArbError('ARB_GIT', 'git is not installed', {
      hint: 'install git (apt-get install git); a git on PATH where a confined command could write (the directory, /tmp, a cache) is not used',
    });
  }
  chosenGit = found;
  return found;
}

export interface GitResult {
  status: number;
  stdout: Buffer;
  stderr: string;
}

export interface GitRunOptions {
  /** The work tree git looks at (GIT_WORK_TREE); the private repository otherwise. */
  workTree?: string;
  /** Another index file than the private repository's own. */
  indexFile?: string;
  /** An object directory to read (GIT_OBJECT_DIRECTORY); git only reads objects from it. */
  objectDirectory?: string;
  /** More object directories to read (GIT_ALTERNATE_OBJECT_DIRECTORIES). */
  alternateObjectDirectories?: string[];
  input?: Buffer | string;
  /** Writes git's input as it goes (with backpressure), for input too large to hold. */
  feed?: (stdin: import('node:stream').Writable) => Promise<void>;
  /** Takes git's output as it comes, rather than collecting it (stdout is then empty). */
  onStdout?: (chunk: Buffer) => void;
  /** Statuses that are not failures (e.g. [0, 1] for diff). */
  okStatuses?: number[];
}

// Each `-c` is also set in the repository's own config, but on the command line too so that
// nothing (not even an include) can come before it.
const SAFE_CONFIG: string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.pager=cat',
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'core.askPass=',
  'core.sshCommand=false',
  'core.symlinks=true',
  'core.fileMode=true',
  'core.ignoreCase=false',
  'core.precomposeUnicode=false',
  'core.quotePath=false',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.bigFileThreshold=512m',
  'diff.external=',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.relative=false',
  'diff.renames=true',
  'diff.algorithm=myers',
  'color.ui=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'protocol.allow=never',
  'safe.directory=*',
  'index.sparse=false',
  'feature.manyFiles=false',
  // Nothing written here outlives the command (the repository is removed after): fast-import's
  // two fsyncs of its pack cost arb diff 2.5 to 5.5 ms each time, more on a busy disk.
  'core.fsync=none',
];

// Every attribute that can change what git reads or prints, unset for every path. The private
// repository's info/attributes comes before any .gitattributes in the work tree.
const NEUTRAL_ATTRIBUTES = '* !text !eol !crlf !filter !diff !merge !ident !working-tree-encoding !export-ignore !export-subst !binary !whitespace\n';

/** The environment git runs with: nothing of the caller's GIT_* variables, no config files. */
function gitEnv(home: string, gitDir: string, options: GitRunOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('GIT_') && k !== 'PAGER' && k !== 'EDITOR' && k !== 'VISUAL') env[k] = v;
  }
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_SYSTEM: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_DIR: gitDir,
    GIT_CEILING_DIRECTORIES: '/',
    LC_ALL: 'C',
  });
  if (options.workTree) env.GIT_WORK_TREE = options.workTree;
  if (options.indexFile) env.GIT_INDEX_FILE = options.indexFile;
  if (options.objectDirectory) env.GIT_OBJECT_DIRECTORY = options.objectDirectory;
  if (options.alternateObjectDirectories?.length) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = options.alternateObjectDirectories.join(':');
  return env;
}

/**
 * Where private repositories are made: the user's runtime directory ($XDG_RUNTIME_DIR, private to
 * the user and not writable by a confined command) where there is one, else the temporary
 * directory. A command confined by Landlock alone may write /tmp: there it could race to plant
 * configuration or attributes in a repository arb is about to run git in.
 */
export function privateParent(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) {
    try {
      const st = fs.lstatSync(runtime);
      if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0) return runtime;
    } catch {
      /* not there: the temporary directory */
    }
  }
  return os.tmpdir();
}

// A git blocked forever on a FIFO: a confined command can put one where git reads a file of the
// tree it looks at (a .gitignore, a nested repository's HEAD). open(2) of a FIFO waits for a
// writer (Linux shows `wait_for_partner` in /proc/PID/wchan), and a process the command left
// running can be that writer and never write (git then waits in a pipe read on a named FIFO it
// holds, which git never has a reason to open). Such a git is killed, and its failure says why,
// rather than arb hanging.
const FIFO_POLL_MS = 100;
export const FIFO_BLOCKED =
  'it was blocked on a FIFO in the directory (a FIFO where git reads a file, such as a .gitignore or a HEAD); remove it and run again';

function blockedOnFifo(pid: number | undefined): boolean {
  if (pid === undefined || process.platform !== 'linux') return false;
  try {
    const wchan = fs.readFileSync(`/proc/${pid}/wchan`, 'latin1');
    if (wchan === 'wait_for_partner') return true;
    // Waiting on a pipe: its own stdin (check-ignore --stdin), or a FIFO of the tree.
    if (!wchan.includes('pipe')) return false;
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const link = `/proc/${pid}/fd/${fd}`;
      try {
        if (!fs.readlinkSync(link).startsWith('pipe:') && fs.statSync(link).isFIFO()) return true;
      } catch {
        /* closed meanwhile */
      }
    }
  } catch {
    /* exited meanwhile */
  }
  return false;
}

export class PrivateRepo {
  /** The temporary directory holding the repository (and a HOME for git). */
  readonly root: string;
  readonly gitDir: string;
  private readonly home: string;

  private constructor(root: string) {
    this.root = root;
    this.gitDir = path.join(root, 'repo.git');
    this.home = path.join(root, 'home');
  }

  /**
   * Makes the repository: what `git init --bare --template=` makes, with core.bare false, its
   * attributes set as above. Written here rather than by running git init and git config: two
   * processes less for every arb diff and arb fork (issue 10), and nothing of git's templates.
   */
  static async create(): Promise<PrivateRepo> {
    const root = fs.mkdtempSync(path.join(privateParent(), 'arb-git-'));
    const repo = new PrivateRepo(root);
    // Removed at exit from here on: Ctrl-C may come while it is made.
    live.add(repo);
    try {
      fs.mkdirSync(repo.home, { mode: 0o700 });
      for (const dir of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) {
        fs.mkdirSync(path.join(repo.gitDir, dir), { recursive: true });
      }
      fs.writeFileSync(path.join(repo.gitDir, 'HEAD'), 'ref: refs/heads/master\n');
      // fast-import (arb diff's patch) keeps what it writes as one pack: below unpackLimit it
      // would run unpack-objects to make loose objects, one more process and more files to remove.
      fs.writeFileSync(
        path.join(repo.gitDir, 'config'),
        '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[fastimport]\n\tunpackLimit = 0\n',
      );
      fs.writeFileSync(path.join(repo.gitDir, 'info', 'attributes'), NEUTRAL_ATTRIBUTES);
      fs.writeFileSync(path.join(repo.gitDir, 'info', 'exclude'), '');
      return repo;
    } catch (err) {
      live.delete(repo);
      repo.dispose();
      throw err;
    }
  }

  /** Runs git with the safe configuration; rejects on a status not in okStatuses. */
  git(args: string[], options: GitRunOptions = {}, withGitDir = true): Promise<GitResult> {
    const env = gitEnv(this.home, this.gitDir, options);
    if (!withGitDir) delete env.GIT_DIR;
    const argv = [...SAFE_CONFIG.flatMap((c) => ['-c', c]), ...args];
    const ok = options.okStatuses ?? [0];
    return new Promise((resolve, reject) => {
      const child = spawn(gitProgram(), argv, {
        cwd: options.workTree ?? this.root,
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.track(child);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', options.onStdout ?? ((b: Buffer) => out.push(b)));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', (e) => {
        const code = (e as NodeJS.ErrnoException).code;
        reject(
          new ArbError('ARB_GIT', code === 'ENOENT' ? 'git is not installed' : `cannot run git: ${e.message}`, {
            cause: e,
            hint: code === 'ENOENT' ? 'install git (apt-get install git)' : undefined,
          }),
        );
      });
      child.on('close', (status, signal) => {
        const stderr = Buffer.concat(err).toString();
        const result: GitResult = { status: status ?? 128, stdout: Buffer.concat(out), stderr };
        if (this.fifoBlocked.has(child)) {
          reject(new ArbError('ARB_GIT', `git ${args[0]} was stopped: ${FIFO_BLOCKED}`));
        } else if (signal || !ok.includes(result.status)) {
          reject(
            new ArbError('ARB_GIT', `git ${args[0]} failed${signal ? ` (${signal})` : ` with status ${status}`}: ${visible(stderr.trim().split('\n').slice(-3).join('; '))}`),
          );
        } else {
          resolve(result);
        }
      });
      child.stdin.on('error', () => {
        /* git may exit before reading all of its input; its status says what happened */
      });
      if (options.feed) {
        options.feed(child.stdin).then(
          () => child.stdin.end(),
          (e: unknown) => {
            child.kill('SIGKILL');
            reject(e);
          },
        );
      } else {
        child.stdin.end(options.input ?? '');
      }
    });
  }

  private readonly children = new Set<ChildProcess>();
  private readonly fifoBlocked = new WeakSet<ChildProcess>();
  private watchdog?: NodeJS.Timeout;

  /** Whether `child` was killed for waiting on a FIFO (see FIFO_BLOCKED). */
  wasBlockedOnFifo(child: ChildProcess): boolean {
    return this.fifoBlocked.has(child);
  }

  /** Keeps `child` to kill on dispose(), and watches it for a wait on a FIFO while it runs. */
  private track(child: ChildProcess): void {
    this.children.add(child);
    child.on('close', () => {
      this.children.delete(child);
      if (this.children.size === 0 && this.watchdog) {
        clearInterval(this.watchdog);
        this.watchdog = undefined;
      }
    });
    if (process.platform !== 'linux' || this.watchdog) return;
    this.watchdog = setInterval(() => {
      for (const c of this.children) {
        if (c.exitCode === null && c.signalCode === null && blockedOnFifo(c.pid)) {
          this.fifoBlocked.add(c);
          c.kill('SIGKILL');
        }
      }
    }, FIFO_POLL_MS);
    this.watchdog.unref();
  }

  /**
   * Starts git with the same safe configuration and environment as git(), for a conversation over
   * its pipes (e.g. `check-ignore --stdin`); the caller ends its input. Like every git it runs,
   * killed on dispose(), so that none writes into the repository as it is removed (Ctrl-C).
   */
  start(args: string[], options: Omit<GitRunOptions, 'input' | 'okStatuses'> = {}): ChildProcess {
    const child = spawn(gitProgram(), [...SAFE_CONFIG.flatMap((c) => ['-c', c]), ...args], {
      cwd: options.workTree ?? this.root,
      env: gitEnv(this.home, this.gitDir, options),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.track(child);
    return child;
  }

  private aliases = 0;

  /**
   * A name for the directory at `target` (absolute bytes) that git can be given: a link to it in
   * the repository's directory. Git takes paths (GIT_WORK_TREE, GIT_OBJECT_DIRECTORY, its working
   * directory) as text from the environment, where a name that is not UTF-8 cannot go; through
   * the link git reaches the directory byte for byte (it resolves a work tree's real path).
   */
  alias(target: Buffer): string {
    const dir = path.join(this.root, 'trees');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.aliases += 1;
    const link = path.join(dir, String(this.aliases));
    fs.symlinkSync(target, link);
    return link;
  }

  /** Removes the repository and its temporary directory. */
  dispose(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    for (const child of this.children) child.kill('SIGKILL');
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

// Private repositories still present at exit (Ctrl-C, an uncaught error) are removed then. The
// signal hooks are there only while a repository is: confine, which runs git to fork and then
// waits for its command, handles those signals itself afterwards (it passes them on), and a hook
// left behind would re-raise one and kill it.
const live = new Set<PrivateRepo>();
let hooked = false;
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
function onExit(): void {
  for (const repo of live) repo.dispose();
}
function onSignal(sig: NodeJS.Signals): void {
  for (const repo of live) repo.dispose();
  unhookExit();
  process.kill(process.pid, sig);
}
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', onExit);
  for (const sig of EXIT_SIGNALS) process.on(sig, onSignal);
}
function unhookExit(): void {
  if (!hooked) return;
  hooked = false;
  process.removeListener('exit', onExit);
  for (const sig of EXIT_SIGNALS) process.removeListener(sig, onSignal);
}

/** Runs fn with a fresh private repository, removed afterwards whatever happens. */
export async function withPrivateRepo<T>(fn: (repo: PrivateRepo) => Promise<T>): Promise<T> {
  hookExit();
  const repo = await PrivateRepo.create();
  live.add(repo);
  try {
    return await fn(repo);
  } finally {
    live.delete(repo);
    repo.dispose();
    if (live.size === 0) unhookExit();
  }
}
