/**
 * A TCP forwarding proxy that delays every chunk by a fixed time each way: the bench's stand-in for
 * a database server across a network (this machine has no `netem`). Each direction of a
 * connection keeps its order; Nagle's algorithm is off on both sides, as `pg` sets it.
 *
 * Resolution: Node's timers, 1 ms at best, so `delayMs` is a whole number of milliseconds and a
 * round trip costs at least twice it.
 */
import net from 'node:net';

/** A running proxy. */
export interface LatencyProxy {
  /** The port it listens on (127.0.0.1). */
  port: number;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

/**
 * Listens on a free port of 127.0.0.1 and forwards each connection to `127.0.0.1:targetPort`,
 * every chunk `delayMs` later than it came, in both directions.
 *
 * @throws Error when it cannot listen.
 */
export async function startLatencyProxy(targetPort: number, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      s.setNoDelay(true);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk) => {
        setTimeout(() => {
          if (!to.destroyed) to.write(chunk);
        }, delayMs);
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
