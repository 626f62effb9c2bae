#!/usr/bin/env node
// After tsc: makes the executable start fast (confine runs before every agent: issue 10).
//
//   dist/cli.bundle.js   src/cli.ts and everything it may load (src/**, yargs and its
//                        dependencies) in one file, made by esbuild: one file read instead of
//                        some forty resolved, read and compiled one by one.
//   dist/cli.bundle.cache  V8's code cache for it, made here by running a few commands with it,
//                        so that starting arb neither parses the bundle nor compiles the
//                        functions those commands use.
//   dist/cli.js          the executable (bin): runs the bundle with its cache (LOADER below).
//
// The rest of dist/ stays as tsc made it, for the library (dist/index.js and its .d.ts files).
//
// Loading stays lazy: a module the CLI reaches with require() inside a function (each command,
// the fork engine, the broker…) is bundled as a function that runs the first time it is
// required, as Node would load the file then. Only the native addon stays outside (found at run
// time, src/native.ts). `__dirname` in a bundled file is rewritten to the directory that file has
// without the bundle (dist/confine/broker for src/confine/broker/*.ts, node_modules/yargs/build
// for yargs), so that paths made from it (the addon, arb's own root, yargs' locale files) are
// the same.
//
// The cache is made here, never at run time: a cache arb wrote where it runs could be rewritten
// by a confined command (V8 runs what it holds), so it lives beside the bundle, as trusted as the
// code. V8 takes it only for the very source and V8 it was made with, and compiles the source
// otherwise (another Node, a changed bundle): a stale cache costs time, never behaviour.
//
// Without esbuild (a devDependency: `npm install --omit=dev` leaves it out) tsc's dist/cli.js
// is kept: the same program, starting slower.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const CLI = path.join(DIST, 'cli.js');
const BUNDLE = path.join(DIST, 'cli.bundle.js');
const CACHE = path.join(DIST, 'cli.bundle.cache');

// The executable. Kept small and plain: it is compiled from source every time.
const LOADER = `#!/usr/bin/env node
// arb's executable: runs cli.bundle.js, the whole command line in one file, with the V8 code cache
// made for it when it was built (scripts/build-cli.js says why and how).
'use strict';
const { readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { Script } = require('node:vm');
const { wrap } = require('node:module');

const file = join(__dirname, 'cli.bundle.js');
const cache = join(__dirname, 'cli.bundle.cache');
let cachedData;
try {
  // V8 checks the cache against the source's length, not its text: a bundle changed after its
  // cache was made (newer than it) is compiled from source.
  if (statSync(file).mtimeMs <= statSync(cache).mtimeMs) cachedData = readFileSync(cache);
} catch {
  // No cache: V8 compiles the source.
}
// The bundle is ASCII (esbuild escapes the rest): read as latin1, V8 takes its bytes as they are.
new Script(wrap(readFileSync(file, 'latin1')), { filename: file, cachedData }).runInThisContext()(exports, require, module, __filename, __dirname);
`;

/** The directory a file would be run from without the bundle. */
function runtimeDir(file) {
  const rel = path.relative(SRC, file);
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) return path.join(DIST, path.dirname(rel));
  return path.dirname(file);
}

// What yargs does when it is loaded that a run which shows no help never needs, done when first
// needed instead, without touching yargs' text (so any yargs builds the same way):
//   - cliui and string-width (help layout): yargs' require of each resolves to a stand-in that
//     loads the real one at its first call (lazyHelpModules);
//   - process.stdout, which yargs reads at load for the terminal's width (a stream, a socket for
//     a pipe, that confine would make for nothing just before the command takes over its output):
//     `process.stdout.columns` reads as undefined in the bundle (define), and src/cli.ts gives the
//     width itself when help is shown, reading the stream by another name.
const LAZY_HELP = /^(cliui|string-width)$/;

const lazyHelpModules = {
  name: 'lazy-help-modules',
  setup(build) {
    build.onResolve({ filter: LAZY_HELP }, async (args) => {
      if (args.pluginData === 'real' || !/[\\/]node_modules[\\/]yargs[\\/]/.test(args.importer)) return undefined;
      const real = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'real' });
      if (real.errors.length) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy-help' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-help' }, (args) => ({
      contents: `module.exports = (...a) => require(${JSON.stringify(args.path)})(...a);\n`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

const keepDirname = {
  name: 'keep-dirname',
  setup(build) {
    build.onLoad({ filter: /\.(ts|js|cjs|mjs)$/ }, (args) => {
      const text = fs.readFileSync(args.path, 'utf8');
      const loader = args.path.endsWith('.ts') ? 'ts' : 'js';
      if (!/\b__dirname\b/.test(text)) return { contents: text, loader };
      const rel = path.relative(DIST, runtimeDir(args.path)).split(path.sep).join('/');
      const replacement = rel === '' ? '__dirname' : `require("path").join(__dirname, ${JSON.stringify(rel)})`;
      return { contents: text.replace(/\b__dirname\b/g, replacement), loader };
    });
  },
};

// yargs takes only strictEqual and notStrictEqual from node:assert, for its own internal checks;
// loading node:assert makes Node set up process.stderr's stream at start (to know its colours).
// This stand-in calls node:assert only when a check fails, so a failure reads the same.
const ASSERT_SHIM = `"use strict";
module.exports = {
  strictEqual(a, b, message) { if (!Object.is(a, b)) require("node:assert").strictEqual(a, b, message); },
  notStrictEqual(a, b, message) { if (Object.is(a, b)) require("node:assert").notStrictEqual(a, b, message); },
};
`;

const lightAssert = {
  name: 'light-assert',
  setup(build) {
    build.onResolve({ filter: /^assert$/ }, (args) =>
      /[\\/]node_modules[\\/]yargs[\\/]/.test(args.importer) ? { path: 'yargs-assert', namespace: 'light-assert' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'light-assert' }, () => ({ contents: ASSERT_SHIM, loader: 'js' }));
  },
};

// `import * as fs from 'node:fs'` in each of some thirty modules becomes, bundled, a copy of fs'
// exports (a getter per name) made when each is loaded: milliseconds at every start. A module of
// arb's importing a Node built-in gets it from one shared module per built-in instead, whose
// exports are copied once.
const sharedBuiltins = {
  name: 'shared-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) =>
      args.importer.startsWith(SRC + path.sep) ? { path: args.path, namespace: 'shared-builtin' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'shared-builtin' }, (args) => ({
      contents: `export * from ${JSON.stringify(args.path)};\nexport default require(${JSON.stringify(args.path)});\n`,
      loader: 'js',
    }));
  },
};

/** Writes a file whole, under another name first, so that an arb starting meanwhile sees the old one or the new one. */
function writeAtomic(file, data, mode) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode });
  fs.renameSync(tmp, file);
}

/**
 * Runs commands with the bundle in a child process (`node build-cli.js --train`), then writes the
 * code cache, which holds every function compiled so far. The commands are the ones whose start
 * matters: confine (its --explain takes the same steps up to running the command, and runs
 * nothing), diff and fork on a tiny tree in a temporary directory, and help. A command that fails
 * here (no Landlock, no git) still leaves what it compiled in the cache.
 */
async function train() {
  const main = loadBundle();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-build-'));
  const quiet = silence();
  try {
    const a = path.join(tmp, 'a');
    const b = path.join(tmp, 'b');
    for (const d of [a, b]) {
      fs.mkdirSync(path.join(d, 'src'), { recursive: true });
      fs.writeFileSync(path.join(d, '.gitignore'), 'build/\n');
    }
    fs.writeFileSync(path.join(a, 'src', 'x.txt'), 'one\n');
    fs.writeFileSync(path.join(b, 'src', 'x.txt'), 'two\n');
    const runs = [
      ['confine', '--explain', '-d', a, 'true'],
      ['diff', a, b],
      ['fork', '--print', a],
      ['diff', path.join(tmp, 'a.1')],
      ['confine', '--help'],
      ['diff', '--help'],
    ];
    for (const argv of runs) {
      try {
        await main(argv);
      } catch {
        /* what it compiled is kept all the same */
      }
    }
  } finally {
    quiet();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

let script;

/** Loads the bundle as the executable does, without running it; returns its main(). */
function loadBundle() {
  const { Script } = require('node:vm');
  const { wrap } = require('node:module');
  script = new Script(wrap(fs.readFileSync(BUNDLE, 'utf8')), { filename: BUNDLE });
  const mod = { exports: {} };
  // A module object that is not require.main: the bundle then does not run main() on its own.
  script.runInThisContext()(mod.exports, require, mod, CLI, DIST);
  return mod.exports.main;
}

/** Sends what the commands print nowhere; returns the undo. */
function silence() {
  const out = process.stdout.write;
  const err = process.stderr.write;
  // Written, as far as the caller can tell: a command that waits for its output to drain goes on.
  const nowhere = (_chunk, encoding, callback) => {
    const done = typeof encoding === 'function' ? encoding : callback;
    if (done) process.nextTick(done);
    return true;
  };
  process.stdout.write = nowhere;
  process.stderr.write = nowhere;
  return () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };
}

async function main() {
  if (process.argv[2] === '--train') {
    await train();
    writeAtomic(CACHE, script.createCachedData(), 0o644);
    // Whatever the commands left running (a timer, a child) is not waited for.
    process.exit(0);
  }
  let esbuild;
  try {
    esbuild = require('esbuild');
  } catch {
    process.stderr.write('build-cli: esbuild is not installed (a devDependency): keeping dist/cli.js as tsc made it\n');
    return;
  }
  const result = await esbuild.build({
    entryPoints: [path.join(SRC, 'cli.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // The addon is loaded by path at run time (src/native.ts lists every path it tries).
    external: ['*.node'],
    plugins: [lazyHelpModules, keepDirname, lightAssert, sharedBuiltins],
    define: { 'process.stdout.columns': 'undefined' },
    logLevel: 'warning',
    // require(candidate) of the addon cannot be bundled, and is not meant to be.
    logOverride: { 'unsupported-require-call': 'silent' },
    legalComments: 'none',
    // Less to read and keep at each start (0.42 MB instead of 0.58); names stay, for stack traces.
    minifyWhitespace: true,
    minifySyntax: true,
    // ASCII only, which the executable reads as latin1 (no UTF-8 decoding).
    charset: 'ascii',
    write: false,
  });
  if (result.errors.length) process.exit(1);
  // The bundle is compiled inside the module wrapper, where a #! line is a syntax error.
  const code = result.outputFiles[0].text.replace(/^#![^\n]*\n/, '');
  writeAtomic(BUNDLE, code, 0o644);
  fs.rmSync(CACHE, { force: true });
  const trained = spawnSync(process.execPath, [__filename, '--train'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 120000 });
  if (trained.status !== 0) {
    const why = trained.error?.message ?? `status ${trained.status}: ${String(trained.stderr).trim().split('\n').slice(-3).join('; ')}`;
    process.stderr.write(`build-cli: could not make the code cache (${why}): arb will start slower\n`);
  }
  writeAtomic(CLI, LOADER, 0o755);
}

main().catch((err) => {
  process.stderr.write(`build-cli: ${err.stack ?? err}\n`);
  process.exit(1);
});
