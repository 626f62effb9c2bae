// scripts/build-cli.js: dist/cli.js runs the bundled command line with the V8 code cache made at
// build time, and never with a cache that is not the bundle's.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, itIf } from '../helpers/env';
import { tempDir } from '../helpers/run';

const DIST = path.join(REPO_ROOT, 'dist');
const bundled = fs.existsSync(path.join(DIST, 'cli.bundle.js'));
const itBundled = itIf(bundled, 'dist/cli.bundle.js is missing: esbuild (a devDependency) was not installed when arb was built');

describe('the built executable', () => {
  itBundled('is the loader, and V8 takes the code cache made for the bundle', () => {
    expect(fs.readFileSync(path.join(DIST, 'cli.js'), 'utf8')).toContain("join(__dirname, 'cli.bundle.js')");
    // What the loader does, asking V8 whether it used the cache.
    const probe = `
      const fs = require('fs'), vm = require('vm'), { wrap } = require('module');
      const s = new vm.Script(wrap(fs.readFileSync(${JSON.stringify(path.join(DIST, 'cli.bundle.js'))}, 'utf8')), {
        cachedData: fs.readFileSync(${JSON.stringify(path.join(DIST, 'cli.bundle.cache'))}) });
      process.stdout.write(String(s.cachedDataRejected));`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(r.stdout).toBe('false');
  });

  itBundled('is ASCII, which the loader reads as latin1: text beyond ASCII still prints as written', () => {
    const bytes = fs.readFileSync(path.join(DIST, 'cli.bundle.js'));
    expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
    expect(fs.readFileSync(path.join(DIST, 'cli.js'), 'utf8')).toContain("readFileSync(file, 'latin1')");
    const dir = tempDir('arb-build-cli-');
    try {
      const r = spawnSync(process.execPath, [path.join(DIST, 'cli.js'), 'confine', '--explain', '-d', dir, 'true'], { encoding: 'utf8' });
      expect(r.stdout).toContain('caches (pip, go, node-gyp, \u2026)');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  itBundled("makes neither process.stdout nor yargs' help layout where no help is shown, without patching yargs' text", () => {
    // yargs reads process.stdout.columns when it loads, and requires cliui and string-width: the
    // bundle makes the first read nothing and the modules lazy (a stand-in module each).
    const bundle = path.join(DIST, 'cli.bundle.js');
    const probe = `
      const d = Object.getOwnPropertyDescriptor(process, 'stdout');
      let touched = false;
      Object.defineProperty(process, 'stdout', { configurable: true, get() { touched = true; return d.get.call(process); } });
      require(${JSON.stringify(bundle)}).main(['confine', '--explain', '-d', '/usr', 'true']).then((status) => {
        require('fs').writeSync(2, 'status=' + status + ' touched=' + touched + '\\n');
      });`;
    const r = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(r.stderr).toContain('status=0 touched=false');
    const text = fs.readFileSync(bundle, 'utf8');
    expect(text).toMatch(/lazy-help:.*cliui/);
    expect(text).toMatch(/lazy-help:.*string-width/);
    // And help, which needs them, still lays out.
    const help = spawnSync(process.execPath, [path.join(DIST, 'cli.js'), 'confine', '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/--no-network\s+no network/);
  });

  itBundled('runs a bundle changed after its cache was made as changed, not as cached', () => {
    // V8 matches a cache to its source by length only: the loader takes the cache only if the
    // bundle is no newer. Here the version in the bundle changes, keeping its length.
    const dir = tempDir('arb-build-cli-');
    try {
      for (const f of ['cli.js', 'cli.bundle.js', 'cli.bundle.cache']) fs.copyFileSync(path.join(DIST, f), path.join(dir, f));
      const run = () => spawnSync(process.execPath, [path.join(dir, 'cli.js'), '--version'], { encoding: 'utf8' });
      const version = run().stdout.trim();
      expect(version).toMatch(/^\d+\.\d+\.\d+/);
      const other = version.replace(/\d/g, (d) => String((Number(d) + 1) % 10));
      const file = path.join(dir, 'cli.bundle.js');
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toContain(`"${version}"`);
      fs.writeFileSync(file, text.split(`"${version}"`).join(`"${other}"`));
      const later = new Date(Date.now() + 5000);
      fs.utimesSync(file, later, later);
      expect(run().stdout.trim()).toBe(other);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
