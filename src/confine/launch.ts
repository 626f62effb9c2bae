// The launcher (native/launcher/): confine's one way to apply a sandbox on Linux. TypeScript
// decides the plan (what to mount, which Landlock rules, which seccomp filter, what to run) and
// writes it here in the launcher's wire format; the launcher, a small single-threaded program
// built beside the addon, carries it out and execs the command. Confine becomes the command by
// execve'ing the launcher (execLauncher), or spawns it and waits (spawnLauncher), with the
// standard streams it is given: the terminal's, or a broker client's. Nothing is applied to
// Node or in a fork() of it.
import type { ChildProcess, IOType } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

import * as native from '../native';
import type { ConfineFailure, MountOpSpec, NamespacePlanSpec, NamespaceProbeResult, SeccompPlanSpec } from '../native';
import type { LandlockRuleset } from './landlock';

/** What the launcher says on stderr when a step fails and no one reads its report (exec). The
 *  first whose syscall and errno name match ('*': any) wins; {syscall}, {errno}, {path} are
 *  filled in. */
export interface FailureMessage {
  syscall: string;
  errno: string;
  exitCode: number;
  text: string;
}

/**
 * What the launcher does where the namespaces do not work (it finds out making the real ones, in
 * a child: unshare, the id maps, a mount on / or /proc, loopback or a missing system call fail;
 * never a failure on a path the plan names): Landlock alone, with these network rights and seccomp, after saying `text`
 * ({syscall}, {errno}, {path}: what failed) on stderr; or, with `refuse`, saying it and running
 * nothing (exit 1).
 */
export interface Fallback {
  handledAccessNet: bigint;
  denyNetwork: boolean;
  text: string;
  refuse?: boolean;
}

/** One run of the launcher. */
export interface LaunchPlan {
  /** The directory the command starts in, and the program (absolute) with its argv. */
  cwd: string;
  file: string;
  argv: readonly string[];
  /** The command's whole environment. */
  env: Readonly<Record<string, string>>;
  /** Descriptors the command keeps besides 0, 1, 2 (every other one is closed). */
  keepFds?: readonly number[];
  /** User, mount, IPC, PID (and network) namespaces with their mount plan. */
  namespaces?: NamespacePlanSpec;
  /** The Landlock ruleset (src/confine/landlock.ts). */
  landlock?: LandlockRuleset;
  seccomp?: SeccompPlanSpec;
  /** For exec: what to say if a step fails (nobody else is left to say it). */
  messages?: readonly FailureMessage[];
  /** Without a PID namespace, stay as the command's parent and end what it leaves running
   *  (only when confine waits: the command then has a pid of its own). */
  reap?: boolean;
  /** With namespaces: what to do where they do not work. */
  fallback?: Fallback;
  /** --allow-host: the launcher makes a listener on 127.0.0.1:proxyListen in the command's
   *  network namespace (its own, or bwrap's) and hands it over on the report socket
   *  (spawnLauncher only: Launched.listener). */
  proxyListen?: number;
}

const MAGIC = 'arb-launch-plan/1';

function flag(b: boolean | undefined): string {
  return b ? '1' : '0';
}

function mountRecord(op: MountOpSpec): string[] {
  return ['mount', op.kind, op.path, op.source ?? '', op.target ?? '', String(op.size ?? 0), String(op.mode ?? 0)];
}

/**
 * The plan in the launcher's wire format (native/launcher/plan.cc): NUL-terminated strings, a
 * keyword and its fields per record. `parent`: the launcher dies with that process, and runs
 * nothing if it is gone already. `probe`: enter the namespaces, then exit 0. `cwdFd`: the
 * launcher's descriptor of the directory to run in (fchdir; `plan.cwd` is then its name only).
 */
export function encodeLaunchPlan(plan: LaunchPlan, extra: { parent?: number; probe?: boolean; cwdFd?: number } = {}): Buffer {
  const words: string[] = [MAGIC];
  const check = (what: string, s: string) => {
    if (s.includes('\0')) throw new TypeError(`the launch plan's ${what} contains a NUL byte`);
    return s;
  };
  words.push('cwd', check('cwd', plan.cwd), 'file', check('file', plan.file));
  words.push('argv', String(plan.argv.length), ...plan.argv.map((a) => check('argv', a)));
  const env = Object.entries(plan.env).map(([k, v]) => check('environment', `${k}=${v}`));
  words.push('env', String(env.length), ...env);
  for (const fd of plan.keepFds ?? []) words.push('keep-fd', String(fd));
  if (extra.cwdFd !== undefined) words.push('cwd-fd', String(extra.cwdFd));
  const ns = plan.namespaces;
  if (ns) {
    words.push('namespaces', flag(ns.pid), flag(ns.net), String(ns.uid), String(ns.gid), flag(ns.readOnlyRoot ?? true));
    for (const op of ns.mounts) words.push(...mountRecord(op).map((w) => check('mount plan', w)));
  }
  const ll = plan.landlock;
  if (ll) {
    words.push('landlock', ll.handledAccessFs.toString(), ll.handledAccessNet.toString(), ll.scoped.toString(), '0');
    for (const r of ll.rules) words.push('rule', check('rule', r.path), r.access.toString());
    for (const r of ll.netRules) words.push('net-rule', r.port.toString(), r.access.toString());
  }
  if (plan.seccomp) words.push('seccomp', flag(plan.seccomp.denyTerminalInjection), flag(plan.seccomp.denyNetwork), flag(plan.seccomp.allowTcp));
  if (plan.proxyListen !== undefined) words.push('proxy-listen', String(plan.proxyListen));
  const fb = plan.fallback;
  if (fb) {
    words.push('fallback', fb.handledAccessNet.toString(), flag(fb.denyNetwork), flag(fb.refuse), check('fallback', fb.text));
  }
  if (extra.parent !== undefined) words.push('parent', String(extra.parent));
  if (extra.probe) words.push('probe');
  if (plan.reap) words.push('reap');
  for (const m of plan.messages ?? []) words.push('on-failure', m.syscall, m.errno, String(m.exitCode), check('message', m.text));
  words.push('end');
  return Buffer.from(words.map((w) => `${w}\0`).join(''), 'utf8');
}

/**
 * Becomes the launcher, which becomes the command: same pid, its status is confine's. The plan
 * goes in a memfd it inherits; the launcher starts with an empty environment (the command's is
 * in the plan). Returns only by throwing, before anything was applied.
 */
export function execLauncher(plan: LaunchPlan): never {
  const launcher = native.launcherPath();
  const fd = native.memfdWith(encodeLaunchPlan(plan));
  return native.execve(launcher, ['arb-launcher', '--plan-fd', String(fd)], [], [fd]);
}

/** The standard streams of a launched command: inherited, or descriptors the caller gives. */
export type Stdio = readonly [IOType | number, IOType | number, IOType | number];

export interface LaunchOptions {
  /** Default: confine's own (inherit). */
  stdio?: Stdio;
  /**
   * A program that runs the launcher in turn (bubblewrap): given the launcher's argv, returns
   * its own; it may use `fds` descriptors from 3 on (bwrap's status), the launcher's come after.
   */
  wrap?: { file: string; fds: number; args: (launcherArgv: string[]) => string[]; env?: NodeJS.ProcessEnv };
  /**
   * A descriptor of the directory the command runs in (confine's, opened and checked by the
   * caller, who closes it): the launcher inherits it and fchdir()s there, so the command runs in
   * what was opened, whatever `plan.cwd` leads to by then. Not with namespaces or `wrap`.
   */
  cwdFd?: number;
}

export interface Launched {
  child: ChildProcess;
  /** Resolves once the command was exec'd (or the launcher ended without a word); rejects with
   *  the ConfineFailure the launcher reported. */
  started: Promise<void>;
  /** The wrapper's own descriptors (wrap.fds of them), as pipes confine reads. */
  wrapperFds: Readable[];
  /** With plan.proxyListen: the listener the launcher handed over (close-on-exec), or undefined
   *  if it ended first (then `started` says why). */
  listener?: Promise<number | undefined>;
}

/** A report record as a ConfineFailure (errno as a code, e.g. 'EACCES'). */
export function parseReport(bytes: Buffer): ConfineFailure | undefined {
  if (bytes.length === 0) return undefined;
  const [kind, syscall, errno, file, confined] = bytes.toString('utf8').split('\0');
  const e = new Error(`${syscall} failed`) as ConfineFailure;
  if (kind !== 'failure' || !syscall) {
    e.syscall = 'read';
    e.errno = 5;
  } else {
    e.syscall = syscall;
    e.errno = Number(errno);
    if (file) e.path = file;
    e.confined = confined === '1';
  }
  return native.toSystemError(e) as ConfineFailure;
}

/**
 * Spawns the launcher (through `wrap` if given) with the plan on a pipe and a report socket, and
 * the given standard streams. The launcher dies with confine. Waiting is libuv's (SIGCHLD), so
 * no thread is held while the command runs.
 */
export function spawnLauncher(plan: LaunchPlan, options: LaunchOptions = {}): Launched {
  const launcher = native.launcherPath();
  const wrapFds = options.wrap?.fds ?? 0;
  const planFd = 3 + wrapFds;
  const reportFd = planFd + 1;
  const launcherArgv = [launcher, '--plan-fd', String(planFd), '--report-fd', String(reportFd)];
  const file = options.wrap ? options.wrap.file : launcher;
  const args = options.wrap ? options.wrap.args(launcherArgv) : launcherArgv.slice(1);
  // --allow-host: the report socket is one of confine's own, read natively first (libuv's reads
  // would drop the descriptor the launcher sends on it).
  const handOver = plan.proxyListen !== undefined ? native.socketPair() : undefined;
  const stdio: (IOType | number)[] = [...(options.stdio ?? ['inherit', 'inherit', 'inherit']), ...Array<IOType>(wrapFds + 1).fill('pipe'), handOver ? handOver[1] : 'pipe'];
  // The working directory's descriptor, right after the report's.
  let cwdFd: number | undefined;
  if (options.cwdFd !== undefined) {
    if (options.wrap || plan.namespaces) throw new TypeError('a working directory descriptor is for the launcher alone, without namespaces');
    cwdFd = stdio.length;
    stdio.push(options.cwdFd);
  }
  // Loaded here, not at the top: becoming the launcher (execLauncher) needs none of it.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  let child: ChildProcess;
  try {
    child = spawn(file, args, { stdio, env: options.wrap?.env ?? {}, argv0: options.wrap ? undefined : 'arb-launcher' });
  } finally {
    // The launcher has its own copy: EOF once it and what it runs are gone.
    if (handOver) closeFd(handOver[1]);
  }
  const planStream = child.stdio[planFd] as Writable | null;
  planStream?.on('error', () => {
    /* the launcher died before reading it: its status says why */
  });
  planStream?.end(encodeLaunchPlan(plan, { parent: options.wrap ? undefined : process.pid, cwdFd }));
  let listener: Promise<number | undefined> | undefined;
  let report: Promise<Readable | null>;
  if (handOver) {
    const got = receiveListener(handOver[0]);
    listener = got.then(
      (r) => r.listener,
      () => undefined,
    );
    report = got.then((r) => r.rest);
  } else {
    report = Promise.resolve(child.stdio[reportFd] as Readable | null);
  }
  const started = report.then(
    (reportStream) =>
      new Promise<void>((resolve, reject) => {
        if (!reportStream) return resolve();
        const chunks: Buffer[] = [];
        reportStream.on('data', (c: Buffer) => chunks.push(c));
        reportStream.on('error', () => resolve());
        reportStream.on('close', () => {
          const failure = parseReport(Buffer.concat(chunks));
          if (failure) reject(failure);
          else resolve();
        });
      }),
  );
  // Handled by whoever awaits it; never an unhandled rejection when no one does.
  started.catch(() => {});
  const wrapperFds: Readable[] = [];
  for (let i = 0; i < wrapFds; i++) wrapperFds.push(child.stdio[3 + i] as Readable);
  return { child, started, wrapperFds, listener };
}

function closeFd(fd: number): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  (require('node:fs') as typeof import('node:fs')).closeSync(fd);
}

/** The byte that carries the proxy's listener on the report socket (native/launcher/layers.h). */
const LISTENER_RECORD = 'L'.charCodeAt(0);

/**
 * Reads the first byte of the report socket `fd` with recvmsg (non-blocking, looked at again a
 * little later until it is there, as the broker does for its descriptors): the listener, or the
 * first byte of a failure record, or EOF. The rest of the report is read as a stream, as without
 * a listener, with that byte put back in front. Rejects (the launcher counts as failed) on
 * anything else on the socket.
 */
function receiveListener(fd: number): Promise<{ listener?: number; rest: Readable | null }> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const net = require('node:net') as typeof import('node:net');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { PassThrough } = require('node:stream') as typeof import('node:stream');
  const restOf = (first: number | undefined): Readable => {
    const socket = new net.Socket({ fd, readable: true, writable: false });
    if (first === undefined) return socket;
    const rest = new PassThrough();
    rest.write(Buffer.from([first]));
    socket.pipe(rest);
    socket.on('error', () => rest.destroy());
    return rest;
  };
  return new Promise((resolve, reject) => {
    const look = (delay: number) => {
      let got: ReturnType<typeof native.recvFds>;
      try {
        got = native.recvFds(fd, 1);
      } catch (err) {
        closeFd(fd);
        return reject(err);
      }
      if (got === null) {
        setTimeout(() => look(Math.min(delay * 2, 10)), delay);
        return;
      }
      if (got.byte === LISTENER_RECORD && got.fds.length === 1) return resolve({ listener: got.fds[0], rest: restOf(undefined) });
      for (const extra of got.fds) closeFd(extra);
      if (got.byte === -1) {
        closeFd(fd);
        return resolve({ rest: null });
      }
      resolve({ rest: restOf(got.byte) });
    };
    look(1);
  });
}

/**
 * Whether this machine lets an unprivileged process make the namespaces `ns` describes, with
 * the very steps confine takes (the launcher enters them, then exits instead of running
 * anything). Asynchronous, so that confine goes on planning while the launcher tries.
 */
export function probeNamespaces(ns: NamespacePlanSpec): Promise<NamespaceProbeResult> {
  const launcher = native.launcherPath();
  const input = encodeLaunchPlan({ cwd: '/', file: '/', argv: ['probe'], env: {}, namespaces: ns }, { probe: true });
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  return new Promise((resolve) => {
    const child = spawn(launcher, ['--plan-fd', '0', '--report-fd', '1'], { stdio: ['pipe', 'pipe', 'ignore'], env: {}, argv0: 'arb-launcher' });
    const out: Buffer[] = [];
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stdin?.on('error', () => {
      /* it ended before reading: its status says why */
    });
    child.stdin?.end(input);
    child.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, syscall: 'spawn', code: err.code ?? 'EIO', path: launcher }));
    child.on('close', (status, signal) => {
      const failure = parseReport(Buffer.concat(out));
      if (failure) resolve({ ok: false, errno: failure.errno, code: failure.code, syscall: failure.syscall, path: failure.path });
      else if (status !== 0) resolve({ ok: false, syscall: 'waitpid', code: signal ?? `exit ${status}` });
      else resolve({ ok: true });
    });
  });
}
