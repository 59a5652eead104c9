import { fromSeed } from '@nats-io/nkeys';
import { connect as tcpConnect } from 'node:net';

/** The JWT and seed of a `.creds` text. */
function credsParts(creds: string): { jwt: string; seed: string } {
  const block = (name: string) => new RegExp(`-----BEGIN ${name}-----\\s*([\\s\\S]*?)\\s*------END ${name}------`).exec(creds)?.[1];
  const jwt = block('NATS USER JWT');
  const seed = block('USER NKEY SEED');
  if (!jwt || !seed) throw new Error('not a .creds text');
  return { jwt, seed };
}

/**
 * Connects with `creds` and sends one PUB of `payload` on `subject` by writing the protocol itself, as a hostile client
 * would: no client-side limit applies. Resolves what the server said afterwards (its `-ERR` lines and whether it closed
 * the connection) within `waitMs`.
 */
export async function rawPublish(url: string, creds: string, subject: string, payload: Buffer, waitMs = 2_000): Promise<{ said: string; closed: boolean }> {
  const { hostname, port } = new URL(url.replace(/^nats:/, 'http:'));
  const { jwt, seed } = credsParts(creds);
  const socket = tcpConnect({ host: hostname, port: Number(port) });
  let text = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.on('error', () => (closed = true));
  const until = async (test: () => boolean, ms: number) => {
    for (const deadline = Date.now() + ms; !test() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
  };
  await until(() => text.includes('\r\n'), 5_000);
  const info = JSON.parse(/^INFO (.*)\r\n/.exec(text)![1]!) as { nonce: string };
  const sig = Buffer.from(fromSeed(new TextEncoder().encode(seed)).sign(new TextEncoder().encode(info.nonce))).toString('base64url');
  text = '';
  socket.write(`CONNECT ${JSON.stringify({ jwt, sig, verbose: false, pedantic: false, protocol: 1, headers: true })}\r\nPING\r\n`);
  await until(() => text.includes('PONG') || closed, 5_000);
  if (!text.includes('PONG')) throw new Error(`the server did not accept the connection: ${text}`);
  text = '';
  socket.write(Buffer.concat([Buffer.from(`PUB ${subject} ${payload.length}\r\n`), payload, Buffer.from('\r\nPING\r\n')]));
  await until(() => closed || text.includes('PONG'), waitMs);
  const said = { said: text, closed };
  socket.destroy();
  return said;
}
