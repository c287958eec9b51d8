// `disagg-bench llama-router`: the disaggregated front end, as TensorRT-LLM's disaggregated server:
// each request goes to a context server for its prefill (context_only), then, with the answer's
// disaggregated_params (first token, where the state waits), to a generation server, whose stream
// is passed through to the client; once the generation server has answered (it has read the
// state), the context server's slot is released. /health answers 200 once every server does.
import http from 'node:http';
import { readArgs } from '../common/args/read-args.ts';
import { FailureError, UsageError } from '../common/errors.ts';
import { readClusterFile, httpUrl } from './cluster-file.ts';
import { keepConnections, readBody, sendError, sendJson } from './http-json.ts';

export const usage = `usage: disagg-bench llama-router --config DEPLOYMENT.yaml [--host H] [--port P]

Sends each OpenAI request's prefill to a context server and its generation to a generation server
(the deployment file's context_servers and generation_servers); /health is 200 when all are.`;

export const args = { options: { config: { type: 'string' }, host: { type: 'string' }, port: { type: 'string' } } } as const;

interface Backend {
  name: string;
  url: URL;
  inFlight: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One request to a server; resolves with its response (body not read), rejects naming the server. */
function forward(server: Backend, path: string, body: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(path, server.url),
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      resolve,
    );
    req.on('error', (err) => reject(new FailureError(`${server.name} (${server.url.host}) failed: ${err.message}`)));
    req.end(body);
  });
}

function bodyOf(res: http.IncomingMessage): Promise<string> {
  return readBody(res);
}

async function healthy(server: Backend): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(new URL('/health', server.url), { agent, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** The command line, checked: the deployment file, and where to listen (default: the file's port). */
export function parseRouterArgs(argv: string[]): { config: string; host: string; port?: number } {
  const { values } = readArgs(argv, args);
  if (!values.config) throw new UsageError('--config is required: the deployment file');
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0)) throw new UsageError(`--port ${values.port}: expected a whole number`);
  return { config: values.config, host: values.host ?? '127.0.0.1', ...(port !== undefined ? { port } : {}) };
}

export async function run(argv: string[]): Promise<number> {
  const values = parseRouterArgs(argv);
  const cluster = readClusterFile(values.config);
  const backends = (list: { url: string }[], role: string): Backend[] => list.map((s, i) => ({ name: `${role}_${i}`, url: new URL(httpUrl(s.url)), inFlight: 0 }));
  const ctx = backends(cluster.context_servers, 'CTX');
  const gen = backends(cluster.generation_servers, 'GEN');
  let nextCtx = 0;
  const leastBusy = (list: Backend[]) => list.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));

  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      const all = await Promise.all([...ctx, ...gen].map(healthy));
      return sendJson(res, all.every(Boolean) ? 200 : 503, { status: all.every(Boolean) ? 'ok' : 'waiting for servers' });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [{ id: 'llamacpp', object: 'model', owned_by: 'disagg-bench' }] });
    }
    if (req.method !== 'POST' || (path !== '/v1/completions' && path !== '/v1/chat/completions')) return sendError(res, 404, `no route ${req.method} ${path}`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      return sendError(res, 400, `the body is not JSON: ${(err as Error).message}`);
    }
    const c = ctx[nextCtx++ % ctx.length];
    const g = leastBusy(gen);
    g.inFlight++;
    let release: (() => void) | undefined;
    try {
      c.inFlight++;
      const first = await forward(c, path, JSON.stringify({ ...body, stream: false, disaggregated_params: { request_type: 'context_only' } })).finally(() => c.inFlight--);
      const firstBody = await bodyOf(first);
      if (first.statusCode !== 200) {
        res.writeHead(first.statusCode ?? 502, { 'content-type': 'application/json' });
        return res.end(firstBody);
      }
      const params = JSON.parse(firstBody).disaggregated_params;
      release = () => void forward(c, '/kv/release', JSON.stringify({ offset: params.kv.offset })).then((r) => r.resume(), () => undefined);
      const second = await forward(g, path, JSON.stringify({ ...body, disaggregated_params: params }));
      release();
      release = undefined;
      res.writeHead(second.statusCode ?? 502, second.headers);
      second.pipe(res);
      second.on('error', () => res.destroy());
      await new Promise<void>((resolve) => res.on('close', resolve));
      if (!second.complete) second.destroy();
    } catch (err) {
      release?.();
      console.error(`request failed: ${(err as Error).message}`);
      if (res.headersSent) res.destroy();
      else sendError(res, 502, (err as Error).message);
    } finally {
      g.inFlight--;
    }
  });
  const { host } = values;
  const port = values.port ?? cluster.port;
  keepConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  console.log(`llama-router listening on ${host}:${port}: ${ctx.length} context, ${gen.length} generation servers`);
  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return await new Promise<number>(() => {});
}
