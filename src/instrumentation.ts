/*
 * Preloaded by every entry point before the application (`node --import ./src/instrumentation.ts` in package.json's
 * `start`, `worker` and `cli` scripts, `--import ./dist/instrumentation.js` in the `:prod` ones), so OpenTelemetry
 * patches Fastify, pg, undici and http before they are first loaded (OPS-30). Tracing is on only when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_SDK_DISABLED is not `true`;
 * otherwise this module loads nothing at all and the application's calls to the OpenTelemetry API are no-ops.
 */
import { tracingWanted } from './lib/trace-context.js';

if (tracingWanted(process.env)) {
  const { startTracing } = await import('./lib/tracing-sdk.js');
  startTracing();
}
