#!/usr/bin/env node
// npm's install script (package.json "install"): makes sure arb has its native addon.
//
//   - In a package (a tarball, the registry): if prebuilds/PLATFORM-ARCH/ has an addon that loads
//     here (scripts/prebuild made it when the package was packed), nothing is built. Otherwise,
//     or with `npm install --build-from-source`, the addon is built from source into build/.
//   - In a checkout (src/ is there: a package carries dist/ only), it is always built from
//     source: it is what is being worked on.
//
// A build from source runs cmake-js against node-api-headers (package.json binary.napi_versions),
// so nothing is downloaded; it needs cmake and a C++17 compiler. src/native.ts looks for the
// addon in the same places (build/ first, then prebuilds/), so a package installed without
// running any script (npm --ignore-scripts, or npm 11 not allowing arborinth's scripts) works
// wherever a prebuilt addon matches.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const target = `${process.platform}-${process.arch}`;
// The same file src/native.ts's prebuiltAddonPath() names.
const prebuilt = path.join(root, 'prebuilds', target, process.platform === 'linux' ? 'arb.glibc.node' : 'arb.node');
const rel = (p) => path.relative(root, p);
const say = (line) => process.stderr.write(`arb: ${line}\n`);

/** The platforms this package has prebuilt addons for, or 'none'. */
function shipped() {
  try {
    return fs.readdirSync(path.join(root, 'prebuilds')).sort().join(', ') || 'none';
  } catch {
    return 'none';
  }
}

function build() {
  let cmakeJs;
  try {
    const pkg = require.resolve('cmake-js/package.json', { paths: [root] });
    cmakeJs = path.join(path.dirname(pkg), 'bin', 'cmake-js');
  } catch {
    say(`cannot build the native addon for ${target}: cmake-js (a dependency of arborinth) is not installed in ${root}/node_modules (prebuilt addons in this package: ${shipped()})`);
    process.exit(1);
  }
  say(`building the native addon for ${target} from source (cmake-js, into ${rel(path.join(root, 'build'))}/)`);
  const r = spawnSync(process.execPath, [cmakeJs, 'compile', '--out', path.join(root, 'build')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    say(
      `could not build the native addon for ${target} from source (cmake-js compile ${r.error ? r.error.message : `exited ${r.status ?? r.signal}`}, above). ` +
        `It needs cmake 3.15 or later and a C++17 compiler (Debian/Ubuntu: apt-get install cmake g++ make); ` +
        `then run \`npm run build:native\` in ${root}. Prebuilt addons in this package: ${shipped()}.`,
    );
    process.exit(1);
  }
}

function main() {
  const checkout = fs.existsSync(path.join(root, 'src'));
  const fromSource = process.env.npm_config_build_from_source === 'true' || process.argv.includes('--build-from-source');
  if (!checkout && !fromSource && fs.existsSync(prebuilt)) {
    try {
      require(prebuilt);
      say(`using the prebuilt native addon ${rel(prebuilt)}: nothing to build`);
      return;
    } catch (err) {
      say(`the prebuilt native addon ${rel(prebuilt)} does not load here (${String(err.message).split('\n')[0]}): building from source`);
    }
  }
  build();
}

main();
