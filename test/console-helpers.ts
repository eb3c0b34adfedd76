import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { createOperator } from '../src/modules/console/operators.service.js';

/** A browser-like client for the console over app.inject: keeps cookies, reads CSRF tokens from pages. */
export interface ConsoleClient {
  cookies: Map<string, string>;
  get(url: string, headers?: Record<string, string>): Promise<InjectResult>;
  /** POSTs a url-encoded form; `_csrf` is not added unless given. */
  post(url: string, form: Record<string, string>, headers?: Record<string, string>): Promise<InjectResult>;
  /** POSTs a body as it is, e.g. a multipart form as a stream the service reads as it goes. */
  postBody(url: string, payload: Buffer | Readable, contentType: string): Promise<InjectResult>;
  /** The CSRF token of the last page that had a form. */
  csrf(): string;
}

export interface InjectResult {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function consoleClient(
  app: FastifyInstance,
  defaults: Record<string, string> = {},
  remoteAddress?: string,
): ConsoleClient {
  const cookies = new Map<string, string>();
  let lastCsrf = '';
  const send = async (options: InjectOptions): Promise<InjectResult> => {
    const cookieHeader = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await app.inject({
      ...options,
      ...(remoteAddress ? { remoteAddress } : {}),
      headers: {
        ...defaults,
        ...(cookieHeader ? { cookie: cookieHeader } : {}),
        ...(options.headers as Record<string, string>),
      },
    });
    const setCookies = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []);
    for (const c of setCookies) {
      const [pair] = c.split(';');
      const [name, ...rest] = pair.split('=');
      const value = rest.join('=');
      if (!value || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) cookies.delete(name);
      else cookies.set(name, value);
    }
    const m = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (m) lastCsrf = m[1];
    return { statusCode: res.statusCode, headers: res.headers as InjectResult['headers'], body: res.body };
  };
  return {
    cookies,
    get: (url, headers) => send({ method: 'GET', url, headers }),
    post: (url, form, headers) =>
      send({
        method: 'POST',
        url,
        payload: new URLSearchParams(form).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      }),
    postBody: (url, payload, contentType) =>
      send({ method: 'POST', url, payload, headers: { 'content-type': contentType } }),
    csrf: () => lastCsrf,
  };
}

let n = 0;

/** Creates an operator with a known password. */
export async function newOperator(pool: pg.Pool, name = 'Olivia Operator') {
  const email = `operator${Date.now().toString(36)}${n++}@example.com`;
  const password = 'correct horse battery staple';
  const { operator } = await createOperator(pool, { email, name, password });
  return { ...operator, password };
}

/** Signs a client in (GET the form for its CSRF token, POST credentials). @returns the POST response. */
export async function signIn(client: ConsoleClient, email: string, password: string): Promise<InjectResult> {
  await client.get('/console/login');
  return client.post('/console/login', { _csrf: client.csrf(), email, password, next: '/console/queue' });
}

/** A new operator signed in on a new console client, the setup most console tests share. */
export async function signedInOperator(app: FastifyInstance, pool: pg.Pool, name?: string) {
  const operator = await newOperator(pool, name);
  const client = consoleClient(app);
  await signIn(client, operator.email, operator.password);
  return { operator, client };
}
