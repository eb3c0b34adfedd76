import type { FastifyReply, FastifyRequest } from 'fastify';
import { PORTAL_PREFIX } from './portal.web.js';
import type { PortalSession } from './sessions.js';

/** A live secret or live setting needs a second-factor proof at most this old (PORTAL-10), seconds. */
export const STEP_UP_SECONDS = 15 * 60;

/**
 * Whether the session must give its second factor again before reading a live secret or changing a live setting
 * (PORTAL-10): in live, when its last proof is older than STEP_UP_SECONDS or there is none. Test mode never asks.
 */
export function needsStepUp(session: PortalSession, nowMs = Date.now()): boolean {
  if (session.environment !== 'live') return false;
  return !session.secondFactorAt || nowMs - session.secondFactorAt.getTime() > STEP_UP_SECONDS * 1000;
}

/**
 * For a live secret or setting (PORTAL-10): when the session needs a step-up, sends it (303) to the step-up page,
 * which comes back to `back` (the page the action was on: a form is not replayed) and returns true; the handler
 * then does nothing else. Returns false when the action may go ahead.
 */
export function askedForStepUp(request: FastifyRequest, reply: FastifyReply, back: string): boolean {
  if (!needsStepUp(request.portalSession!)) return false;
  reply.redirect(`${PORTAL_PREFIX}/step-up?next=${encodeURIComponent(back)}`, 303);
  return true;
}

const BASE = 'http://portal.invalid';

/**
 * Where a step-up goes back to: `next` when it is a path under /portal/ on the portal itself (after resolving dots
 * and slashes), else the overview, so the page never sends anyone elsewhere.
 */
export function stepUpTarget(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith(`${PORTAL_PREFIX}/`) || /[\\\s]/.test(next))
    return `${PORTAL_PREFIX}/`;
  try {
    const url = new URL(next, BASE);
    if (url.origin !== BASE || !url.pathname.startsWith(`${PORTAL_PREFIX}/`)) return `${PORTAL_PREFIX}/`;
    return url.pathname + url.search;
  } catch {
    return `${PORTAL_PREFIX}/`;
  }
}
