// What runs later, outside confine, from the caches a confined command may write: one table,
// per tool (also in man/confine.1, CACHES). A command that planted a program or a setting there
// would have it run unconfined at the user's next build, login or command. Each path is kept
// read-only inside the writable cache by the mount plan (src/confine/mount-plan.ts), in both
// Linux jails, whether it exists yet or not and whatever PATH is:
//   - a directory that does not exist yet is made (empty) first, then bound read-only;
//   - a file that does not exist yet cannot be made either: the directory it would be in is
//     bound read-only, and what is already in that directory is bound back writable.
// What stays writable and runs later only through a program that checks it (~/.cache/pip's
// wheels, ~/.cache/go-build's objects, cargo's registry sources) is not listed.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInside } from '../paths/inside';

export type RunLaterKind = 'dir' | 'file';

export interface RunLaterEntry {
  /** The tool, as the man page's table names it. */
  tool: string;
  /** Where, under the tool's directory. */
  rel: string;
  kind: RunLaterKind;
  why: string;
}

/** A tool's directory: where its entries are, from the environment or the home directory. */
interface ToolHome {
  tool: string;
  /** The variables that move it, first wins; else `fallback` under the home directory. */
  variables: readonly string[];
  fallback: string;
  entries: readonly Omit<RunLaterEntry, 'tool'>[];
  /**
   * Where a tool whose directory's top is kept read-only (it has a file in the table) writes
   * while it works: made (empty) first when missing, so that it still works in a new cache.
   */
  work?: readonly { rel: string; kind: RunLaterKind }[];
}

const TOOLS: readonly ToolHome[] = [
  {
    tool: 'rustup',
    variables: ['RUSTUP_HOME'],
    fallback: '.rustup',
    entries: [
      { rel: 'toolchains', kind: 'dir', why: 'the toolchains: rustc, cargo and the rest run outside later' },
      { rel: 'settings.toml', kind: 'file', why: "rustup's default toolchain and overrides (which toolchain runs)" },
      { rel: 'update-hashes', kind: 'dir', why: "rustup's record of what it installed" },
    ],
    work: [
      { rel: 'downloads', kind: 'dir' },
      { rel: 'tmp', kind: 'dir' },
    ],
  },
  {
    tool: 'cargo',
    variables: ['CARGO_HOME'],
    fallback: '.cargo',
    entries: [
      { rel: 'bin', kind: 'dir', why: 'programs cargo install puts on PATH' },
      { rel: 'env', kind: 'file', why: 'sourced by your shell at login (rustup writes it)' },
      { rel: 'env.fish', kind: 'file', why: 'sourced by fish at login' },
      { rel: 'env.nu', kind: 'file', why: 'sourced by nushell at login' },
      { rel: 'config', kind: 'file', why: 'cargo configuration (the name cargo prefers): build.rustc-wrapper, runners' },
      { rel: 'config.toml', kind: 'file', why: 'cargo configuration: build.rustc-wrapper, runners' },
    ],
    // Its registry and git checkouts, and its locks and last-use database (an empty file is an
    // empty lock, and an empty SQLite database).
    work: [
      { rel: 'registry', kind: 'dir' },
      { rel: 'git', kind: 'dir' },
      { rel: '.package-cache', kind: 'file' },
      { rel: '.package-cache-mutate', kind: 'file' },
      { rel: '.global-cache', kind: 'file' },
    ],
  },
  {
    tool: 'npm/npx',
    variables: ['npm_config_cache', 'NPM_CONFIG_CACHE'],
    fallback: '.npm',
    entries: [{ rel: '_npx', kind: 'dir', why: 'packages npx runs (their executables)' }],
  },
  {
    tool: 'pip/uv',
    variables: [],
    fallback: '.local',
    entries: [
      { rel: 'bin', kind: 'dir', why: 'programs pip install --user and uv tool install put on PATH' },
      { rel: 'share/uv/tools', kind: 'dir', why: "uv's installed tools" },
    ],
  },
  {
    tool: 'go',
    variables: ['GOPATH'],
    fallback: 'go',
    entries: [{ rel: 'bin', kind: 'dir', why: 'programs go install puts on PATH' }],
  },
];

/** The table, one row per path, for the man page and -v. */
export function runLaterTable(): RunLaterEntry[] {
  return TOOLS.flatMap((t) => t.entries.map((e) => ({ tool: t.tool, ...e })));
}

/** One path of the table, resolved for a run (work: not protected, only made if missing). */
export interface RunLaterPath {
  path: string;
  kind: RunLaterKind;
  why: string;
  work?: boolean;
}

/**
 * The table's paths for each home directory and the environment: each tool's directory from its
 * variable (GOPATH may list several; GOBIN too), else under every protected home.
 */
export function runLaterPaths(homes: readonly string[], env: NodeJS.ProcessEnv): RunLaterPath[] {
  const out: RunLaterPath[] = [];
  const seen = new Set<string>();
  const add = (p: string, kind: RunLaterKind, why: string, work = false) => {
    const n = path.normalize(p);
    if (!path.isAbsolute(n) || seen.has(n)) return;
    seen.add(n);
    out.push({ path: n, kind, why, ...(work ? { work } : {}) });
  };
  for (const t of TOOLS) {
    const fromEnv = t.variables.map((v) => env[v]).find((v) => v !== undefined && v !== '');
    const roots = fromEnv !== undefined ? fromEnv.split(t.tool === 'go' ? ':' : '\0') : [];
    for (const h of homes) roots.push(path.join(h, t.fallback));
    for (const root of roots) {
      for (const e of t.entries) add(path.join(root, e.rel), e.kind, `${t.tool}: ${e.why}`);
      for (const w of t.work ?? []) add(path.join(root, w.rel), w.kind, `${t.tool}: where it works`, true);
    }
  }
  if (env.GOBIN) add(env.GOBIN, 'dir', 'go: programs go install puts on PATH ($GOBIN)');
  return out;
}

/**
 * Makes what the table needs that is not there yet, inside a writable path (but the directory the
 * command works in), where the tool's directory exists: its directories (empty), so they can be
 * bound read-only (an empty ~/.cargo/bin or ~/.npm/_npx changes nothing outside), and where a
 * tool works under a top kept read-only, its working directories and lock files (empty). Never
 * a file of the table (an empty ~/.cargo/config would hide config.toml from cargo). A name that
 * is a link (planted by an earlier run, say) is left as it is: neither mkdir nor O_EXCL follows it.
 */
export function makeRunLaterDirs(paths: readonly RunLaterPath[], writable: readonly string[], dir: string): string[] {
  const made: string[] = [];
  for (const p of paths) {
    if ((p.kind !== 'dir' && !p.work) || isInside(p.path, dir, 'lexical')) continue;
    let parent: string;
    try {
      parent = fs.realpathSync(path.dirname(p.path));
    } catch {
      continue; // the tool's directory itself is not there: nothing writes here
    }
    const real = path.join(parent, path.basename(p.path));
    if (!writable.some((w) => isInside(real, w, 'lexical') && real !== w)) continue;
    try {
      if (p.kind === 'dir') fs.mkdirSync(real, { mode: 0o755 });
      else fs.closeSync(fs.openSync(real, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644));
      made.push(real);
    } catch {
      /* there already (or a link): the mount plan judges what is there */
    }
  }
  return made;
}
