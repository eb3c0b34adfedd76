import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';

/**
 * onRequest hook (OPS-7): watches the body of each request while it is being read, and calls `onIdle` once when no
 * byte of it arrived for `idleMs` although the service was waiting for one. The caller answers 408 and closes the
 * connection. Without it a client that announces a body and stops sending holds its request unanswered until
 * HTTP_REQUEST_TIMEOUT_MS (30 s by default), past the 15 s within which every request is answered.
 *
 * Silence counts only while something reads the body (a body parser, a multipart form) and has read all that
 * arrived: a service busy elsewhere (authentication, a slow database) is never taken for an idle client. The watch
 * ends when the body is complete or the response has started. Checked every fifth of `idleMs` (at most every
 * second), so it fires between `idleMs` and `idleMs` plus that step after the last byte.
 * @param idleMs HTTP_BODY_IDLE_TIMEOUT_MS.
 */
export function bodyIdleTimeout(idleMs: number, onIdle: (request: FastifyRequest) => void) {
  const stepMs = Math.max(10, Math.min(1000, Math.floor(idleMs / 5)));
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (announcesBody(request.raw)) watch(request.raw, reply.raw, idleMs, stepMs, () => onIdle(request));
    done();
  };
}

// Only a request that came over a connection can stall (app.inject's have none).
function announcesBody(req: IncomingMessage): boolean {
  if (req.complete || !(req.socket instanceof Socket)) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function watch(req: IncomingMessage, res: ServerResponse, idleMs: number, stepMs: number, onIdle: () => void): void {
  const socket = req.socket;
  let seen = socket.bytesRead;
  let quietSince = Date.now();
  const timer = setTimeout(function check() {
    if (req.complete || res.headersSent || socket.destroyed) return;
    const read = socket.bytesRead;
    // Bytes came, nothing reads the body yet, or what came is still unread: not the client's silence.
    if (read !== seen || req.readableFlowing !== true || req.readableLength > 0) {
      seen = read;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= idleMs) {
      return onIdle();
    }
    timer.refresh();
  }, stepMs);
  timer.unref();
  res.once('close', () => clearTimeout(timer));
}
