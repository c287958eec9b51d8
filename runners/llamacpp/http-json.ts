// Small HTTP helpers the servers and the router share: a request's JSON body, a JSON answer, an
// OpenAI-style error.
import type http from 'node:http';

/**
 * Keep-alive longer than clients keep an idle connection (Node's default, 5 s, closes a socket a
 * client may be writing its next request into: the request fails with "other side closed").
 */
export function keepConnections(server: http.Server): void {
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
}

export function readBody(req: http.IncomingMessage, limit = 64 << 20): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > limit) req.destroy();
      else parts.push(b);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: http.ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { message, type: status < 500 ? 'invalid_request_error' : 'server_error', code: status } });
}
