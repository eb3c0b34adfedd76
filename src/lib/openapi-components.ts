/*
 * Named components for the OpenAPI document. Route schemas stay plain inline TypeBox objects, so the one
 * schema that validates a request (our Ajv, src/lib/validation.ts) and serializes a response
 * (fast-json-stringify) is also the one documented; nothing is registered with `addSchema` or referenced by
 * `$ref` at run time. Only the generated document changes: every subschema carrying a `title` becomes
 * `#/components/schemas/<title>` and its uses become `$ref`s, so code generators name the types (User,
 * Company, OrderRequest, …) instead of making anonymous ones.
 */

type Json = Record<string, unknown>;

/** Keywords whose value is a schema or an array of schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses it). */
const SCHEMA_KEYWORDS = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
]);
/** Keywords whose value maps user-chosen names to schemas (a property called `title` is not a title). */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** OpenAPI 3.1 "Components Object": the allowed component names. */
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/;
const PREFIX = '#/components/schemas/';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with sorted keys, so two copies of one schema compare equal whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Copies `schema` with its subschemas lifted (see liftSchema); the schema itself stays as it is. */
function liftChildren(schema: Json, components: Json): Json {
  const out: Json = { ...schema };
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_KEYWORDS.has(key)) out[key] = liftSchema(value, components);
    else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, liftSchema(sub, components)]));
    }
  }
  return out;
}

/**
 * Copies `schema`, children first, replacing each titled subschema by a `$ref` to `components[title]`
 * (added on first sight). A title already taken by a different schema is left inline: the document stays
 * valid and test/openapi.test.ts reports the clash (no titled schema may remain inline).
 */
function liftSchema(schema: unknown, components: Json): unknown {
  if (Array.isArray(schema)) return schema.map((s) => liftSchema(s, components));
  if (!isObject(schema)) return schema;
  const out = liftChildren(schema, components);
  const title = out.title;
  if (typeof title !== 'string' || !COMPONENT_NAME.test(title) || typeof out.$ref === 'string') return out;
  const existing = components[title];
  if (existing === undefined) components[title] = out;
  else if (canonical(existing) !== canonical(out)) return out;
  return { $ref: `${PREFIX}${title}` };
}

/** Lifts the titled schemas of one media map (`content` of a request body or a response). */
function liftContent(content: unknown, components: Json): unknown {
  if (!isObject(content)) return content;
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      isObject(media) && 'schema' in media ? { ...media, schema: liftSchema(media.schema, components) } : media,
    ]),
  );
}

function liftOperation(op: Json, components: Json): Json {
  const out: Json = { ...op };
  if (isObject(op.requestBody))
    out.requestBody = { ...op.requestBody, content: liftContent(op.requestBody.content, components) };
  if (isObject(op.responses)) {
    out.responses = Object.fromEntries(
      Object.entries(op.responses).map(([status, res]) => [
        status,
        isObject(res) && res.content ? { ...res, content: liftContent(res.content, components) } : res,
      ]),
    );
  }
  if (Array.isArray(op.parameters)) {
    out.parameters = op.parameters.map((p) =>
      isObject(p) && p.schema ? { ...p, schema: liftSchema(p.schema, components) } : p,
    );
  }
  return out;
}

/**
 * `transformObject` of @fastify/swagger: returns a copy of the OpenAPI document in which every schema with a
 * `title` (of request bodies, responses, parameters, webhooks and shared components) is a named component under
 * `components.schemas` and referenced by `$ref`. Shared schemas registered with `app.addSchema` (Error) keep
 * their names. Nothing of the input is modified, so the live route schemas can never be touched through it.
 */
export function liftTitledSchemas<T extends object>(document: T): T {
  const doc = document as Json;
  const docComponents = isObject(doc.components) ? doc.components : {};
  const shared = isObject(docComponents.schemas) ? docComponents.schemas : {};
  const components: Json = {};
  // Shared schemas first, so their names win; their own titled subschemas are lifted too.
  Object.assign(components, shared);
  for (const [name, schema] of Object.entries(shared))
    if (isObject(schema)) components[name] = liftChildren(schema, components);
  const paths = liftPathItems(doc.paths, components);
  // OpenAPI 3.1 webhooks are path items too (keyed by event type): their payloads become named components as well.
  const webhooks = isObject(doc.webhooks) ? { webhooks: liftPathItems(doc.webhooks, components) } : {};
  const schemas = Object.fromEntries(
    Object.keys(components)
      .sort()
      .map((k) => [k, components[k]]),
  );
  return { ...doc, paths, ...webhooks, components: { ...docComponents, schemas } } as T;
}

function liftPathItems(items: unknown, components: Json): Json {
  return Object.fromEntries(
    Object.entries(isObject(items) ? items : {}).map(([path, item]) => {
      if (!isObject(item)) return [path, item];
      const lifted: Json = { ...item };
      for (const [key, op] of Object.entries(item))
        if (isObject(op) && isObject(op.responses)) lifted[key] = liftOperation(op, components);
      return [path, lifted];
    }),
  );
}
