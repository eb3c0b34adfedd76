import type { AppContext } from '../../context.js';
import { DOCUMENT_TYPES } from '../documents/document-types.js';
import { signedFileUrl } from '../documents/file-urls.js';
import { EXCEPTION_REASONS } from '../orders/exception-codes.js';
import type { OrderRecord } from '../filings/order-record.js';
import { canTransition, isFilingStatus, MAX_EXCEPTION_MESSAGE, todayUtc } from '../filings/transitions.js';
import { formationCancelledMessage } from '../filings/filings.service.js';
import { buildCompanyView, buildRequestView, maskDeep } from './order-view.js';
import { withFields } from '../../lib/objects.js';

/**
 * Everything the order page shows, from the order's full record: the order, what the request carried (masked),
 * the company record, status history with operator names, events with their webhook deliveries and attempts,
 * ledger entries (cents), documents with fresh links, an EIN order's tax id state and reveals (ORD-EIN-7), and which
 * actions the transition table allows now.
 */
export function orderPageView(ctx: AppContext, record: OrderRecord) {
  const {
    order,
    siblings,
    refund,
    history,
    events,
    ledger,
    documents,
    taxId,
    taxIdReveals,
    operatorNames: names,
  } = record;
  const status = order.filing_status;
  const can = (to: string) => isFilingStatus(status) && isFilingStatus(to) && canTransition(status, to);
  // FIL-13: an EIN whose bundled formation is cancelled is not offered for filing.
  const formationCancelled =
    order.order_type === 'ein' && siblings.some((s) => s.order_type === 'formation' && s.filing_status === 'cancelled');
  return {
    title: `Order ${order.id}`,
    section: 'queue',
    order,
    siblings,
    refund,
    requestView: buildRequestView(order.details ?? {}),
    companyView: buildCompanyView(order.company),
    fullRequest: maskDeep(order.group_request),
    history: history.map((h) => withFields(h, { actorLabel: actorLabel(h.actor, names) })),
    events,
    ledger: ledger.map((l) => withFields(l, { actorLabel: l.created_by ? shortActor(l.created_by, names) : '—' })),
    documents: documents.map((d) => ({
      ...d,
      actorLabel: shortActor(d.uploaded_by, names),
      url: signedFileUrl(ctx, d.id),
    })),
    // ORD-EIN-7: the tax id's state and every reveal of it; the number itself only on a recorded reveal's page.
    taxId,
    taxIdRetentionDays: ctx.config.taxIdRetentionDays,
    taxIdReveals: taxIdReveals.map((r) => withFields(r, { actorLabel: actorLabel(r.actor, names) })),
    documentTypes: DOCUMENT_TYPES,
    exceptionCodes: EXCEPTION_REASONS,
    maxExceptionMessage: MAX_EXCEPTION_MESSAGE,
    today: todayUtc(),
    filedWithheld: can('filed') && formationCancelled ? formationCancelledMessage(order.id) : null,
    actions: {
      pending: status !== 'exception' && can('pending'),
      filed: can('filed') && !formationCancelled,
      exception: can('exception'),
      resolve: status === 'exception',
      cancel: can('cancelled'),
      upload: true,
      revealTaxId: order.order_type === 'ein' && taxId !== null && taxId.destroyedAt === null,
    },
  };
}

/** `operator:op_…` -> the operator's name (for narrow columns); other actors as they are. */
function shortActor(actor: string, names: Map<string, string>): string {
  const name = actor.startsWith('operator:') ? names.get(actor.slice('operator:'.length)) : undefined;
  return name ? name.replace(/ <.*>$/, '') : actor;
}

/** `operator:op_…` -> 'Ada Admin <ada@example.com>'; other actors (api, cli, test_helper) as they are. */
function actorLabel(actor: string, names: Map<string, string>): string {
  if (!actor.startsWith('operator:')) return actor;
  const name = names.get(actor.slice('operator:'.length));
  return name ? `${name} (${actor})` : actor;
}
