// After tsc: make the executable executable (npm's bin links point at it).
const fs = require('node:fs');
const path = require('node:path');
fs.chmodSync(path.join(__dirname, '..', 'dist', 'cli.js'), 0o755);
