// Landlock scopes (ABI 6 and later): a confined command cannot signal a process outside its
// domain, nor connect to an abstract unix socket made outside, yet can do both with its own.
// Tried as the unprivileged user, against its own processes outside (which it could otherwise
// signal and reach).
import { CLI, testEnv, itIf } from '../helpers/env';
import { asUser } from '../helpers/run';
import { PROBE, parseProbe, removeUserArea, userDir } from './confine-helpers';

const env = testEnv();
const haveUser = Boolean(env.user && env.userWork);
const test = itIf(haveUser, env.userMissing ?? 'no test user');

afterAll(removeUserArea);

/** Starts an outside process and an outside abstract socket, then runs probe.py confined. */
function probeAgainstOutside(modeEnv: NodeJS.ProcessEnv, project: string, unconfined = false, extra = ''): Record<string, string> {
  const name = `arb-scope-${process.pid}-${Date.now()}`;
  const listener = `import socket,time\ns=socket.socket(socket.AF_UNIX)\ns.bind('\\0${name}')\ns.listen(5)\nopen('${project}/listening','w').close()\ntime.sleep(30)`;
  const runner = unconfined ? 'python3' : `node "$CLI" confine ${extra} -d ${project} -- python3`;
  const script = [
    // The mark an earlier call left would let the probe run before this listener is bound.
    `rm -f ${project}/listening`,
    'sleep 30 & victim=$!',
    `python3 -c "${listener}" & server=$!`,
    `for i in $(seq 100); do [ -e ${project}/listening ] && break; sleep 0.05; done`,
    `${runner} ${PROBE} kill:$victim kill:$$ killown abstract:${name} abstractown:${name}-own`,
    'kill $victim $server',
  ].join('\n');
  const r = asUser('/bin/bash', ['-c', script], { env: { CLI, ...modeEnv } });
  const results = parseProbe(r.stdout);
  // Name the outside pids by role, so expectations read the same on every run.
  const named: Record<string, string> = {};
  for (const [k, v] of Object.entries(results)) {
    const [op] = k.split(' ');
    if (op === 'kill') named[Object.keys(named).some((n) => n === 'kill outside') ? 'kill shell' : 'kill outside'] = v;
    else named[op] = v;
  }
  return named;
}

describe('arb confine: signals and abstract unix sockets', () => {
  let project: string;
  beforeAll(() => {
    if (haveUser) project = userDir('scope');
  });

  test('outside confine, the user can signal its processes and reach its sockets', () => {
    expect(probeAgainstOutside({}, project, true)).toEqual({
      'kill outside': 'OK',
      'kill shell': 'OK',
      killown: 'OK',
      abstract: 'OK',
      abstractown: 'OK',
    });
  });

  test('with Landlock alone: kill() of a process outside and connect() to a socket outside fail with EPERM; its own work', () => {
    expect(probeAgainstOutside({ ARB_CONFINE_NO_NAMESPACES: '1' }, project)).toEqual({
      'kill outside': 'EPERM',
      'kill shell': 'EPERM',
      killown: 'OK',
      abstract: 'EPERM',
      abstractown: 'OK',
    });
  });

  test('under bwrap (which shares the network, and so the abstract socket namespace): the same are denied, by Landlock inside', () => {
    expect(probeAgainstOutside({}, project, false, '--jail bwrap')).toEqual({
      'kill outside': expect.stringMatching(/^(EPERM|ESRCH)$/),
      'kill shell': expect.stringMatching(/^(EPERM|ESRCH)$/),
      killown: 'OK',
      abstract: 'EPERM',
      abstractown: 'OK',
    });
  });

  test('with the hardening layers: the same are denied (processes outside are not even visible)', () => {
    const results = probeAgainstOutside({}, project);
    expect(results).toEqual({
      'kill outside': expect.stringMatching(/^(EPERM|ESRCH)$/),
      'kill shell': expect.stringMatching(/^(EPERM|ESRCH)$/),
      killown: 'OK',
      abstract: expect.stringMatching(/^(EPERM|ECONNREFUSED)$/),
      abstractown: 'OK',
    });
  });
});
