import pino, { type Logger } from 'pino';
import { logTraceFields } from './trace-context.js';

const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/(sk_(?:live|test)_)[A-Za-z0-9_-]+/g, '$1[redacted]'],
  [/(whsec_)[A-Za-z0-9_-]+/g, '$1[redacted]'],
  [/(\/(?:magic|auth)\/)[A-Za-z0-9_-]{16,}/g, '$1[redacted]'],
  [/([?&](?:token|signature|sig)=)[^&\s]+/g, '$1[redacted]'],
];

// Literal secrets of this process's configuration (operator token, file URL secret, passwords inside connection
// URLs): they have no recognisable shape, so they are removed by value.
const configuredSecrets = new Set<string>();

/**
 * Makes scrubSecrets remove these literal values too (secrets that came from the environment). Values shorter
 * than 8 characters are ignored: removing them would mangle ordinary text and they are refused at boot anyway.
 */
export function rememberSecrets(values: Array<string | null | undefined>): void {
  for (const v of values) if (v && v.length >= 8) configuredSecrets.add(v);
}

/** Removes API keys, webhook secrets, magic-link tokens and the configured secrets from a string. */
export function scrubSecrets(text: string): string {
  let out = SECRET_PATTERNS.reduce((s, [re, rep]) => s.replace(re, rep), text);
  for (const secret of configuredSecrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * Options for the JSON (pino) logger used by Fastify and the worker; headers carrying credentials are redacted. A line
 * written while a span is active carries its `trace_id` and `span_id` (OPS-33; never when tracing is off).
 */
export function loggerOptions(level: string): pino.LoggerOptions {
  return {
    level,
    mixin: logTraceFields,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
    serializers: {
      // `id` is always the server's own; a client's X-Request-Id is kept beside it (bounded, scrubbed) to correlate.
      req: (req: { method: string; url: string; id: string; headers?: Record<string, unknown> }) => ({
        id: req.id,
        method: req.method,
        url: scrubSecrets(req.url),
        host: req.headers?.host,
        ...(typeof req.headers?.['x-request-id'] === 'string'
          ? { clientRequestId: scrubSecrets(req.headers['x-request-id'].slice(0, 128)) }
          : {}),
      }),
      // The stack repeats the message, so both are scrubbed.
      err: (err: Error) => {
        const out = pino.stdSerializers.err(err);
        return {
          ...out,
          message: scrubSecrets(err.message ?? ''),
          ...(typeof out.stack === 'string' ? { stack: scrubSecrets(out.stack) } : {}),
        };
      },
    },
  };
}

/** A standalone logger (CLI, worker, boot). */
export function createLogger(level: string): Logger {
  return pino(loggerOptions(level));
}
