#!/usr/bin/env python3
# What the hardening tests try from inside confine, one line per operation:
# "OP ARG -> OK[ detail]" or "OP ARG -> ERRNO", so that each allowed/denied pair asserts an errno.
#
#   read:PATH            read one byte
#   write:PATH           append (creating)
#   chmod:MODE:PATH      chmod to MODE (octal)
#   utime:PATH           set the times to 2000-01-01 (touch -d)
#   cmdline:PID          read /proc/PID/cmdline (OK carries it, NULs as spaces)
#   findcmdline:HEX      OK PID if some /proc/*/cmdline holds the text HEX encodes, else ENOENT
#   pids                 OK N: how many processes /proc shows
#   kill:PID             kill(PID, 0)
#   unix:PATH            connect to a pathname unix socket
#   unixown:PATH         bind a unix socket at PATH, listen, connect to it
#   abstract:NAME        connect to an abstract unix socket
#   tcp:HOST:PORT        connect (2 s)
#   tcplisten            listen on 127.0.0.1 and connect to it
#   udp:HOST:PORT        send one datagram "hardening-udp"
#   socket:FAMILY        socket(AF_INET|AF_INET6|AF_NETLINK|AF_PACKET, ...)
#   tiocsti              ioctl(0, TIOCSTI, "x") on the terminal
#   winsz                ioctl(0, TIOCGWINSZ) on the terminal
#   env:NAME             OK VALUE if set, else ENOENT
import errno
import fcntl
import os
import socket
import sys
import termios


def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def run(op, arg):
    if op == 'read':
        with open(arg, 'rb') as f:
            f.read(1)
    elif op == 'write':
        with open(arg, 'ab') as f:
            f.write(b'x')
    elif op == 'chmod':
        mode, _, path = arg.partition(':')
        os.chmod(path, int(mode, 8))
    elif op == 'utime':
        os.utime(arg, (946684800, 946684800))
    elif op == 'cmdline':
        with open('/proc/%s/cmdline' % arg, 'rb') as f:
            return 'OK ' + ' '.join(f.read().decode(errors='replace').split())
    elif op == 'findcmdline':
        # TEXT comes in hex, so that this process's own command line does not hold it.
        arg = bytes.fromhex(arg).decode()
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                with open('/proc/%s/cmdline' % pid, 'rb') as f:
                    if arg.encode() in f.read():
                        return 'OK ' + pid
            except OSError:
                pass
        return 'ENOENT'
    elif op == 'pids':
        return 'OK %d' % len([p for p in os.listdir('/proc') if p.isdigit()])
    elif op == 'kill':
        os.kill(int(arg), 0)
    elif op == 'unix':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(arg)
        s.close()
    elif op == 'unixown':
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(arg)
        srv.listen(1)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(arg)
        c.close()
        srv.close()
        os.unlink(arg)
    elif op == 'abstract':
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect('\0' + arg)
        s.close()
    elif op == 'tcp':
        host, _, port = arg.rpartition(':')
        s = socket.create_connection((host, int(port)), timeout=2)
        s.close()
    elif op == 'tcplisten':
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.bind(('127.0.0.1', 0))
        srv.listen(1)
        c = socket.create_connection(srv.getsockname(), timeout=2)
        c.close()
        srv.close()
    elif op == 'udp':
        host, _, port = arg.rpartition(':')
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b'hardening-udp', (host, int(port)))
        s.close()
    elif op == 'socket':
        family, kind, proto = {
            'AF_INET': (socket.AF_INET, socket.SOCK_STREAM, 0),
            'AF_INET6': (socket.AF_INET6, socket.SOCK_STREAM, 0),
            'AF_INET-UDP': (socket.AF_INET, socket.SOCK_DGRAM, 0),
            'AF_NETLINK': (socket.AF_NETLINK, socket.SOCK_RAW, 0),
            'AF_PACKET': (socket.AF_PACKET, socket.SOCK_RAW, 0),
            'AF_UNIX': (socket.AF_UNIX, socket.SOCK_STREAM, 0),
        }[arg]
        socket.socket(family, kind, proto).close()
    elif op == 'tiocsti':
        fcntl.ioctl(0, termios.TIOCSTI, b'x')
    elif op == 'winsz':
        fcntl.ioctl(0, termios.TIOCGWINSZ, b'\0' * 8)
    elif op == 'env':
        if arg not in os.environ:
            return 'ENOENT'
        return 'OK ' + os.environ[arg]
    else:
        return 'UNKNOWN-OP'
    return 'OK'


for spec in sys.argv[1:]:
    op, _, arg = spec.partition(':')
    try:
        result = run(op, arg)
    except socket.timeout:
        result = 'TIMEOUT'
    except OSError as e:
        result = name(e)
    # A line of its own even after a character TIOCSTI typed (and the terminal echoed).
    print('\n%s %s -> %s' % (op, arg, result), flush=True)
