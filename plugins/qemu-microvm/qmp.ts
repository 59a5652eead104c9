import { createConnection } from 'node:net';

/** Why a QMP exchange failed: nothing listening, no answer in time, or QEMU refused the command. */
export class QmpError extends Error {
  override name = 'QmpError';
  constructor(
    readonly code: 'QMP_UNREACHABLE' | 'QMP_TIMEOUT' | 'QMP_REFUSED',
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/**
 * One QMP command over the VM's unix socket (`-qmp unix:<path>,server=on,wait=off`): read the greeting, enter command
 * mode, run `command`, return its `return`. A connection per call: the plugin keeps no sockets open, so a plugin that
 * restarts finds every VM by its socket alone. Events arriving in between are skipped.
 */
export function qmpCommand<T = unknown>(socketPath: string, command: string, args?: Record<string, unknown>, timeoutMs = 5_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = '';
    let step: 'greeting' | 'capabilities' | 'command' = 'greeting';
    const finish = (err: Error | undefined, value?: unknown) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value as T);
    };
    const timer = setTimeout(() => finish(new QmpError('QMP_TIMEOUT', `${command} not answered in ${timeoutMs} ms on ${socketPath}`)), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('error', (cause) => finish(new QmpError('QMP_UNREACHABLE', `QMP socket ${socketPath}: ${cause.message}`, { cause })));
    socket.on('close', () => finish(new QmpError('QMP_UNREACHABLE', `QMP socket ${socketPath} closed before ${command} was answered`)));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line) continue;
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(line) as Record<string, unknown>;
        } catch (cause) {
          finish(new QmpError('QMP_UNREACHABLE', `QMP socket ${socketPath} sent a line that is not JSON`, { cause }));
          return;
        }
        if ('event' in message) continue;
        if ('error' in message) {
          const error = message.error as { class?: string; desc?: string };
          finish(new QmpError('QMP_REFUSED', `${command}: ${error.class ?? 'Error'}: ${error.desc ?? 'unknown'}`));
          return;
        }
        if (step === 'greeting') {
          step = 'capabilities';
          socket.write(`${JSON.stringify({ execute: 'qmp_capabilities' })}\n`);
        } else if (step === 'capabilities') {
          step = 'command';
          socket.write(`${JSON.stringify({ execute: command, ...(args ? { arguments: args } : {}) })}\n`);
        } else {
          finish(undefined, message.return);
          return;
        }
      }
    });
  });
}
