import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './metrics.js';

/** A listener serving only `GET /metrics`; `port` and `host` are the bound ones (useful when port 0 was asked for). */
export interface MetricsServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

/**
 * Serves the Prometheus text of {@link registry} at `GET /metrics` on its own port, without authentication, for
 * scrapers on a private network (METRICS_PORT, bound to METRICS_HOST: 127.0.0.1 unless set). The port must not be
 * reachable from the internet; the main port keeps `GET /metrics` behind the operator token. Anything else gets 404; the cost per request is one
 * rendering of the registry.
 * @throws the listen error (EADDRINUSE, EACCES) so start-up can explain it.
 */
export async function startMetricsServer(port: number, host: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served on this port\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('Collecting metrics failed\n'),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    port: bound.port,
    host: bound.address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
