// The broker: confine, outside the sandbox, listening on CONFINE_SOCKET for a confined command
// that asks to run a tool (gh) it cannot run itself. It asks the user, and runs the real tool with
// the command's own standard streams only if allowed.
//
// What is made, and where:
//   $TMPDIR/arb-XXXXXX/        mode 0700 ($TMPDIR of the environment confine started with, else
//                              /tmp); its path must fit in sun_path (104 bytes on macOS, 108 on
//                              Linux), or confine says to choose a shorter TMPDIR
//   $TMPDIR/arb-XXXXXX/s       the socket, mode 0600 (CONFINE_SOCKET)
//   $TMPDIR/arb-XXXXXX/bin/gh  a link to arb's cli.js: arb called as gh is the shim (shim.ts);
//                              this directory goes first on the command's PATH
// The directory is one of the command's writable paths, so that it stays reachable from inside a
// private /tmp; everything in it is the command's to break, and only the command would suffer.
//
// Requests are served in turn, one at a time: a second shim waits for the first to be answered
// and its tool to finish. Each connection has a few seconds to send its descriptors and request;
// one that sends garbage, too much, or nothing is answered with an error and closed. A shim that
// goes away (killed mid-call) withdraws its question, and its tool, if running, is stopped. When
// confine exits, running tools are stopped (SIGTERM, then SIGKILL two seconds later; on an abrupt
// exit SIGKILL at once), and the directory is removed.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError } from '../../errors';
import { landlockAbi, launcherPath, recvFds, seccompAvailable } from '../../native';
import { isInside, isInsideAny } from '../../paths/inside';
import { commonlyWritable } from '../../paths/programs';
import { spawnConfined } from '../confined-process';
import { buildRuleset, readLandlockAbi } from '../landlock';
import { Grant, buildPolicy } from '../policy';
import { addAllowed, allowFilePath, readAllowed } from './allow';
import { AskResult, Question, ResolvedAsker, ask as defaultAsk, displayCommandLine, isWritable, resolveAsker } from './ask';
import { findTools } from './find-tools';
import { killTree, processTree, signalAll } from './process-tree';
import { FDS_MARKER, FrameDecoder, ProtocolError, Reply, STREAM_COUNT, ToolRequest, encodeFrame, parseRequest } from './protocol';
import { TOOLS } from './tools';
import { GitRefused, PreparedGit, REPOSITORY_VARIABLES, RepoSnapshot, prepareGit, snapshotRepository, stateDirectory } from './tools/git';
import type { Tool } from './tools/tool';

/** How long a connection has to send its descriptors and request. */
const REQUEST_TIMEOUT_MS = 5000;
/** Connections waiting at once; more are closed at once. */
const MAX_CONNECTIONS = 64;
/** From SIGTERM to SIGKILL when a tool is stopped. */
const KILL_GRACE_MS = 2000;
/** sun_path is 104 bytes on macOS and 108 on Linux, with its NUL. */
const SUN_PATH_MAX = process.platform === 'darwin' ? 104 : 108;

export interface BrokerOptions {
  /** The directory the command is confined to. */
  root: string;
  /**
   * Every path the command may write (the clone of .git is made in none of them); a function is
   * asked at each request, so confine can start the broker before its policy is made.
   */
  writable: readonly string[] | (() => readonly string[]);
  /** The environment confine started with: the tools run with it, and CONFINE_ASK is read from it. */
  env: NodeJS.ProcessEnv;
  /** The user's home directory (~/.config/confine/allow). */
  home?: string;
  /** The tools to offer; by default every tool in tools/ found on env.PATH. */
  tools?: readonly Tool[];
  /** Where each tool is; by default found on env.PATH. */
  programs?: Record<string, string>;
  /** arb's cli.js, which the shim links to. */
  cli?: string;
  /** Where the socket's directory is made; by default /tmp. */
  socketParent?: string;
  /** Asks the user (for tests); by default ask.ts. */
  ask?: (question: Question, signal: AbortSignal) => Promise<AskResult>;
  /** Where warnings go; by default confine's stderr. */
  log?: (line: string) => void;
  /**
   * The command's grants, once its policy is made: the tool's sandbox reads what they let the
   * command read. Without them, a policy for the directory and `writable` is made.
   */
  grants?: () => readonly Grant[] | undefined;
}

export interface Broker {
  /** The socket (CONFINE_SOCKET). */
  readonly socketPath: string;
  /** The private directory holding the socket and the shims; a writable path for the command. */
  readonly dir: string;
  /** The directory to put first on the command's PATH. */
  readonly shimDir: string;
  /** The tools offered, by name. */
  readonly tools: string[];
  /** The command's environment with the shims first on PATH and CONFINE_SOCKET set. */
  commandEnv(env: Record<string, string>): Record<string, string>;
  /** Stops serving: withdraws questions, stops running tools, removes the directory. */
  close(): Promise<void>;
  /** The same, at once, for an exit hook: tools get SIGKILL. */
  closeSync(): void;
}


function writableNow(w: BrokerOptions['writable'], root: string): string[] {
  return [root, ...(typeof w === 'function' ? w() : w)];
}

/** PATH without its relative entries and those the command can write. */
export function trustedPath(searchPath: string, writable: readonly string[]): string {
  return searchPath
    .split(path.delimiter)
    .filter((entry) => path.isAbsolute(entry) && !isWritable(entry, writable))
    .join(path.delimiter);
}

function closeAll(fds: number[]): void {
  for (const fd of fds.splice(0)) {
    try {
      fs.closeSync(fd);
    } catch {
      /* already closed */
    }
  }
}

/** The descriptor under an accepted connection; Node offers no public way to it. */
function socketFd(socket: net.Socket): number {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new ProtocolError("cannot find the connection's descriptor");
  return fd;
}

interface Connection {
  socket: net.Socket;
  fds: number[];
  request?: ToolRequest;
  gone: boolean;
  /** Called once when the shim goes away. */
  onGone?: () => void;
}

interface Running {
  child: ChildProcess;
  stopped: boolean;
  /** Resolves once the broker is done with it (stop() waits for this). */
  exited: Promise<void>;
  resolveExit: () => void;
  /** How the tool ended; rejects if it could not be started. */
  ended: Promise<{ status: number | null; signal: NodeJS.Signals | null }>;
}

/** The path of an open directory: what it is now, not what its name was. */
function openedPath(fd: number, given: string): string {
  if (process.platform === 'linux') {
    const p = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (!path.isAbsolute(p) || p.endsWith(' (deleted)')) throw new Error(`${given} is gone`);
    return p;
  }
  return fs.realpathSync(given);
}

class BrokerServer implements Broker {
  readonly tools: string[];
  private readonly connections = new Set<Connection>();
  private readonly queue: Connection[] = [];
  private readonly running = new Set<Running>();
  private serving: Promise<void> | undefined;
  private closed = false;
  private readonly exitHook = (): void => this.closeSync();

  constructor(
    readonly dir: string,
    readonly socketPath: string,
    readonly shimDir: string,
    private readonly server: net.Server,
    private readonly options: BrokerOptions & { home: string },
    private readonly programs: Record<string, string>,
    private readonly byName: Map<string, Tool>,
    private readonly snapshot: RepoSnapshot | undefined,
    private readonly asker: ResolvedAsker,
  ) {
    this.tools = [...byName.keys()];
    server.on('connection', (socket: net.Socket) => this.accept(socket));
    process.on('exit', this.exitHook);
  }

  commandEnv(env: Record<string, string>): Record<string, string> {
    return { ...env, PATH: env.PATH ? `${this.shimDir}${path.delimiter}${env.PATH}` : this.shimDir, CONFINE_SOCKET: this.socketPath };
  }

  private log(line: string): void {
    (this.options.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
  }

  // --- connections -------------------------------------------------------------------------

  private accept(socket: net.Socket): void {
    if (this.closed || this.connections.size >= MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    const conn: Connection = { socket, fds: [], gone: false };
    this.connections.add(conn);
    const gone = (): void => {
      if (conn.gone) return;
      conn.gone = true;
      closeAll(conn.fds);
      this.connections.delete(conn);
      conn.onGone?.();
    };
    socket.on('close', gone);
    socket.on('end', gone);
    socket.on('error', gone);
    this.readRequest(conn).then(
      (request) => {
        conn.request = request;
        this.queue.push(conn);
        if (!this.serving) this.serving = this.drain().finally(() => (this.serving = undefined));
      },
      (err: unknown) => {
        closeAll(conn.fds);
        const message = err instanceof ProtocolError ? err.message : `cannot read the request: ${(err as Error).message}`;
        this.reply(conn, { type: 'error', message: `confine: bad request: ${message}` });
      },
    );
  }

  /** The descriptors first, then one frame; within REQUEST_TIMEOUT_MS. */
  private async readRequest(conn: Connection): Promise<ToolRequest> {
    const deadline = Date.now() + REQUEST_TIMEOUT_MS;
    const fd = socketFd(conn.socket);
    // The socket is paused (pauseOnConnect), so Node reads nothing until the descriptors are in:
    // they ride on the first byte, which must be read with recvmsg. The shim sends them as it
    // connects, so they are almost always there already; if not, look again a little later.
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      // destroyed is set as the descriptor is closed, before 'close' is emitted: never read a
      // descriptor number that may since belong to another connection.
      if (conn.gone || conn.socket.destroyed) throw new ProtocolError('the connection closed before the request');
      const got = recvFds(fd, STREAM_COUNT);
      if (got) {
        conn.fds.push(...got.fds);
        if (got.byte === -1) throw new ProtocolError('the connection closed before the request');
        if (got.byte !== FDS_MARKER || got.fds.length !== STREAM_COUNT) {
          throw new ProtocolError(`expected ${STREAM_COUNT} descriptors (stdin, stdout, stderr) first`);
        }
        break;
      }
      if (Date.now() > deadline) throw new ProtocolError('no request in time');
      await new Promise((r) => setTimeout(r, delay));
    }
    if (conn.gone) throw new ProtocolError('the connection closed before the request');
    const frame = await new Promise<unknown>((resolve, reject) => {
      const decoder = new FrameDecoder();
      const cleanup = (): void => {
        clearTimeout(timer);
        conn.socket.off('data', onData);
        conn.socket.off('close', onClose);
      };
      const onData = (chunk: Buffer): void => {
        try {
          const frames = decoder.push(chunk);
          if (frames.length > 0) {
            cleanup();
            // Anything the shim sends later is ignored; reading on tells when it goes away.
            conn.socket.on('data', () => undefined);
            resolve(frames[0]);
          }
        } catch (err) {
          cleanup();
          reject(err);
        }
      };
      const onClose = (): void => {
        cleanup();
        reject(new ProtocolError('the connection closed before the request'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new ProtocolError('no request in time'));
      }, Math.max(0, deadline - Date.now()));
      conn.socket.on('data', onData);
      conn.socket.on('close', onClose);
      conn.socket.resume();
    });
    return parseRequest(frame);
  }

  private reply(conn: Connection, reply: Reply): void {
    closeAll(conn.fds);
    this.connections.delete(conn);
    if (conn.gone || conn.socket.destroyed) return;
    try {
      conn.socket.end(encodeFrame(reply));
    } catch {
      conn.socket.destroy();
    }
    // A peer that does not read its answer is not waited for.
    setTimeout(() => conn.socket.destroy(), 1000).unref();
  }

  // --- serving -----------------------------------------------------------------------------

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const conn = this.queue.shift() as Connection;
      if (conn.gone) continue;
      let reply: Reply;
      try {
        reply = await this.serve(conn, conn.request as ToolRequest);
      } catch (err) {
        reply = { type: 'error', message: `confine: cannot run ${(conn.request as ToolRequest).tool}: ${(err as Error).message}` };
      }
      this.reply(conn, reply);
    }
    for (const conn of this.queue.splice(0)) this.reply(conn, { type: 'error', message: 'confine: exiting' });
  }

  private async serve(conn: Connection, request: ToolRequest): Promise<Reply> {
    const tool = this.byName.get(request.tool);
    const program = this.programs[request.tool];
    if (!tool || !program) return { type: 'error', message: `confine: no tool ${request.tool} to run` };
    // The directory the shim was in, opened once: the tool runs in what was opened (by its
    // descriptor), so the command cannot swap it for a link while the question is open.
    let cwdFd: number;
    try {
      // O_NONBLOCK: a FIFO in its place must not block confine (O_DIRECTORY refuses it anyway).
      cwdFd = fs.openSync(request.cwd, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | fs.constants.O_NONBLOCK);
    } catch {
      return this.denied(tool, request, `its directory ${request.cwd} is not one confine can see`);
    }
    try {
      return await this.serveIn(conn, request, tool, program, cwdFd);
    } finally {
      fs.closeSync(cwdFd);
    }
  }

  private denied(tool: Tool, request: ToolRequest, why?: string): Reply {
    return { type: 'denied', message: `not allowed: ${displayCommandLine([tool.name, ...request.argv])}${why ? ` (${why})` : ''}` };
  }

  private async serveIn(conn: Connection, request: ToolRequest, tool: Tool, program: string, cwdFd: number): Promise<Reply> {
    const denied = (why?: string): Reply => this.denied(tool, request, why);
    // The tool runs where the shim was, which must be inside the directory: elsewhere (a private
    // /tmp, a link out of the directory) confine sees another place than the command did.
    let cwd: string;
    try {
      cwd = openedPath(cwdFd, request.cwd);
    } catch {
      return denied(`its directory ${request.cwd} is not one confine can see`);
    }
    const root = fs.realpathSync(this.options.root);
    if (!isInside(cwd, root, 'lexical')) return denied(`${tool.name} runs only inside ${root}`);

    const writable = writableNow(this.options.writable, root);
    if (isWritable(program, writable)) {
      return denied(`${program} is where the confined command can write, so it is not run outside`);
    }
    // Nor the launcher that confines it, which starts outside, as the user (arb installed in the
    // directory, a -w path or a writable cache).
    const launcher = this.launcher();
    if (launcher !== undefined && isWritable(launcher, writable)) {
      return denied(`confine's launcher ${launcher} is where the confined command can write, so nothing is run outside with it: install arb where the command cannot write`);
    }
    const env = tool.forwardEnv(request.env);
    const verdict = tool.judge(request.argv, { root, cwd, env });
    if (verdict.kind === 'never') return denied(`${verdict.reason}: never run from a confined command`);

    // An allow file the command could write (a -w that holds it) is neither read nor written:
    // the command would allow itself.
    const allowFile = allowFilePath(this.options.home);
    const allowWritable = isInsideAny(allowFile, writable, 'resolved');
    if (allowWritable && verdict.remember !== null) {
      this.log(`confine: ${allowFile} is where the confined command can write, so "Allow always" is neither read from it nor kept in it`);
    }
    let allowed = false;
    if (verdict.remember !== null && !allowWritable) {
      try {
        allowed = readAllowed(allowFile).has(verdict.remember);
      } catch (err) {
        this.log(`confine: ${(err as Error).message}`);
      }
    }

    const cleanups: (() => void)[] = [];
    // confine's own copy of .git, made and checked before asking: a refusal needs no question,
    // and the question shows the repository and the remotes as that copy has them.
    let git: PreparedGit | undefined;
    if (tool.runsGit) {
      try {
        git = await prepareGit(cwd, { snapshot: this.snapshot, root, writable, home: this.options.home, env: this.options.env });
      } catch (err) {
        if (err instanceof GitRefused) return denied(err.message);
        throw err;
      }
    }
    try {
      if (!allowed) {
        const withdraw = new AbortController();
        conn.onGone = () => withdraw.abort();
        const question: Question = {
          argv: [tool.name, ...request.argv],
          cwd,
          offerAlways: verdict.remember !== null && !allowWritable,
          note: verdict.reason,
          ...(git?.top !== undefined ? { repository: git.top, remotes: git.remotes } : {}),
          variables: env.GH_REPO !== undefined ? [`GH_REPO=${env.GH_REPO}`] : [],
        };
        const asked = await (this.options.ask ?? ((q, signal) => defaultAsk(q, { env: this.options.env, signal, writable, asker: this.asker })))(question, withdraw.signal);
        conn.onGone = undefined;
        if (conn.gone) return { type: 'error', message: 'confine: gone' };
        if (asked.answer === 'no') return denied(asked.note ?? (asked.by === 'nobody' ? 'no one to ask' : undefined));
        if (asked.answer === 'always' && verdict.remember !== null && !allowWritable) {
          try {
            addAllowed(allowFile, verdict.remember);
          } catch (err) {
            this.log(`confine: cannot keep "${verdict.remember}" as allowed always: ${(err as Error).message}`);
          }
        }
      }
      if (conn.gone || this.closed) return { type: 'error', message: 'confine: gone' };

      // A private directory for the tool's own files (tool.prepare), where the command cannot write.
      let toolDir: string | undefined;
      let prepared: Record<string, string> = {};
      if (tool.prepare) {
        try {
          toolDir = this.toolDirectory(git, writable);
          prepared = await tool.prepare(program, this.options.env, this.options.home, toolDir);
        } catch (err) {
          if (toolDir && !git?.privateDir) fs.rmSync(toolDir, { recursive: true, force: true });
          return { type: 'error', message: `confine: cannot run ${program}: ${(err as Error).message}` };
        }
        if (!git?.privateDir) cleanups.push(() => fs.rmSync(toolDir as string, { recursive: true, force: true }));
      }
      if (conn.gone || this.closed) return { type: 'error', message: 'confine: gone' };

      const childEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(this.options.env)) if (v !== undefined) childEnv[k] = v;
      if (git) for (const name of REPOSITORY_VARIABLES) delete childEnv[name];
      // What gh runs (git, ssh, an editor) is found on PATH: never in a directory the command can
      // write, nor a relative one (which means gh's working directory, inside it).
      if (childEnv.PATH !== undefined) childEnv.PATH = trustedPath(childEnv.PATH, writable);
      Object.assign(childEnv, env, git?.env ?? {}, prepared, tool.fixedEnv);
      // Where it runs, for the tool's own messages (the directory itself is the descriptor).
      childEnv.PWD = cwd;
      let run: Running;
      try {
        run = this.start(tool, program, request.argv, childEnv, cwdFd, cwd, conn.fds, writable, git, toolDir);
      } catch (err) {
        return { type: 'error', message: `confine: cannot run ${program}: ${(err as Error).message}` };
      } finally {
        // The child has its own copies now; ours would keep the command's pipes open.
        closeAll(conn.fds);
      }
      this.running.add(run);
      conn.onGone = () => this.stop(run);
      let result: Reply;
      try {
        const ended = await run.ended;
        result = { type: 'exit', status: ended.status, signal: ended.signal };
      } catch (err) {
        result = { type: 'error', message: `confine: cannot run ${program}: ${(err as Error).message}` };
      }
      conn.onGone = undefined;
      this.running.delete(run);
      run.resolveExit();
      const warning = await git?.finish(!run.stopped && result.type === 'exit');
      if (warning) this.log(`confine: ${warning}`);
      return result;
    } finally {
      // Not allowed, gone, or failed to start: nothing of the copy is kept (a no-op once finished).
      await git?.finish(false);
      for (const c of cleanups) c();
    }
  }

  /** The tool's private directory: in confine's copy of .git's directory, else in ~/.local/state/confine. */
  private toolDirectory(git: PreparedGit | undefined, writable: string[]): string {
    if (git?.privateDir) {
      const dir = path.join(git.privateDir, 'tool');
      fs.mkdirSync(dir, { mode: 0o700 });
      return dir;
    }
    const parent = stateDirectory(this.options.home);
    if (isInsideAny(parent, writable, 'resolved')) throw new Error(`${parent} is where the confined command can write`);
    fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
    return fs.mkdtempSync(path.join(parent, 'tool-'));
  }

  /**
   * Starts the tool. On Linux, confined (confined-process.ts) by toolGrants(): it reads what the
   * command may read and gh's own configuration, writes what the command may write and
   * confine's copy of .git, and has the network; in the directory opened by the broker.
   */
  private start(tool: Tool, program: string, args: string[], env: Record<string, string>, cwdFd: number, cwd: string, fds: number[], writable: string[], git: PreparedGit | undefined, toolDir: string | undefined): Running {
    let resolveExit!: () => void;
    const exitedAll = new Promise<void>((r) => (resolveExit = r));
    const stdio: [number, number, number] = [fds[0], fds[1], fds[2]];
    let child: ChildProcess;
    let ended: Promise<{ status: number | null; signal: NodeJS.Signals | null }>;
    if (process.platform === 'linux') {
      const grants = this.toolGrants(program, env, writable, git, toolDir);
      const ruleset = buildRuleset(grants, this.abi());
      const started = spawnConfined({ file: program, argv: [tool.name, ...args], env, cwdFd, cwd, stdio, ruleset, seccomp: this.seccomp() });
      child = started.child;
      ended = started.exited;
    } else {
      // No sandbox for the tool here yet (macOS): it runs as the user, in the directory by name.
      child = spawn(program, args, { cwd, env, stdio });
      ended = new Promise((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (status, signal) => resolve({ status, signal }));
      });
    }
    return { child, stopped: false, exited: exitedAll, ended, resolveExit };
  }

  /** What the tool may reach, as policy grants: see start(). */
  toolGrants(program: string, env: Record<string, string>, writable: string[], git: PreparedGit | undefined, toolDir?: string): Grant[] {
    const root = fs.realpathSync(this.options.root);
    const home = this.options.home;
    const command =
      this.options.grants?.() ??
      buildPolicy({ homes: [home], home, dir: root, pathVar: env.PATH, tmpdir: env.TMPDIR, writable: writable.filter((w) => w !== root) }).grants;
    // Everything the command may reach but the broker's own directory (the socket and shims).
    const grants = command.filter((g) => !isInside(g.path, this.dir, 'resolved'));
    const add = (p: string | undefined, access: 'read' | 'write', why: string, sockets = false): void => {
      if (!p || !path.isAbsolute(p)) return;
      let real: string;
      let st: fs.Stats;
      try {
        real = fs.realpathSync(p);
        st = fs.statSync(real);
      } catch {
        return;
      }
      grants.push({ path: real, access, isDirectory: st.isDirectory(), why, ...(sockets ? { sockets: true } : {}), ...(real !== p ? { given: p } : {}) });
    };
    const config = this.options.env;
    // Not gh's own configuration directory (its token): tool.prepare hands over what gh needs.
    add(toolDir, 'write', "the tool's private directory (its settings, a copy)");
    add(program, 'read', 'the tool itself');
    // ssh, for a push over ssh: the hosts it knows and its settings, and the agent, which holds
    // the keys; never the key files.
    // (Where the command can write them, it could make them links to a key: then not granted.)
    for (const [rel, why] of [['known_hosts', "ssh's known hosts"], ['config', "ssh's configuration"]]) {
      const p = path.join(home, '.ssh', rel);
      if (!isInsideAny(p, writable, 'lexical') && !isInsideAny(p, writable, 'resolved')) add(p, 'read', why);
    }
    // The agent's socket only where the command cannot replace it (with a link to a key, say,
    // which the grant would then follow); in a writable path it is the command's grant already.
    const agent = config.SSH_AUTH_SOCK;
    if (agent && path.isAbsolute(agent) && !isInsideAny(agent, writable, 'lexical') && !isInsideAny(agent, writable, 'resolved')) {
      try {
        if (fs.lstatSync(agent).isSocket()) add(agent, 'write', 'the ssh agent (signs with the keys; the key files stay hidden)', true);
      } catch {
        /* no agent */
      }
    }
    add(git?.privateDir, 'write', "confine's copy of .git, which gh's git changes");
    return grants;
  }

  /** The launcher spawnConfined runs (Linux): beside the addon loaded. */
  private launcher(): string | undefined {
    return process.platform === 'linux' ? launcherPath() : undefined;
  }

  private seccompCache: boolean | undefined;
  private seccomp(): boolean {
    if (this.seccompCache === undefined) this.seccompCache = seccompAvailable();
    return this.seccompCache;
  }

  private abiCache: number | undefined;
  private abi(): number {
    if (this.abiCache === undefined) this.abiCache = readLandlockAbi(landlockAbi, this.options.env);
    return this.abiCache;
  }

  /** SIGTERM to the tool and what it started, SIGKILL to what is left after the grace. */
  private stop(run: Running): void {
    if (run.stopped) return;
    run.stopped = true;
    const tree = run.child.pid === undefined ? [] : processTree(run.child.pid);
    signalAll(tree, 'SIGTERM');
    const timer = setTimeout(() => signalAll(tree, 'SIGKILL'), KILL_GRACE_MS);
    timer.unref();
    // Once the tool is gone, what it started and left is not waited for.
    void run.exited.then(() => {
      clearTimeout(timer);
      setTimeout(() => signalAll(tree.slice(1), 'SIGKILL'), 100).unref();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.server.close();
    for (const conn of [...this.connections]) conn.socket.destroy();
    for (const run of this.running) this.stop(run);
    await Promise.race([
      Promise.all([...this.running].map((r) => r.exited)),
      new Promise((r) => setTimeout(r, KILL_GRACE_MS + 500).unref()),
    ]);
    if (this.serving) await Promise.race([this.serving, new Promise((r) => setTimeout(r, 1000).unref())]);
    process.off('exit', this.exitHook);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  closeSync(): void {
    this.closed = true;
    try {
      this.server.close();
    } catch {
      /* closed */
    }
    for (const run of this.running) killTree(run.child.pid, 'SIGKILL');
    process.off('exit', this.exitHook);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The directory the socket's directory goes in: $TMPDIR of the environment confine started with
 * (so confine works where /tmp cannot be written), else /tmp.
 */
function socketParent(options: BrokerOptions): string {
  if (options.socketParent) return options.socketParent;
  const tmp = options.env.TMPDIR;
  if (tmp && path.isAbsolute(tmp)) return tmp;
  return '/tmp';
}

/**
 * Starts the broker if a tool it offers is installed; resolves with undefined if none is (then
 * confine runs the command as it would without a broker). Takes the snapshot of the directory's
 * git configuration, so call it before the command starts.
 */
export async function startBroker(options: BrokerOptions): Promise<Broker | undefined> {
  const cli = options.cli ?? path.resolve(__dirname, '..', '..', 'cli.js');
  const tools = options.tools ?? TOOLS;
  const home = options.home ?? options.env.HOME ?? os.homedir();
  // Programs run outside are found once, now, never where the command can write.
  const untrusted = [...writableNow(options.writable, options.root), ...commonlyWritable(options.env, home)];
  const programs = options.programs ?? findTools(options.env.PATH, tools, cli, untrusted);
  const byName = new Map(tools.filter((t) => programs[t.name]).map((t) => [t.name, t] as const));
  if (byName.size === 0) return undefined;
  const asker = resolveAsker(options.env, untrusted);
  const snapshot = [...byName.values()].some((t) => t.runsGit) ? snapshotRepository(options.root) : undefined;

  const dir = fs.mkdtempSync(path.join(socketParent(options), 'arb-'));
  try {
    fs.chmodSync(dir, 0o700);
    const socketPath = path.join(dir, 's');
    if (Buffer.byteLength(socketPath) >= SUN_PATH_MAX) {
      throw new ArbError('ARB_IO', `cannot make the broker's socket: its path '${socketPath}' is longer than a unix socket's path may be`, {
        hint: 'run confine with a shorter TMPDIR',
      });
    }
    const shimDir = path.join(dir, 'bin');
    fs.mkdirSync(shimDir, { mode: 0o700 });
    for (const name of byName.keys()) fs.symlinkSync(cli, path.join(shimDir, name));
    const server = net.createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    fs.chmodSync(socketPath, 0o600);
    server.on('error', () => undefined);
    // Listening alone does not keep confine running: if confine fails before the command starts,
    // it exits as it would, and the exit hook removes the directory. A request being served
    // (its connection, a dialog, a running tool) does keep it.
    server.unref();
    return new BrokerServer(dir, socketPath, shimDir, server, { ...options, home }, programs, byName, snapshot, asker);
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
