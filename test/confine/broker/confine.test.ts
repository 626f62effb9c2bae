// The broker end to end, as a user meets it: arb confine run by the unprivileged test user, a
// confined shell calling `gh`, a fake gh on the PATH confine starts with, and CONFINE_ASK
// answering. The fake gh records its arguments, says where it ran, whether it could read gh's
// configuration (only outside can it), and reads stdin; `gh pr create` makes a commit and sets
// gh's own git key, as the real one pushes and configures.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { testEnv, itIf } from '../../helpers/env';
import { RunResult, arbAsUser } from '../../helpers/run';
import { PROBE, parseProbe, removeUserArea, userDir, userFile, fixtureGit as git } from '../confine-helpers';

const env = testEnv();
const user = env.user;
const ready = Boolean(user && env.userWork);
const test = itIf(ready, env.userMissing ?? 'no test user');

let tools: string;
/** Where the fake gh logs: gh runs in a sandbox of its own, which writes only where the command may (-w). */
let logs: string;
let markers: string;
let project: string;
/** The shim is arb, run by the node on the command's PATH. */
const NODE_DIR = path.dirname(process.execPath);
const allowFile = () => path.join(user!.home, '.config', 'confine', 'allow');

beforeAll(() => {
  if (!ready) return;
  tools = userDir('broker-tools');
  logs = userDir('broker-logs');
  markers = userDir('broker-markers');
  userFile(path.join(logs, 'gh.log'), '', 0o644);
  userFile(path.join(tools, 'ask.log'), '', 0o644);
  userFile(
    path.join(tools, 'gh'),
    `#!/bin/sh
# Asked outside, by the broker, for the token it hands to the gh it runs confined.
if [ "$1 $2" = "auth token" ]; then sed -n 's/^ *oauth_token: //p' "$HOME/.config/gh/hosts.yml"; exit; fi
echo "$*" >> ${logs}/gh.log 2>/dev/null
if [ -z "$GH_TOKEN" ] && [ ! -r "$HOME/.config/gh/hosts.yml" ]; then echo "gh: not logged in (cannot read ~/.config/gh)" >&2; exit 4; fi
echo "gh ran in $(pwd)"
echo "args: $*"
case "$1 $2" in
  "pr view") echo "stdin: $(cat)" ;;
  "pr create") git commit -q --allow-empty -m "by gh" && git config remote.origin.gh-resolved base || exit 9 ;;
esac
`,
    0o755,
  );
  userFile(path.join(tools, 'ask'), `#!/bin/sh\necho "$*" >> ${tools}/ask.log\ncat ${tools}/answer\n`, 0o755);
  project = userDir('broker-project');
  git(project, ['init', '-q', '-b', 'main']);
  git(project, ['remote', 'add', 'origin', 'https://github.com/o/r.git']);
  fs.writeFileSync(path.join(project, 'README'), 'hello\n');
  git(project, ['add', 'README']);
  git(project, ['commit', '-q', '-m', 'first']);
  execFileSync('chown', ['-R', `${user!.uid}:${user!.gid}`, project]);
});

afterAll(() => {
  if (ready) removeUserArea();
});

beforeEach(() => {
  if (!ready) return;
  fs.writeFileSync(path.join(logs, 'gh.log'), '');
  fs.writeFileSync(path.join(tools, 'ask.log'), '');
  fs.rmSync(path.dirname(allowFile()), { recursive: true, force: true });
});

/** `arb confine [args] sh -c SCRIPT` in the project, as the user, answering `answer`. */
function confineSh(script: string, answer: string, args: string[] = [], input = ''): RunResult & { fork: string } {
  fs.writeFileSync(path.join(tools, 'answer'), `${answer}\n`);
  const r = arbAsUser(['confine', '-w', logs, ...args, '--', 'sh', '-c', script], {
    cwd: project,
    input,
    env: { PATH: `${tools}:${NODE_DIR}:/usr/bin:/bin`, CONFINE_ASK: path.join(tools, 'ask') },
  });
  const fork = /forked \S+ to (\S+)/.exec(r.stderr)?.[1] ?? '';
  return { ...r, fork };
}

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('a confined command asking to run gh', () => {
  test('runs gh outside when allowed once, in the fork, with the command’s stdin and stdout', () => {
    const r = confineSh('echo from-the-command | gh pr view 7 > out.txt; echo status=$?; cat out.txt', 'once');
    expect(r.stderr).not.toMatch(/not allowed/);
    expect(r.fork).not.toBe('');
    expect(r.stdout).toContain('status=0');
    expect(r.stdout).toContain(`gh ran in ${r.fork}`);
    expect(r.stdout).toContain('args: pr view 7');
    expect(r.stdout).toContain('stdin: from-the-command');
    expect(lines(path.join(tools, 'ask.log'))).toEqual(['gh pr view 7']);
    expect(lines(path.join(logs, 'gh.log'))).toEqual(['pr view 7']);
    expect(r.status).toBe(0);
  });

  test('keeps "always" in ~/.config/confine/allow, which the command can neither read nor write', () => {
    const r = confineSh('gh pr list --limit 1 >/dev/null && gh pr list --limit 2 >/dev/null; echo status=$?', 'always');
    expect(r.stdout).toContain('status=0');
    expect(lines(path.join(tools, 'ask.log'))).toEqual(['gh pr list --limit 1']);
    expect(lines(path.join(logs, 'gh.log'))).toEqual(['pr list --limit 1', 'pr list --limit 2']);
    const st = fs.statSync(allowFile());
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(user!.uid);
    expect(lines(allowFile())).toContain('gh pr list');

    // Not asked again in another confine; and the file is out of the command's reach.
    const before = fs.readFileSync(allowFile(), 'utf8');
    const again = confineSh(`gh pr list >/dev/null; echo status=$?; python3 ${PROBE} read:${allowFile()} write:${allowFile()} read:README write:README`, 'no');
    expect(again.stdout).toContain('status=0');
    expect(lines(path.join(tools, 'ask.log'))).toEqual(['gh pr list --limit 1']);
    const probe = parseProbe(again.stdout);
    expect(['EACCES', 'ENOENT']).toContain(probe[`read ${allowFile()}`]);
    expect(['EACCES', 'ENOENT', 'EROFS']).toContain(probe[`write ${allowFile()}`]);
    expect(probe['read README']).toBe('OK');
    expect(probe['write README']).toBe('OK');
    expect(fs.readFileSync(allowFile(), 'utf8')).toBe(before);
  });

  test('`confine gh …` itself goes through confine', () => {
    fs.writeFileSync(path.join(tools, 'answer'), 'once\n');
    const r = arbAsUser(['confine', 'gh', 'pr', 'view', '1'], {
      cwd: project,
      env: { PATH: `${tools}:${NODE_DIR}:/usr/bin:/bin`, CONFINE_ASK: path.join(tools, 'ask') },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('args: pr view 1');
    expect(lines(path.join(tools, 'ask.log'))).toEqual(['gh pr view 1']);
  });

  test('tells the command it was not allowed, and does not run gh', () => {
    const r = confineSh('gh pr create --title x; echo status=$?', 'no');
    expect(r.stdout).toContain('status=1');
    expect(r.stderr).toContain('confine: not allowed: gh pr create --title x\n');
    expect(lines(path.join(logs, 'gh.log'))).toEqual([]);
  });

  test('never runs gh auth, and does not ask', () => {
    const r = confineSh('gh auth token; echo status=$?', 'always');
    expect(r.stdout).toContain('status=1');
    expect(r.stderr).toContain('confine: not allowed: gh auth token (gh auth reads and changes your credentials');
    expect(lines(path.join(tools, 'ask.log'))).toEqual([]);
    expect(lines(path.join(logs, 'gh.log'))).toEqual([]);
  });

  test('asks about gh api every time', () => {
    const r = confineSh('gh api user >/dev/null; gh api user >/dev/null; echo status=$?', 'always');
    expect(r.stdout).toContain('status=0');
    expect(lines(path.join(tools, 'ask.log'))).toEqual(['gh api user', 'gh api user']);
    expect(fs.existsSync(allowFile())).toBe(false);
  });

  test('with --headless there is no shim: gh runs inside and fails as it would', () => {
    const r = confineSh('gh pr view 1; echo status=$?; echo "socket=${CONFINE_SOCKET:-none}"', 'always', ['--headless']);
    expect(r.stdout).toContain('status=4');
    expect(r.stdout).toContain('socket=none');
    expect(r.stderr).toContain('gh: not logged in');
    expect(lines(path.join(tools, 'ask.log'))).toEqual([]);
  });

  test('a hook planted in the fork’s .git does not run when gh runs git; what gh changed is kept', () => {
    const mark = path.join(markers, 'hook-ran');
    const plant = ['pre-commit', 'post-commit', 'commit-msg']
      .map((h) => `printf '#!/bin/sh\\ntouch ${mark}\\n' > .git/hooks/${h} && chmod +x .git/hooks/${h}`)
      .join(' && ');
    const r = confineSh(`${plant} && gh pr create --title x; echo status=$?`, 'once');
    expect(r.stderr).not.toMatch(/not allowed/);
    expect(r.stdout).toContain('status=0');
    expect(fs.existsSync(mark)).toBe(false);
    expect(git(r.fork, ['log', '--format=%s']).trim().split('\n')).toEqual(['by gh', 'first']);
    expect(git(r.fork, ['config', 'remote.origin.gh-resolved']).trim()).toBe('base');
    expect(fs.existsSync(path.join(r.fork, '.git', 'hooks', 'post-commit'))).toBe(true);
  });

  test('a core.fsmonitor planted in the fork’s .git keeps gh from running, and never runs', () => {
    const mark = path.join(markers, 'fsmonitor-ran');
    const r = confineSh(`git config core.fsmonitor "touch ${mark}" && gh pr create --title x; echo status=$?`, 'once');
    expect(r.stdout).toContain('status=1');
    expect(r.stderr).toMatch(/confine: not allowed: gh pr create --title x \(its git configuration \(\.git\/config\) changed since confine started: core\.fsmonitor\)/);
    expect(fs.existsSync(mark)).toBe(false);
    expect(lines(path.join(logs, 'gh.log'))).toEqual([]);
  });

  test('leaves nothing behind: the socket directory is gone when confine exits', () => {
    const r = confineSh('echo "$CONFINE_SOCKET"', 'no');
    const socket = r.stdout.trim();
    expect(socket).toMatch(/^\/tmp\/arb-\w+\/s$/);
    expect(fs.existsSync(path.dirname(socket))).toBe(false);
  });
});
