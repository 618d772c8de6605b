// A static file server for the playground: 127.0.0.1 only, the right MIME
// types (wasm must be application/wasm to be compiled while streaming), gzip
// when the browser accepts it, and the page's Content-Security-Policy.
//
//   node playground/serve.mjs [--port N] [DIR]      (port 0: any free port)
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
};
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; "
  + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Starts serving `root`; resolves to `{server, port, url, close()}`. */
export async function serve(root, port = 0, host = '127.0.0.1') {
  const base = resolve(root);
  const gzipped = new Map();
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) {
        res.writeHead(403).end();
        return;
      }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      const headers = {
        'Content-Type': TYPES[extname(file)] || 'application/octet-stream',
        'Cache-Control': 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': CSP,
        Vary: 'Accept-Encoding',
      };
      let payload = body;
      if (/\bgzip\b/.test(req.headers['accept-encoding'] || '') && body.length > 512) {
        const key = `${file}:${body.length}:${(await stat(file)).mtimeMs}`;
        if (!gzipped.has(key)) gzipped.set(key, gzipSync(body, { level: 9 }));
        payload = gzipped.get(key);
        headers['Content-Encoding'] = 'gzip';
      }
      headers['Content-Length'] = payload.length;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : payload);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, ok);
  });
  const actual = server.address().port;
  return {
    server,
    port: actual,
    url: `http://${host}:${actual}/`,
    close: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(() => ok()); }),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let port = 8457;
  let root = 'target/playground/site';
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--port') port = Number(args[++i]);
    else root = args[i];
  }
  const { url } = await serve(root, port);
  console.log(`playground: serving ${root} at ${url} (Ctrl-C to stop)`);
}
