// The broker attacked as a hostile confined command would attack it (issue 13): arb confine run by
// the unprivileged test user, real git, and a stand-in gh that does what the real gh does with the
// repository: `git status --porcelain`, `git diff`, `git push`, reading the pull-request template
// and --body-file, reading ~/.config/gh. Each attack plants a program that, if it ever ran, would
// touch a sentinel outside the fork (which must never appear) and note in the fork that it ran
// (which must not appear either: a program that runs in gh's sandbox still runs with gh's token).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { itIf, testEnv } from '../../helpers/env';
import { RunResult, arbAsUser, asUser } from '../../helpers/run';
import { removeUserArea, userDir, userFile, fixtureGit as git } from '../confine-helpers';

const env = testEnv();
const user = env.user;
const ready = Boolean(user && env.userWork);
const test = itIf(ready, env.userMissing ?? 'no test user');

/** The shim is arb, run by the node on the command's PATH. */
const NODE_DIR = path.dirname(process.execPath);

let tools: string;
let markers: string;
let project: string;
let remote: string;
let sentinel: string;

beforeAll(() => {
  if (!ready) return;
  tools = userDir('attack-tools');
  markers = userDir('attack-markers');
  sentinel = path.join(markers, 'SENTINEL');
  userFile(path.join(tools, 'ask.log'), '', 0o644);
  // What gh does with the repository and the files it is given, as the real one does them.
  userFile(
    path.join(tools, 'gh'),
    `#!/bin/sh
# Asked outside, by the broker, for the token it hands to the gh it runs confined.
if [ "$1 $2" = "auth token" ]; then sed -n 's/^ *oauth_token: //p' "$HOME/.config/gh/hosts.yml"; exit; fi
if [ "$GH_TOKEN" != FAKE-GH-TOKEN ]; then echo "gh: not logged in" >&2; exit 4; fi
echo "gh ran in $(pwd -P)"
case "$1 $2" in
  "pr create")
    echo "status:"; git status --porcelain 2>&1
    echo "diff:"; git diff 2>&1
    echo "template:"; cat .github/PULL_REQUEST_TEMPLATE.md 2>&1
    prev=; for a in "$@"; do [ "$prev" = --body-file ] && { echo "body:"; cat "$a" 2>&1; }; prev=$a; done
    git push -q origin HEAD:refs/heads/topic 2>&1 && echo pushed
    git config remote.origin.gh-resolved base
    ;;
  "pr checkout") git checkout -q -b pr-7 2>&1 && echo "checked out" ;;
  "repo view") ls -a ;;
  "release download") echo asset > "$4" && echo downloaded ;;
esac
`,
    0o755,
  );
  // The asker answers what tools/answer says, and logs what it was shown.
  userFile(
    path.join(tools, 'ask'),
    `#!/bin/sh
{ echo "ask: $*"; echo "repository: $CONFINE_ASK_REPOSITORY"; printf 'remotes: %s\\n' "$CONFINE_ASK_REMOTES"; } >> ${tools}/ask.log
[ -x ${tools}/on-ask ] && ${tools}/on-ask
cat ${tools}/answer
`,
    0o755,
  );
  remote = userDir('attack-remote');
  git(remote, ['init', '-q', '--bare']);
  project = userDir('attack-project');
  git(project, ['init', '-q', '-b', 'main']);
  git(project, ['remote', 'add', 'origin', remote]);
  fs.mkdirSync(path.join(project, 'sub'));
  fs.writeFileSync(path.join(project, 'sub', 'README'), 'hello\n');
  fs.writeFileSync(path.join(project, 'README'), 'hello\n');
  git(project, ['add', 'README', 'sub/README']);
  git(project, ['commit', '-q', '-m', 'first']);
  execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, project, remote]);
});

afterAll(() => {
  if (ready) removeUserArea();
});

beforeEach(() => {
  if (!ready) return;
  fs.writeFileSync(path.join(tools, 'ask.log'), '');
  fs.rmSync(path.join(tools, 'on-ask'), { force: true });
  fs.rmSync(sentinel, { force: true });
});

interface Confined extends RunResult {
  fork: string;
}

/** `arb confine [args] sh -c SCRIPT` in the project, as the user, answering `answer`. */
function confineSh(script: string, answer: string, options: { args?: string[]; env?: Record<string, string>; cwd?: string } = {}): Confined {
  fs.writeFileSync(path.join(tools, 'answer'), `${answer}\n`);
  const r = arbAsUser(['confine', ...(options.args ?? []), '--', 'sh', '-c', script], {
    cwd: options.cwd ?? project,
    env: { PATH: `${tools}:${NODE_DIR}:/usr/bin:/bin`, CONFINE_ASK: path.join(tools, 'ask'), ...options.env },
  });
  const fork = /forked \S+ to (\S+)/.exec(r.stderr)?.[1] ?? '';
  return { ...r, fork };
}

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

/**
 * Shell text that writes $PWD/evil.sh: a program that touches the sentinel outside and notes in the
 * fork that it ran, then passes its input through (as a filter would). EVIL then names it. Run by
 * the command itself (which sets up its nested repositories with git, confined), it does nothing:
 * only the command has CONFINE_SOCKET.
 */
function evil(): string {
  const body = `#!/bin/sh\\n[ -n "$CONFINE_SOCKET" ] && exec cat\\ntouch ${sentinel}\\necho ran >> %s/ran.log\\nexec cat\\n`;
  return `F=$PWD; printf '${body}' "$F" > evil.sh && chmod +x evil.sh && EVIL="$F/evil.sh"`;
}

function expectNothingRan(r: Confined): void {
  expect(fs.existsSync(sentinel)).toBe(false);
  if (r.fork) expect(fs.existsSync(path.join(r.fork, 'ran.log'))).toBe(false);
}

/** A nested repository `sub2`, recorded in the fork's index as a submodule, with a file changed. */
function nestedRepo(configure: string): string {
  return [
    evil(),
    'git init -q sub2',
    'cd sub2',
    configure,
    'echo one > f && git add f && git -c user.name=x -c user.email=x@x commit -q -m one',
    'cd ..',
    'git add sub2',
    'sleep 1.1',
    'echo two > sub2/f',
  ].join(' && ');
}

describe('git that gh runs does not enter what the fork holds', () => {
  test('a nested repository with a clean filter, recorded as a submodule: the filter never runs', () => {
    const r = confineSh(`${nestedRepo(`git config filter.x.clean "$EVIL" && echo '* filter=x' > .gitattributes && git add .gitattributes`)} && gh pr create --title x; echo status=$?`, 'once');
    expect(r.stderr).not.toMatch(/not allowed/);
    expect(r.stdout).toContain('status=0');
    expectNothingRan(r);
  });

  test('a nested repository with a file system monitor and hooks: none runs', () => {
    const r = confineSh(`${nestedRepo('git config core.fsmonitor "$EVIL" && git config core.hooksPath "$F"')} && gh pr create --title x; echo status=$?`, 'once');
    expect(r.stdout).toContain('status=0');
    expectNothingRan(r);
  });

  test('a nested repository that asks git to recurse (submodule.recurse, diff.submodule, status.submoduleSummary): nothing it names runs', () => {
    const configure = [
      'git config submodule.recurse true',
      'git config status.submoduleSummary true',
      'git config diff.submodule diff',
      'git config diff.ignoreSubmodules none',
      `git config diff.x.textconv "$EVIL"`,
      `git config diff.x.command "$EVIL"`,
      `git config core.pager "$EVIL"`,
      `echo '* diff=x filter=x' > .gitattributes && git config filter.x.clean "$EVIL" && git add .gitattributes`,
    ].join(' && ');
    const r = confineSh(`${nestedRepo(configure)} && gh pr create --title x; echo status=$?`, 'once');
    expect(r.stdout).toContain('status=0');
    expectNothingRan(r);
  });

  test('a nested repository whose .git is a file naming a directory elsewhere (gitdir, commondir): nothing runs', () => {
    const script = [
      evil(),
      'mkdir -p .hidden && git init -q --bare .hidden/real.git && git -C .hidden/real.git config core.bare false',
      'git -C .hidden/real.git config filter.x.clean "$EVIL" && git -C .hidden/real.git config core.fsmonitor "$EVIL"',
      'mkdir sub3 && echo "gitdir: $F/.hidden/real.git" > sub3/.git',
      `echo '* filter=x' > sub3/.gitattributes && echo one > sub3/f`,
      'git -C sub3 add . && git -C sub3 -c user.name=x -c user.email=x@x commit -q -m one',
      'git add sub3 && sleep 1.1 && echo two > sub3/f',
      'gh pr create --title x; echo status=$?',
    ].join(' && ');
    const r = confineSh(script, 'once');
    expect(r.stdout).toContain('status=0');
    expectNothingRan(r);
  });

  test('a local remote the command may write (-w), with hooks and an alternateRefsCommand: git pushes to no local repository', () => {
    const script = [
      evil(),
      `printf '#!/bin/sh\\nexec %s\\n' "$EVIL" > ${remote}/hooks/pre-receive && chmod +x ${remote}/hooks/pre-receive && cp ${remote}/hooks/pre-receive ${remote}/hooks/post-receive`,
      `git -C ${remote} config core.alternateRefsCommand "$EVIL" && git -C ${remote} config core.fsmonitor "$EVIL"`,
      `mkdir -p .hidden && git init -q --bare .hidden/alt.git && echo "$F/.hidden/alt.git/objects" > ${remote}/objects/info/alternates`,
      'gh pr create --title x; echo status=$?',
    ].join(' && ');
    try {
      const r = confineSh(script, 'once', { args: ['-w', remote] });
      expect(r.stdout).toContain('status=0');
      expect(r.stdout).not.toContain('pushed');
      expect(r.stdout).toMatch(/transport 'file' not allowed/);
      expectNothingRan(r);
    } finally {
      for (const f of ['hooks/pre-receive', 'hooks/post-receive', 'objects/info/alternates']) fs.rmSync(path.join(remote, f), { force: true });
      git(remote, ['config', '--unset-all', 'core.alternateRefsCommand']);
      git(remote, ['config', '--unset-all', 'core.fsmonitor']);
    }
  });

  test('.gitmodules naming a submodule by an ext:: URL and an update command: nothing runs', () => {
    const script = [
      evil(),
      `printf '[submodule "m"]\\n\\tpath = m\\n\\turl = ext::%s\\n\\tupdate = !%s\\n' "$EVIL" "$EVIL" > .gitmodules`,
      'git add .gitmodules',
      'gh pr create --title x; echo status=$?',
    ].join(' && ');
    const r = confineSh(script, 'once');
    expect(r.stdout).toContain('status=0');
    expectNothingRan(r);
  });

  test('.gitattributes at any depth and .git/info/attributes naming drivers: nothing runs, and info/attributes is kept', () => {
    const script = [
      evil(),
      `echo '* diff=x filter=x merge=x' > .gitattributes && mkdir -p deep/er && echo '* diff=y filter=y' > deep/er/.gitattributes`,
      `echo '* filter=x diff=x' > .git/info/attributes`,
      'echo changed >> README',
      'gh pr create --title x; echo status=$?',
    ].join(' && ');
    const r = confineSh(script, 'once');
    expect(r.stdout).toContain('status=0');
    expect(r.stdout).toContain(' M README');
    expectNothingRan(r);
    expect(fs.readFileSync(path.join(r.fork, '.git', 'info', 'attributes'), 'utf8')).toBe('* filter=x diff=x\n');
  });
});

describe('gh runs in a sandbox of its own', () => {
  test('a pull-request template that is a link to a key of yours: gh cannot read it', () => {
    const script = `mkdir -p .github && ln -s ${user!.home}/.ssh/id_ed25519 .github/PULL_REQUEST_TEMPLATE.md && gh pr create --title x; echo status=$?`;
    const r = confineSh(script, 'once');
    expect(r.stdout).toContain('status=0');
    expect(r.stdout).toContain('template:');
    expect(r.stdout).not.toContain('FAKE-SSH-PRIVATE-KEY');
    expect(r.stdout).toMatch(/template:\n[^\n]*Permission denied/);
    // gh has your token, which the command cannot read.
    expect(r.stderr).not.toContain('not logged in');
  });

  test('a template that is a link to gh’s own hosts.yml: gh, which has your token, cannot read the file', () => {
    const script = `mkdir -p .github && ln -s ${user!.home}/.config/gh/hosts.yml .github/PULL_REQUEST_TEMPLATE.md && gh pr create --title x; echo status=$?`;
    const r = confineSh(script, 'once');
    expect(r.stdout).toContain('status=0');
    expect(r.stderr).not.toContain('not logged in');
    expect(r.stdout).not.toContain('FAKE-GH-TOKEN');
    expect(r.stdout).toMatch(/template:\n[^\n]*Permission denied/);
  });

  test('--body-file naming a secret through a link: asked every time, and gh cannot read it even when allowed', () => {
    const script = `ln -s ${user!.home}/.aws/credentials body.md && gh pr create --title x --body-file body.md; echo status=$?`;
    const r = confineSh(script, 'always');
    expect(lines(path.join(tools, 'ask.log'))).toContain('ask: gh pr create --title x --body-file body.md');
    expect(r.stdout).toContain('body:');
    expect(r.stdout).not.toContain('FAKE-AWS-SECRET');
    expect(r.stdout).toMatch(/body:\n[^\n]*Permission denied/);
  });

  test('gh writes where the command may (-w), not elsewhere (EACCES)', () => {
    const allowed = userDir('attack-w');
    const other = userDir('attack-not-w');
    const r = confineSh(`gh release download v1 ${allowed}/asset; gh release download v1 ${other}/asset; echo status=$?`, 'once', { args: ['-w', allowed] });
    expect(r.stdout).toContain('downloaded');
    expect(fs.readFileSync(path.join(allowed, 'asset'), 'utf8')).toBe('asset\n');
    expect(r.stderr).toMatch(new RegExp(`${other}/asset: Permission denied`));
    expect(fs.existsSync(path.join(other, 'asset'))).toBe(false);
  });
});

describe('the working directory is resolved once', () => {
  test('a directory swapped for a link to ~/.ssh while the question is open: gh runs in the one that was asked about', () => {
    // The asker does what the command would do meanwhile: move the directory away, a link in its place.
    userFile(path.join(tools, 'on-ask'), `#!/bin/sh\nmv "$CONFINE_ASK_DIR" "$CONFINE_ASK_DIR.moved" && ln -s ${user!.home}/.ssh "$CONFINE_ASK_DIR"\n`, 0o755);
    const r = confineSh('cd sub && gh repo view; echo status=$?', 'once');
    expect(r.stdout).toContain('status=0');
    expect(r.stdout).toContain(`gh ran in ${r.fork}/sub.moved`);
    expect(r.stdout).toContain('README');
    expect(r.stdout).not.toContain('id_ed25519');
  });
});

describe('the question shows where gh acts', () => {
  test('a remote repointed before asking is shown, read from confine’s own copy of .git', () => {
    const r = confineSh('git remote set-url origin https://github.com/attacker/elsewhere.git && gh pr create --title x >/dev/null; echo status=$?', 'no');
    expect(r.stdout).toContain('status=1');
    const log = fs.readFileSync(path.join(tools, 'ask.log'), 'utf8');
    expect(log).toContain(`repository: ${r.fork}`);
    expect(log).toContain('remotes: origin https://github.com/attacker/elsewhere.git');
  });
});

describe('programs arb runs outside are never found where the command can write', () => {
  test('a git planted in a writable PATH entry (node_modules/.bin) never runs, in confine or in arb fork and arb diff later', () => {
    const dir = userDir('attack-direct');
    git(dir, ['init', '-q', '-b', 'main']);
    git(dir, ['remote', 'add', 'origin', 'https://github.com/o/r.git']);
    fs.writeFileSync(path.join(dir, 'README'), 'x\n');
    git(dir, ['add', 'README']);
    git(dir, ['commit', '-q', '-m', 'x']);
    execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, dir]);
    const bin = path.join(dir, 'node_modules', '.bin');
    const pathVar = `${bin}:${tools}:${NODE_DIR}:/usr/bin:/bin`;
    const plant = `mkdir -p ${bin} && printf '#!/bin/sh\\ntouch ${sentinel}\\nexec /usr/bin/git "$@"\\n' > ${bin}/git && chmod +x ${bin}/git`;
    const r = confineSh(`${plant} && gh pr create --title x >/dev/null; echo status=$?`, 'once', { args: ['-d', dir], env: { PATH: pathVar }, cwd: dir });
    expect(r.stdout).toContain('status=0');
    expect(fs.existsSync(path.join(bin, 'git'))).toBe(true);
    expect(fs.existsSync(sentinel)).toBe(false);

    // Later, the user forks and diffs that directory, with the same PATH.
    const fork = asUser(process.execPath, [require.resolve('../../../dist/cli.js'), 'fork', dir], { env: { PATH: pathVar }, cwd: dir });
    expect(fork.status).toBe(0);
    const forkDir = fork.stdout.trim().split('\n').pop() as string;
    const diff = asUser(process.execPath, [require.resolve('../../../dist/cli.js'), 'diff', forkDir], { env: { PATH: pathVar }, cwd: dir });
    expect([0, 1]).toContain(diff.status);
    expect(fs.existsSync(sentinel)).toBe(false);
  });

  test('arb diff of a fork in another user’s repository: the git asked for safe.directory is never one planted in the fork', () => {
    // A repository of root's, holding a directory of the user's: arb diff reads safe.directory
    // (with git) to decide whether that repository's .gitignore files count.
    const outer = userDir('attack-outer');
    fs.chownSync(outer, 0, 0);
    git(outer, ['init', '-q', '-b', 'main']);
    const mine = userDir('mine', outer);
    const source = userDir('src', mine);
    userFile(path.join(source, 'file'), 'x\n');
    const cli = require.resolve('../../../dist/cli.js');
    const fork = asUser(process.execPath, [cli, 'fork', source], { cwd: mine });
    expect(fork.status).toBe(0);
    const forkDir = fork.stdout.trim().split('\n').pop() as string;
    // What a command confined to the fork could leave there, on a PATH the user has later.
    const bin = path.join(forkDir, 'node_modules', '.bin');
    const planted = `#!/bin/sh\ntouch ${sentinel}\nexec /usr/bin/git "$@"\n`;
    const made = asUser('/bin/sh', ['-c', `mkdir -p ${bin} && printf '%s' '${planted}' > ${bin}/git && chmod +x ${bin}/git`], {});
    expect(made.status).toBe(0);
    const diff = asUser(process.execPath, [cli, 'diff', forkDir], { env: { PATH: `${bin}:${NODE_DIR}:/usr/bin:/bin` }, cwd: '/' });
    expect({ status: diff.status, stderr: diff.stderr }).toEqual({ status: 1, stderr: '' });
    expect(fs.existsSync(path.join(bin, 'git'))).toBe(true);
    expect(fs.existsSync(sentinel)).toBe(false);
  });

  test('a writable PATH entry whose name starts with two dots (DIR/..bin) is not trusted for gh’s git', () => {
    const dir = userDir('attack-dots');
    git(dir, ['init', '-q', '-b', 'main']);
    git(dir, ['remote', 'add', 'origin', 'https://github.com/o/r.git']);
    execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, dir]);
    const pathVar = `${tools}:${dir}/..bin:${NODE_DIR}:/usr/bin:/bin`;
    const r = confineSh(`${evil()} && mkdir ..bin && cp evil.sh ..bin/git && gh pr create --title x >/dev/null; echo status=$?`, 'once', {
      args: ['-d', dir],
      env: { PATH: pathVar },
      cwd: dir,
    });
    expect(r.stdout).toContain('status=0');
    expect(fs.existsSync(sentinel)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'ran.log'))).toBe(false);
  });
});

describe('the asker', () => {
  test('CONFINE_ASK named without a path is never found where the command can write, even planted before confine starts', () => {
    const dir = userDir('attack-asker');
    git(dir, ['init', '-q', '-b', 'main']);
    execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, dir]);
    // Left by an earlier session that could write the directory: an asker that allows everything.
    fs.mkdirSync(path.join(dir, 'bin'));
    userFile(path.join(dir, 'bin', 'ask'), `#!/bin/sh\ntouch ${sentinel}\necho always\n`, 0o755);
    execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, path.join(dir, 'bin')]);
    const r = confineSh('gh repo view >/dev/null; echo status=$?', 'no', {
      args: ['-d', dir],
      cwd: dir,
      env: { PATH: `${dir}/bin:${tools}:${NODE_DIR}:/usr/bin:/bin`, CONFINE_ASK: 'ask' },
    });
    expect(r.stdout).toContain('status=1');
    expect(r.stderr).toContain('not allowed: gh repo view');
    expect(fs.existsSync(sentinel)).toBe(false);
    expect(fs.readFileSync(path.join(tools, 'ask.log'), 'utf8')).toContain('ask: gh repo view');
  });
});

describe('the socket directory', () => {
  test('follows $TMPDIR, so confine works where /tmp cannot be written', () => {
    const tmp = userDir('attack-tmp');
    const r = confineSh('echo "$CONFINE_SOCKET"; gh repo view >/dev/null; echo status=$?', 'once', { env: { TMPDIR: tmp } });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^${tmp}/arb-\\w+/s$`));
    expect(r.stdout).toContain('status=0');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});
