import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { newId } from '../../lib/ids.js';
import { open, seal } from '../../lib/secret-box.js';
import { redirectWith } from './portal.web.js';
import { insertSecretView, type SecretViewKind, takeSecretView } from './secret-views.repo.js';

/** A one-time view not opened within this many seconds is gone (PORTAL-46). */
const SECRET_VIEW_SECONDS = 10 * 60;
/** The query parameter naming a one-time view on the page that shows it. */
const SECRET_VIEW_PARAM = 'shown';

const sealContext = (id: string) => `portal-secret-view:${id}`;

/**
 * What a page shows of a one-time view asked for in its query (PORTAL-46): `none` when the query names none, `shown`
 * with the secret on the one view, `gone` (the page says the secret was shown already and is not shown again) on a
 * reload, Back, another session, another kind of page or after SECRET_VIEW_SECONDS.
 */
export type SecretView<T> = { state: 'none' } | { state: 'shown'; secret: T } | { state: 'gone' };

/**
 * Answers a form that made a secret with POST-redirect-GET (PORTAL-46): keeps `secret` (any JSON value) sealed for
 * one view by the request's session and redirects (303) to `page` naming the view, so the secret is never in a POST's
 * answer that a reload or Back would send again. @returns the reply, redirected.
 */
export async function redirectToSecretOnce(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  page: string,
  kind: SecretViewKind,
  secret: unknown,
): Promise<FastifyReply> {
  const id = newId('portalSecretView');
  await insertSecretView(
    ctx.pool,
    {
      id,
      sessionHash: request.portalSession!.idHash,
      kind,
      sealed: seal(ctx.secrets.dataKeys, JSON.stringify(secret), sealContext(id)),
    },
    SECRET_VIEW_SECONDS,
  );
  const url = `${page}${page.includes('?') ? '&' : '?'}${SECRET_VIEW_PARAM}=${encodeURIComponent(id)}`;
  return redirectWith(ctx, request, reply, url);
}

/**
 * Takes the one-time view the request's query names, of `kind`, for the request's session (PORTAL-46): the first
 * GET gets the secret and deletes it; any other gets `gone`. Pages that show it are never cached (`render` sends
 * no-store).
 */
export async function takeSecretOnce<T>(
  ctx: AppContext,
  request: FastifyRequest,
  kind: SecretViewKind,
): Promise<SecretView<T>> {
  const id = (request.query as Record<string, unknown> | undefined)?.[SECRET_VIEW_PARAM];
  if (typeof id !== 'string' || id === '') return { state: 'none' };
  const sealed = /^psv_[0-9a-z]{26}$/.test(id)
    ? await takeSecretView(ctx.pool, id, request.portalSession!.idHash, kind)
    : null;
  if (!sealed) return { state: 'gone' };
  return { state: 'shown', secret: JSON.parse(open(ctx.secrets.dataKeys, sealed, sealContext(id))) as T };
}
