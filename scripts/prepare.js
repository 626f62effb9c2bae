#!/usr/bin/env node
// npm's prepare script (package.json "prepare"), and prepack's first step (--prebuild).
//
//   node scripts/prepare.js             builds the TypeScript (npm run build:ts)
//   node scripts/prepare.js --prebuild  makes the prebuilt addons (scripts/prebuild), for npm pack
//
// Either first makes sure the checkout has its dependencies, development ones included (tsc,
// esbuild, cmake-js): `npm install -g .` from a fresh clone links the folder into the global
// prefix and runs only prepare there, with no node_modules at all, and `npm pack` in a fresh
// clone runs prepack and prepare likewise. Then this runs `npm ci` in the checkout (`npm install`
// without a package-lock.json), the same install a developer runs, which builds the addon and the
// TypeScript through the checkout's own install and prepare scripts.
//
// In a packed package (no src/: the tarball carries dist/ built) there is nothing to build.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const say = (line) => process.stderr.write(`arb: ${line}\n`);

/** The npm that runs this script (npm_execpath), else the one on PATH. */
function npm(args, env = process.env) {
  const execpath = process.env.npm_execpath;
  const [cmd, argv] = execpath && /\.[cm]?js$/.test(execpath) ? [process.execPath, [execpath, ...args]] : ['npm', args];
  const r = spawnSync(cmd, argv, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env });
  if (r.status !== 0) {
    say(`\`npm ${args.join(' ')}\` in ${root} failed (${r.error ? r.error.message : `exit ${r.status ?? r.signal}`})`);
    process.exit(1);
  }
}

/** Whether every dependency and devDependency is in node_modules. */
function haveDependencies() {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const names = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})];
  return names.every((n) => fs.existsSync(path.join(root, 'node_modules', n, 'package.json')));
}

/**
 * Installs them as a developer would, in the checkout: a local install, not the global one that
 * may be running this (npm passes its settings down as npm_config_* variables).
 */
function installDependencies() {
  const env = { ...process.env, ARB_PREPARE_NESTED: '1' };
  for (const k of Object.keys(env)) {
    if (/^npm_config_(global|location|prefix|local_prefix|omit|include|only|production|dev|ignore_scripts|save.*)$/i.test(k)) delete env[k];
  }
  const ci = fs.existsSync(path.join(root, 'package-lock.json'));
  const args = [ci ? 'ci' : 'install', '--global=false', '--include=dev', '--no-audit', '--no-fund'];
  say(`${root} has not got its dependencies in node_modules (a fresh clone: \`npm install -g .\` links a folder without installing them): running \`npm ${args.join(' ')}\` there first`);
  npm(args, env);
}

function main() {
  const prebuild = process.argv.includes('--prebuild');
  if (!fs.existsSync(path.join(root, 'src'))) return;
  let installed = false;
  if (!haveDependencies()) {
    if (process.env.ARB_PREPARE_NESTED) {
      say(`the dependencies are still missing from ${root}/node_modules after installing them`);
      process.exit(1);
    }
    installDependencies();
    installed = true;
  }
  if (prebuild) {
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'prebuild')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    process.exit(r.status ?? 1);
  }
  // The install just made ran the checkout's own prepare (this script), which built the TypeScript.
  if (!installed) npm(['run', 'build:ts']);
}

main();
