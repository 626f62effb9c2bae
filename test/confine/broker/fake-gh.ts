// A stand-in for the real gh, for the broker's tests: it records its arguments, says where it ran,
// and by its arguments reads stdin (pr view), fails (issue list), or waits (run watch).
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface FakeGh {
  bin: string;
  log: string;
  /** The log's directory: gh runs in a sandbox of its own, so the tests give it as writable. */
  logDir: string;
  /** The lines the fake wrote to its log: "start ARGS", "end ARGS". */
  calls(): string[];
}

export function makeFakeGh(dir: string): FakeGh {
  const bin = path.join(dir, 'fake-bin');
  fs.mkdirSync(bin, { recursive: true, mode: 0o755 });
  const logDir = path.join(dir, 'log');
  fs.mkdirSync(logDir, { mode: 0o777 });
  fs.chmodSync(logDir, 0o777);
  const log = path.join(logDir, 'fake-gh.log');
  fs.writeFileSync(log, '', { mode: 0o666 });
  fs.chmodSync(log, 0o666);
  fs.writeFileSync(
    path.join(bin, 'gh'),
    `#!/bin/sh
# The broker asks gh for your token, outside, before running it confined.
[ "$1 $2" = "auth token" ] && { echo the-users-token; exit 0; }
echo "start $*" >> ${log}
echo "ran in $(pwd)"
echo "args: $*"
case "$1 $2" in
  "pr view") echo "stdin: $(cat)" ;;
  "issue list") echo oops >&2; echo "end $*" >> ${log}; exit 3 ;;
  "run watch") echo $$ > ${log}.pid; sleep 30 ;;
  "repo view") echo "token=$GH_TOKEN config=$GH_CONFIG_DIR"; ls -A "$GH_CONFIG_DIR" ;;
  "pr create") sleep 0.2; git status --porcelain >/dev/null 2>&1; git config remote.origin.gh-resolved base 2>/dev/null ;;
esac
echo "end $*" >> ${log}
`,
    { mode: 0o755 },
  );
  return {
    bin,
    log,
    logDir,
    calls: () => fs.readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}
