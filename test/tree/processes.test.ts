// Where running processes are: read by the addon on Linux, held to the same answers as with fs
// calls, and which of them work in a directory.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { hasProcessPlaces } from '../../src/native';
import { ProcessPlace, processPlaces, processPlacesInJs, processesIn } from '../../src/tree/processes';
import { tempDir } from '../helpers/run';

const linux = process.platform === 'linux';

let dir: string;
let child: ChildProcess | undefined;
beforeEach(() => {
  dir = tempDir('arb-procs-');
});
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A process working in `sub` of `cwd` (made by printf, so that any byte can be in it) with its
 * `file` open, started and settled.
 */
async function worker(cwd: string, sub: string, file: string): Promise<ChildProcess> {
  const script = `cd "$(printf '${sub}')" && exec 3<'${file}'; echo ready; exec sleep 30`;
  const c = spawn('sh', ['-c', script], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve) => c.stdout!.once('data', resolve));
  return c;
}

const of = (places: ProcessPlace[], pid: number) =>
  places
    .filter((p) => p.pid === pid)
    .map((p) => p.place)
    .sort();

it('reads /proc natively on Linux', () => {
  expect(hasProcessPlaces()).toBe(linux);
});

(linux ? describe : describe.skip)('processPlaces (Linux only: /proc)', () => {
  it("gives a process's working directory, root and open files, as the fs calls do", async () => {
    // A name that is not UTF-8 reads as fs.readlinkSync reads it.
    const sub = Buffer.concat([Buffer.from(path.join(dir, 'w')), Buffer.from([0xff])]);
    fs.mkdirSync(sub);
    const file = Buffer.concat([sub, Buffer.from('/open')]);
    fs.writeFileSync(file, '');
    child = await worker(dir, 'w\\377', 'open');
    const pid = child.pid!;
    const mine = of(processPlaces(), pid);
    expect(mine).toEqual(of(processPlacesInJs(), pid));
    expect(mine).toEqual(expect.arrayContaining([sub.toString('utf8'), file.toString('utf8'), '/']));
  });

  it('tells which processes work in a directory, and none in another', async () => {
    fs.mkdirSync(path.join(dir, 'busy'));
    fs.mkdirSync(path.join(dir, 'idle'));
    fs.writeFileSync(path.join(dir, 'busy', 'f'), '');
    child = await worker(dir, 'busy', 'f');
    expect(processesIn(path.join(dir, 'busy'))).toEqual([child.pid]);
    expect(processesIn(path.join(dir, 'idle'))).toEqual([]);
  });
});

it("a place that is no path (a pipe's, a socket's) is in no directory, wherever arb runs", () => {
  const places: ProcessPlace[] = [
    { pid: 11, place: 'pipe:[4026]' },
    { pid: 12, place: 'socket:[7]' },
    { pid: 13, place: 'anon_inode:[eventfd]' },
    { pid: 14, place: path.join(fs.realpathSync(dir), 'f') },
  ];
  const was = process.cwd();
  // Run from inside the directory, where a relative name would resolve into it.
  process.chdir(dir);
  try {
    expect(processesIn(dir, places)).toEqual([14]);
  } finally {
    process.chdir(was);
  }
});
