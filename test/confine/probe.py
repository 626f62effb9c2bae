#!/usr/bin/env python3
# Tries each operation named on the command line and prints one line per operation,
# "OP ARG -> OK" or "OP ARG -> ERRNO" (EACCES, EPERM, EXDEV, ...), so that sandbox tests can
# assert the exact errno of each allowed/denied pair in one confined run.
#
#   read:PATH  write:PATH (append, creating)  create:PATH (new file)  list:DIR  stat:PATH
#   mkdir:PATH  unlink:PATH  rename:SRC>DST  link:SRC>DST  symlink:TARGET>LINK  chmod:PATH
#   exec:PATH  kill:PID (signal 0)  killown (a child of its own)  abstract:NAME (connect)
#   abstractown (listen and connect to its own)  unix:PATH (connect)  environ:PID
#   bindmount:SRC>DST (in a new user and mount namespace: bind SRC on DST, then read
#   DST/id_ed25519; changes the probe's namespaces, so it goes last)
import ctypes
import errno
import os
import signal
import socket
import subprocess
import sys


def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def run(op, arg):
    if op == 'read':
        with open(arg, 'rb') as f:
            f.read(1)
    elif op == 'write':
        with open(arg, 'ab') as f:
            f.write(b'')
    elif op == 'create':
        fd = os.open(arg, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
    elif op == 'list':
        os.listdir(arg)
    elif op == 'stat':
        os.stat(arg)
    elif op == 'mkdir':
        os.mkdir(arg)
    elif op == 'unlink':
        os.unlink(arg)
    elif op == 'rename':
        src, dst = arg.split('>')
        os.rename(src, dst)
    elif op == 'link':
        src, dst = arg.split('>')
        os.link(src, dst)
    elif op == 'symlink':
        target, link = arg.split('>')
        os.symlink(target, link)
    elif op == 'chmod':
        os.chmod(arg, os.stat(arg).st_mode & 0o7777)
    elif op == 'exec':
        r = subprocess.run([arg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode != 0:
            return 'EXIT%d' % r.returncode
    elif op == 'kill':
        os.kill(int(arg), 0)
    elif op == 'killown':
        p = subprocess.Popen(['sleep', '30'])
        try:
            os.kill(p.pid, signal.SIGTERM)
        finally:
            p.wait()
    elif op == 'abstract':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect('\0' + arg)
        s.close()
    elif op == 'abstractown':
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind('\0' + arg)
        srv.listen(1)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect('\0' + arg)
        c.close()
        srv.close()
    elif op == 'tcp':
        s = socket.create_connection(('127.0.0.1', int(arg)), timeout=5)
        s.close()
    elif op == 'tcpown':
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.bind(('127.0.0.1', 0))
        srv.listen(1)
        c = socket.create_connection(srv.getsockname(), timeout=5)
        c.close()
        srv.close()
    elif op == 'unix':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(arg)
        s.close()
    elif op == 'bindmount':
        src, dst = arg.split('>')
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
            raise OSError(ctypes.get_errno(), 'unshare')
        os.makedirs(dst, exist_ok=True)
        if libc.mount(src.encode(), dst.encode(), None, 4096 | 16384, None) != 0:  # MS_BIND | MS_REC
            raise OSError(ctypes.get_errno(), 'mount')
        with open(os.path.join(dst, 'id_ed25519'), 'rb') as f:
            f.read(1)
    elif op == 'environ':
        with open('/proc/%s/environ' % arg, 'rb') as f:
            f.read(1)
    else:
        return 'UNKNOWN-OP'
    return 'OK'


for spec in sys.argv[1:]:
    op, _, arg = spec.partition(':')
    try:
        result = run(op, arg)
    except OSError as e:
        result = name(e)
    print('%s %s -> %s' % (op, arg, result), flush=True)
