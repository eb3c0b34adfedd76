import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, type ErrorCode, ValidationError } from '../../lib/errors.js';
import type { Flash } from '../../lib/browser-forms.js';
import { rejectUnstorableFormText } from '../../lib/text-guard.js';
import { centsToDecimalString } from '../../lib/money.js';
import { readDocumentForm } from '../documents/document-form.js';
import { discardStagedFile, recordDocument } from '../documents/documents.service.js';
import { throwIfFormationCancelled, transitionOrder } from '../filings/filings.service.js';
import { EXCEPTION_REASONS } from '../orders/exception-codes.js';
import { orderStateOf, planTransition, todayUtc, type TransitionRequest } from '../filings/transitions.js';
import { actorOf, checkSessionCsrf, CONSOLE_PREFIX, field, redirectWith, render } from './console.web.js';
import type { OrderDetailRow } from '../filings/filings.repo.js';
import {
  loadActionOrder,
  ORDER_ACTIONS,
  requestFor,
  reversalPreview,
  type OrderAction,
} from './order-actions.service.js';
import { withFields } from '../../lib/objects.js';

const ACTION_TITLES: Record<OrderAction, string> = {
  pending: 'Send to pending',
  filed: 'Mark filed',
  exception: 'Raise an exception',
  resolve: 'Resolve the exception',
  cancel: 'Cancel the order',
};

/**
 * Order actions, each in two steps: `review` checks the move with the pipeline's own guard (planTransition)
 * and shows a confirmation page with what will happen; `transition` (with the confirm box ticked) calls
 * `transitionOrder` with actor `operator:<id>`. Uploads take a confirm box on the form itself.
 */
export async function consoleOrderActionRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.post<{ Params: { orderId: string } }>(
    '/orders/:orderId/review',
    { schema: { hide: true } },
    async (request, reply) => {
      const { orderId } = request.params;
      const order = await loadActionOrder(ctx.pool, orderId);
      const action = parseAction(field(request.body, 'action'));
      const transition = requestFor(action, request.body);
      try {
        throwIfActionDoesNotFit(order, action);
        const plan = planTransition(orderStateOf(order), transition, todayUtc());
        await throwIfFormationCancelled(ctx.pool, order, plan.to);
        return renderConfirm(ctx, request, reply, order, action, transition, plan, null);
      } catch (err) {
        if (err instanceof AppError)
          return redirectWith(ctx, request, reply, orderUrl(orderId), { kind: 'error', text: err.message });
        throw err;
      }
    },
  );

  app.post<{ Params: { orderId: string } }>(
    '/orders/:orderId/transition',
    { schema: { hide: true } },
    async (request, reply) => {
      const { orderId } = request.params;
      const action = parseAction(field(request.body, 'action'));
      const transition = requestFor(action, request.body);
      if (field(request.body, 'confirm') !== 'yes') {
        const order = await loadActionOrder(ctx.pool, orderId);
        const plan = planTransition(orderStateOf(order), transition, todayUtc());
        return renderConfirm(
          ctx,
          request,
          reply.status(400),
          order,
          action,
          transition,
          plan,
          'Tick the confirmation box to go ahead.',
        );
      }
      try {
        if (action === 'resolve') throwIfActionDoesNotFit(await loadActionOrder(ctx.pool, orderId), action);
        // The status shown on the confirmation page: if the order moved meanwhile, the guard refuses (no stale
        // resolve).
        const seen = field(request.body, 'expectedStatus') || undefined;
        const result = await transitionOrder(
          ctx,
          null,
          orderId,
          withFields(transition, { expectedStatus: seen }),
          actorOf(request),
        );
        const reversed = result.reversals.reduce((sum, r) => sum + r.amount_cents, 0);
        const extra = result.reversals.length
          ? `; ${result.reversals.length} debit(s) reversed, ${centsToDecimalString(reversed)} dollars back on the balance`
          : '';
        return redirectWith(ctx, request, reply, orderUrl(orderId), {
          kind: 'ok',
          text: `Order is now ${result.order.filing_status === 'exception' ? 'in exception' : result.order.filing_status} (event ${result.event.id})${extra}.`,
        });
      } catch (err) {
        if (err instanceof AppError && err.status < 500 && err.code !== 'not_found') {
          return redirectWith(ctx, request, reply, orderUrl(orderId), { kind: 'error', text: err.message });
        }
        throw err;
      }
    },
  );

  // DOC-10: the file is streamed into the store as the form arrives (readDocumentForm), after the CSRF token and the
  // text of the fields before it were checked; the scope's CSRF hook leaves this multipart form to that check.
  app.post<{ Params: { orderId: string } }>(
    '/orders/:orderId/documents',
    { schema: { hide: true }, config: { checksCsrfWhileReading: true } },
    async (request, reply) => {
      const { orderId } = request.params;
      const back = (flash: Flash) => redirectWith(ctx, request, reply, orderUrl(orderId), flash);
      // A form refused as a form (token, text) gets an error page; a refused document, a message on the order page.
      let formError: unknown = null;
      const checkForm = (fields: Record<string, string>, fileName: string | null) => {
        try {
          checkSessionCsrf(request, fields);
          rejectUnstorableFormText(fileName === null ? fields : { ...fields, file: fileName });
        } catch (err) {
          formError = err;
          throw err;
        }
      };
      try {
        const { staged, fields } = await readDocumentForm(ctx, request, { orderId }, checkForm);
        if (fields.confirm?.trim() !== 'yes') {
          await discardStagedFile(ctx, staged);
          return back({ kind: 'error', text: 'Tick the confirmation box to upload the document.' });
        }
        const { document, event } = await recordDocument(ctx, staged, fields.documentType!.trim(), actorOf(request));
        return back({
          kind: 'ok',
          text: `Uploaded ${document.fileName} as ${document.documentType} (event ${event.id}).`,
        });
      } catch (err) {
        if (err !== formError && err instanceof AppError && DOCUMENT_REFUSALS.has(err.code))
          return back({ kind: 'error', text: err.message });
        throw err;
      }
    },
  );
}

/** What refuses a document rather than its form (DOC-3): shown on the order page, where the form is. */
const DOCUMENT_REFUSALS = new Set<ErrorCode>(['validation_error', 'unsupported_media_type', 'payload_too_large']);

function orderUrl(orderId: string): string {
  return `${CONSOLE_PREFIX}/orders/${encodeURIComponent(orderId)}`;
}

/**
 * `resolve` means leaving an exception: on an order in any other status it is refused (the table alone would
 * let submitted -> pending through). The check is repeated in the transaction's guard for every other action.
 */
function throwIfActionDoesNotFit(order: Pick<OrderDetailRow, 'id' | 'filing_status'>, action: OrderAction): void {
  if (action === 'resolve' && order.filing_status !== 'exception') {
    throw new AppError(
      'invalid_transition',
      `Order ${order.id} is ${order.filing_status}, not in exception; there is nothing to resolve`,
    );
  }
}

function parseAction(value: string): OrderAction {
  if ((ORDER_ACTIONS as readonly string[]).includes(value)) return value as OrderAction;
  throw new ValidationError([{ field: 'action', message: `must be one of: ${ORDER_ACTIONS.join(', ')}` }]);
}

async function renderConfirm(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  order: OrderDetailRow,
  action: OrderAction,
  transition: TransitionRequest,
  plan: ReturnType<typeof planTransition>,
  error: string | null,
) {
  const reversal = action === 'cancel' ? await reversalPreview(ctx.pool, order) : null;
  return render(ctx, request, reply, 'confirm', {
    title: ACTION_TITLES[action],
    section: 'queue',
    order,
    action,
    actionTitle: ACTION_TITLES[action],
    plan,
    reversal,
    error,
    exceptionReason: plan.exceptionCode ? EXCEPTION_REASONS[plan.exceptionCode] : null,
    hidden: Object.entries({
      action,
      expectedStatus: order.filing_status,
      filingDate: transition.filingDate,
      ein: transition.ein,
      exceptionCode: transition.exceptionCode,
      exceptionMessage: transition.exceptionMessage,
      resumeTo: action === 'resolve' ? transition.filingStatus : undefined,
    }).filter(([, v]) => v != null && v !== ''),
  });
}
