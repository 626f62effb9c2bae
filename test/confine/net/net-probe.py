# Tries the ways out a confined command has, one per argument, and prints "OP ARGS -> RESULT":
# OK (with what came back), or the errno's name (ECONNREFUSED, EACCES, ENETUNREACH…).
import errno, socket, ssl, sys, urllib.request, urllib.error

def name(e):
    if isinstance(e, socket.gaierror):
        return {socket.EAI_NONAME: 'EAI_NONAME', socket.EAI_AGAIN: 'EAI_AGAIN'}.get(e.errno, 'EAI_%d' % e.errno)
    return errno.errorcode.get(e.errno, str(e.errno)) if getattr(e, 'errno', None) else type(e).__name__

def run(op, args):
    if op == 'tcp':
        s = socket.create_connection((args[0], int(args[1])), timeout=5)
        s.close()
        return 'OK'
    if op == 'tcp6':
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect((args[0], int(args[1])))
        return 'OK'
    if op == 'mptcp':
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
        return 'OK'
    if op == 'udp':
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b'leaked-by-udp', (args[0], int(args[1])))
        return 'OK'
    if op == 'dns':
        socket.getaddrinfo(args[0], 443)
        return 'OK'
    if op == 'urllib':
        ctx = ssl.create_default_context(cafile=args[1]) if len(args) > 1 else None
        try:
            with urllib.request.urlopen(args[0], timeout=10, context=ctx) as r:
                return 'OK ' + r.read().decode().strip()
        except urllib.error.HTTPError as e:
            return 'HTTP%d %s' % (e.code, e.read().decode().replace('\n', ' '))
        except urllib.error.URLError as e:
            return 'URLError ' + str(e.reason).replace('\n', ' ')
    raise ValueError(op)

for a in sys.argv[1:]:
    op, *args = a.split(' ')
    try:
        result = run(op, args)
    except OSError as e:
        result = name(e)
    print('%s -> %s' % (a, result), flush=True)
