// Stand-ins for real hosts, on this machine's loopback, run as a process of their own (the tests
// run confine synchronously, which would block servers in the test's own process):
//   - HTTPS (a certificate made by the test) and plain HTTP: /hello, /big (N bytes), an npm
//     packument at /arbpkg, and static files under ROOT (a bare git repository, served the
//     "dumb" way git clones over plain files);
//   - a UDP socket that appends what it receives to UDP_LOG.
// Prints {"https":P,"http":P,"udp":P} once listening.
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const dgram = require('node:dgram');
const path = require('node:path');

const [root, key, cert, udpLog] = process.argv.slice(2);

function handler(req, res) {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/hello') return res.end(`hello from ${req.headers.host}\n`);
  if (url.pathname === '/redirect') {
    res.writeHead(302, { Location: url.searchParams.get('to') });
    return res.end();
  }
  if (url.pathname.startsWith('/big/')) {
    const n = Number(url.pathname.slice(5));
    res.setHeader('Content-Length', n);
    const chunk = Buffer.alloc(64 * 1024, 120);
    let left = n;
    const more = () => {
      while (left > 0) {
        const part = chunk.subarray(0, Math.min(chunk.length, left));
        left -= part.length;
        if (!res.write(part)) return res.once('drain', more);
      }
      res.end();
    };
    return more();
  }
  if (url.pathname === '/arbpkg') {
    const base = `http://${req.headers.host}`;
    res.setHeader('Content-Type', 'application/json');
    return res.end(JSON.stringify({
      name: 'arbpkg',
      'dist-tags': { latest: '1.2.3' },
      versions: { '1.2.3': { name: 'arbpkg', version: '1.2.3', dist: { tarball: `${base}/arbpkg-1.2.3.tgz`, shasum: '0000000000000000000000000000000000000000' } } },
    }));
  }
  const file = path.join(root, path.normalize(url.pathname));
  if (!file.startsWith(root + path.sep)) { res.statusCode = 404; return res.end(); }
  fs.readFile(file, (err, data) => {
    if (err) { res.statusCode = 404; return res.end('not found\n'); }
    res.end(data);
  });
}

const secure = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, handler);
const plain = http.createServer(handler);
const udp = dgram.createSocket('udp4');
udp.on('message', (m) => fs.appendFileSync(udpLog, m.toString() + '\n'));
let ready = 0;
const done = () => {
  if (++ready < 3) return;
  process.stdout.write(JSON.stringify({ https: secure.address().port, http: plain.address().port, udp: udp.address().port }) + '\n');
};
secure.listen(0, '127.0.0.1', done);
plain.listen(0, '127.0.0.1', done);
udp.bind(0, '127.0.0.1', done);
