#!/usr/bin/env python3
# Runs a program on a new pseudo-terminal, as a user at a terminal would, following a script of
# steps, and prints a JSON report: {"status": exit status or 128+signal, "output": transcript,
# "failed": the step that timed out, if any}.
#
#   pty-driver.py STEPS_JSON PROGRAM [ARGS...]
#
# Steps: ["expect", REGEX] waits (5 s) until the transcript since the last match matches;
# ["send", TEXT] types TEXT (\x03 is Ctrl-C, \x1a Ctrl-Z); ["resize", ROWS, COLS] resizes the
# terminal (the foreground process group gets SIGWINCH); ["sleep", SECONDS].
import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time

steps = json.loads(sys.argv[1])
argv = sys.argv[2:]

pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)

fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 80, 0, 0))
output = b''
mark = 0
failed = None


def pump(timeout):
    """Reads what the terminal has within `timeout`: 'data', 'idle' or 'eof'."""
    global output
    r, _, _ = select.select([fd], [], [], timeout)
    if not r:
        return 'idle'
    try:
        data = os.read(fd, 4096)
    except OSError:
        return 'eof'
    if not data:
        return 'eof'
    output += data
    return 'data'


for step in steps:
    kind = step[0]
    if kind == 'expect':
        pattern = re.compile(step[1].encode())
        deadline = time.time() + 5
        while True:
            m = pattern.search(output, mark)
            if m:
                mark = m.end()
                break
            if time.time() > deadline or pump(0.1) == 'eof':
                if not pattern.search(output, mark):
                    failed = step
                break
        if failed:
            break
    elif kind == 'send':
        os.write(fd, step[1].encode())
    elif kind == 'resize':
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', step[1], step[2], 0, 0))
    elif kind == 'sleep':
        end = time.time() + step[1]
        while time.time() < end:
            pump(end - time.time())

if failed:
    os.kill(pid, 9)
# Drain what is left until the terminal closes, then reap.
deadline = time.time() + 10
while time.time() < deadline and pump(0.2) != 'eof':
    pass
# A program still running now would hang the test: it is killed, and the report says so.
done, status = os.waitpid(pid, os.WNOHANG)
if done == 0:
    deadline = time.time() + 5
    while done == 0 and time.time() < deadline:
        time.sleep(0.1)
        done, status = os.waitpid(pid, os.WNOHANG)
    if done == 0:
        failed = failed or ['exit']
        os.kill(pid, 9)
        _, status = os.waitpid(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
print(json.dumps({'status': code, 'output': output.decode('utf-8', 'replace'), 'failed': failed}))
