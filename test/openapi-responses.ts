import type { FastifyInstance } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

/**
 * Checks integrator API responses against the OpenAPI document the app itself publishes: a JSON answer of a
 * documented operation must be declared for its status and match that status's response schema. The harness's
 * request helpers run it on every call, so every test that uses them checks the document as a side effect.
 */
export interface ResponseChecker {
  /** Throws an Error naming the operation and the mismatches; returns quietly for undocumented routes. */
  check(method: string, url: string, res: { statusCode: number; headers: Record<string, unknown>; body: string }): void;
}

type Json = Record<string, any>;
const DOC_ID = 'https://fcs.test/openapi.json';
const PREFIXES = ['/test/v1', '/v1'];

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function responseChecker(app: FastifyInstance): ResponseChecker {
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Json;
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; the keywords OpenAPI adds (discriminator, example, xml) are ignored.
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const routes = Object.keys(doc.paths ?? {})
    .map((path) => ({
      path,
      regex: new RegExp(
        `^${path
          .split('/')
          .map((seg) => (/^\{[^}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')))
          .join('/')}$`,
      ),
      params: (path.match(/\{/g) ?? []).length,
    }))
    // A literal segment wins over a parameter (/events/stream before /events/{eventId}).
    .sort((a, b) => a.params - b.params);
  const compiled = new Map<string, ValidateFunction>();

  return {
    check(method, url, res) {
      const pathname = url.split('?')[0]!;
      const prefix = PREFIXES.find((p) => pathname.startsWith(`${p}/`));
      if (!prefix) return;
      const contentType = String(res.headers['content-type'] ?? '');
      if (!contentType.startsWith('application/json') || method.toUpperCase() === 'HEAD') return;
      const rel = pathname.slice(prefix.length);
      const route = routes.find((r) => r.regex.test(rel));
      const op = route && doc.paths[route.path][method.toLowerCase()];
      if (!route || !op) return;
      // An operation served at one base address only (the test helpers) is not documented at the other.
      if (
        Array.isArray(op.servers) &&
        !op.servers.some((s: { url: string }) => new URL(s.url, 'http://server.invalid').pathname === prefix)
      )
        return;
      const status = String(res.statusCode);
      const key = [status, `${status[0]}XX`, 'default'].find((k) => op.responses?.[k]);
      const label = `${method.toUpperCase()} ${prefix}${route.path} answered ${status}`;
      if (!key)
        throw new Error(
          `OpenAPI: ${label}, a status the operation does not declare (declared: ${Object.keys(op.responses ?? {}).join(', ')}). Body: ${res.body.slice(0, 500)}`,
        );
      let response = op.responses[key];
      if (response.$ref) response = resolveRef(doc, response.$ref);
      const schema = response?.content?.['application/json']?.schema;
      if (!schema)
        throw new Error(
          `OpenAPI: ${label} with a JSON body, but declares no JSON content for ${key}. Body: ${res.body.slice(0, 500)}`,
        );
      const ref = `${DOC_ID}#/${pointer('paths', route.path, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema')}`;
      const validate = compiled.get(ref) ?? ajv.compile({ $ref: ref });
      compiled.set(ref, validate);
      const body = JSON.parse(res.body);
      if (!validate(body)) {
        const errors = (validate.errors ?? [])
          .slice(0, 10)
          .map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
        throw new Error(
          `OpenAPI: ${label}; the body does not match the declared schema:\n  ${errors.join('\n  ')}\nBody: ${res.body.slice(0, 1000)}`,
        );
      }
    },
  };
}

function resolveRef(doc: Json, ref: string): Json {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<Json>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}
