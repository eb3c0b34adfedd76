import type { AppContext } from '../../context.js';
import type { Config } from '../../config-types.js';
import type { EventEnvelope } from '../events/events.service.js';
import { isSuccess } from './delivery-policy.js';
import type { ClaimedDelivery } from './dispatch.repo.js';
import { signingSecrets } from './endpoint-secrets.js';
import { signatureHeader, SIGNATURE_HEADER } from './signature.js';
import { UnsafeWebhookUrlError, vetWebhookUrl } from './url-guard.js';
import type { SendResult, WebhookClient } from './webhook-client.js';

/*
 * Sending one attempt of a claimed delivery: the envelope, its signature, the URL check and the POST. The dispatcher
 * (dispatcher.ts) decides when; attempt-recorder.ts writes what came of it.
 */

const USER_AGENT = 'FilingComplianceService-Webhooks/1.6.0';

/** Opened signing secrets by endpoint and stored values, so a burst of deliveries opens each secret once. */
const openedSecrets = new Map<string, string[]>();
/** Endpoints whose opened secrets are kept at most (the map is emptied beyond it). */
const OPENED_SECRETS_MAX = 10_000;

/**
 * The signing secrets of a claimed endpoint, current first (WH-2, WH-3): the one place an attempt reads them. The
 * opened values are kept by (endpoint, stored values): a rotation stores new values, so it is seen at once.
 */
function endpointSigningSecrets(
  ctx: Pick<AppContext, 'secrets'>,
  row: Pick<ClaimedDelivery, 'endpoint_id' | 'secret' | 'previous_secret'>,
): string[] {
  const key = `${row.endpoint_id}\n${row.secret}\n${row.previous_secret ?? ''}`;
  const known = openedSecrets.get(key);
  if (known) return known;
  // The claim already dropped a previous secret whose grace ended (by the database clock).
  const farFuture = new Date(8.64e15);
  const opened = signingSecrets(
    ctx,
    {
      endpointId: row.endpoint_id,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret ? farFuture : null,
    },
    new Date(),
  );
  if (openedSecrets.size >= OPENED_SECRETS_MAX) openedSecrets.clear();
  openedSecrets.set(key, opened);
  return opened;
}

/** The body exactly as delivered: the stored event as its envelope (EVT-1); the portal shows it as each attempt's body. */
export function envelopeOf(
  row: Pick<ClaimedDelivery, 'event_id' | 'event_type' | 'event_created_at' | 'event_data'>,
): EventEnvelope {
  return {
    id: row.event_id,
    type: row.event_type,
    createdAt: row.event_created_at.toISOString(),
    data: row.event_data,
  };
}

/**
 * One HTTP attempt of a claimed delivery (WH-2, WH-4, WH-13): the URL is judged again and pinned to the address
 * judged, the stored event is signed with the endpoint's secrets and POSTed through `client`'s keep-alive pool for
 * the endpoint. Never throws for the receiver's failures: they come back in the result (a URL refused before
 * connecting included). @throws only for an unexpected error of ours.
 */
export async function sendAttempt(
  config: Pick<Config, 'webhookAllowPrivateNetworks' | 'webhookTimeoutMs'>,
  secrets: Pick<AppContext, 'secrets'>,
  client: WebhookClient,
  row: ClaimedDelivery,
): Promise<SendResult> {
  let pinned: NonNullable<Awaited<ReturnType<typeof vetWebhookUrl>>>[number] | null;
  try {
    // WH-13: the URL is judged again before every attempt, and the attempt connects only to the address judged.
    pinned = (await vetWebhookUrl(row.url, config.webhookAllowPrivateNetworks))?.[0] ?? null;
  } catch (err) {
    if (!(err instanceof UnsafeWebhookUrlError)) throw err;
    return {
      statusCode: null,
      responseBody: '',
      error: `Refused before connecting: url ${err.message}`,
      durationMs: 0,
    };
  }
  const body = JSON.stringify(envelopeOf(row));
  return client.send({
    url: row.url,
    poolKey: row.endpoint_id,
    body,
    timeoutMs: config.webhookTimeoutMs,
    pinned,
    headers: attemptHeaders(
      row,
      signatureHeader(body, endpointSigningSecrets(secrets, row), Math.floor(Date.now() / 1000)),
    ),
  });
}

/**
 * The headers of an attempt of delivery `row.id` of event `row.event_id`, `signature` being its Service-Signature
 * value: what every attempt sends, and what the portal shows of one (PORTAL-21).
 */
export function attemptHeaders(row: { id: string; event_id: string }, signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [SIGNATURE_HEADER]: signature,
    'service-event-id': row.event_id,
    'service-delivery-id': row.id,
  };
}

/** The `outcome` label of an attempt: success, http_error (a non-2xx answer), timeout, refused (WH-13) or network_error. */
export function attemptOutcome(result: SendResult): 'success' | 'http_error' | 'timeout' | 'refused' | 'network_error' {
  if (result.statusCode !== null) return isSuccess(result.statusCode) ? 'success' : 'http_error';
  if (result.error?.startsWith('Timed out')) return 'timeout';
  if (result.error?.startsWith('Refused before connecting')) return 'refused';
  return 'network_error';
}
