import { Agent, request } from 'node:http';

export interface JsonResponse {
  status: number;
  body: string;
}

/** A keep-alive HTTP/1.1 client for one local server, at most `sockets` connections. */
export function jsonClient(port: number, sockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  const post = (path: string, body: unknown): Promise<JsonResponse> =>
    new Promise((resolve, reject) => {
      const data = Buffer.from(JSON.stringify(body));
      const req = request(
        { agent, host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': data.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  return { post, close: () => agent.destroy() };
}
