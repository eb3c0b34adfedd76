import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { FieldError } from '../../lib/errors.js';
import { formatCents } from '../../lib/money.js';
import type { PricedLine } from '../orders/orders.service.js';
import { CARD_SECTION } from './checkout.fields.js';
import { CHECKOUT_FORM_FIELD, issueCheckoutForm, issuedCheckoutForm, placedByForm } from './checkout-forms.js';
import { EXPIRED_FORM } from './checkout-placement.js';
import { errorSummary, presentSections, redisplayValues, type FormValues } from './checkout.forms.js';
import {
  COMPANY_PRODUCTS,
  displayedRetailCents,
  isProductKey,
  optionControls,
  optionPairs,
  PRODUCT_INFO,
  productSections,
  readOptions,
  readPostedOptions,
  tierInfo,
  type ProductKey,
} from './checkout.products.js';
import { paymentProviderFor } from '../payments/payments.service.js';
import {
  billingOf,
  enabledTiers,
  hasActiveAgent,
  loadPrices,
  submitCheckout,
  summaryLines,
  unavailableReason,
} from './checkout.service.js';
import { returnView } from './hosted-checkout.js';
import { findCompanyForUser } from './dashboard.service.js';
import { chrome, renderMessage, renderPage, requireCsrf, requireSession } from './web.js';
import { withFields } from '../../lib/objects.js';

type Params = { companyId?: string; product?: string };

/** Hidden field with the total (cents) the customer was shown; a different total at submit is never charged. */
const TOTAL_FIELD = '_total';

/**
 * Checkout pages (DASH-4 to DASH-9): `/checkout` (formation packages, a new company),
 * `/companies/:companyId/checkout` (products for an existing company) and one form page per product.
 */
export const checkoutRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async (app, { ctx }) => {
  const signedIn = { preHandler: requireSession(ctx) };
  const posting = { preHandler: [requireSession(ctx), requireCsrf] };

  app.get('/checkout', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const prices = await loadPrices(ctx.pool, session.tenant);
    const paid = billingOf(organization) === 'checkout';
    const products = enabledTiers(prices).map((tier) => {
      const info = tierInfo(tier);
      return {
        ...info,
        price: paid ? formatCents(displayedRetailCents(info, prices)) : null,
        href: `${request.dashboardSite.basePath}/checkout/formation?tier=${tier}`,
        featured: tier === 2,
      };
    });
    return renderPage(reply, 'checkout', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
      heading: 'Form a new company',
      intro: 'Choose a package. State filing fees are shown as their own line at checkout.',
      products,
      company: null,
    });
  });

  app.get<{ Params: Params }>('/companies/:companyId/checkout', signedIn, async (request, reply) => {
    const { session, organization } = request.signedIn;
    const company = await companyOr404(ctx, request, reply);
    if (!company) return reply;
    const prices = await loadPrices(ctx.pool, session.tenant);
    const paid = billingOf(organization) === 'checkout';
    const products = COMPANY_PRODUCTS.map((key) => {
      const info = PRODUCT_INFO[key as Exclude<ProductKey, 'formation'>];
      return {
        ...info,
        price: paid ? formatCents(displayedRetailCents(info, prices)) : null,
        href: `${request.dashboardSite.basePath}/companies/${company.id}/checkout/${key}`,
        featured: false,
      };
    });
    return renderPage(reply, 'checkout', chrome(request.dashboardSite, organization, request.signedIn, 'companies'), {
      heading: `Order a filing for ${company.legal_name}`,
      intro: 'Choose what you need. You review the price before you pay.',
      products,
      company: { id: company.id, legalName: company.legal_name },
    });
  });

  // Where the hosted payment page sends the customer back (PAY-4): the placed order, or why there is none yet.
  app.get<{ Params: { checkoutId: string }; Querystring: { cancelled?: string } }>(
    '/checkout/return/:checkoutId',
    signedIn,
    async (request, reply) => {
      const { session } = request.signedIn;
      const view = await returnView(
        ctx.pool,
        session.tenant,
        session.userId,
        request.params.checkoutId,
        request.query.cancelled === '1',
      );
      if (!view)
        return renderMessage(
          reply,
          request,
          404,
          'Payment not found',
          'This payment does not exist or was not started by you.',
        );
      if (view.state === 'placed') return reply.redirect(placedHref(request, view), 303);
      const titles = {
        pending: 'Payment pending',
        cancelled: 'Payment not completed',
        failed: 'Payment failed',
        expired: 'Payment page expired',
      } as const;
      return renderMessage(reply, request, 200, titles[view.state], view.message);
    },
  );
  app.get<{ Params: Params; Querystring: Record<string, string> }>('/checkout/formation', signedIn, (request, reply) =>
    productPage(ctx, request, reply, 'formation', request.query, {}, []),
  );
  app.post<{ Params: Params; Body: FormValues }>('/checkout/formation', posting, (request, reply) =>
    submit(ctx, request, reply, 'formation'),
  );
  app.get<{ Params: Params; Querystring: Record<string, string> }>(
    '/companies/:companyId/checkout/:product',
    signedIn,
    async (request, reply) => {
      const product = request.params.product ?? '';
      if (!isProductKey(product) || product === 'formation')
        return renderMessage(reply, request, 404, 'Product not found', 'Choose a product from the list.');
      return productPage(ctx, request, reply, product, request.query, {}, []);
    },
  );
  app.post<{ Params: Params; Body: FormValues }>(
    '/companies/:companyId/checkout/:product',
    posting,
    async (request, reply) => {
      const product = request.params.product ?? '';
      if (!isProductKey(product) || product === 'formation')
        return renderMessage(reply, request, 404, 'Product not found', 'Choose a product from the list.');
      return submit(ctx, request, reply, product);
    },
  );
};

async function companyOr404(ctx: AppContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
  const { session } = request.signedIn;
  const company = await findCompanyForUser(ctx.pool, session, request.params.companyId ?? '');
  if (!company)
    await renderMessage(
      reply,
      request,
      404,
      'Company not found',
      'This company does not exist or you are not one of its admins.',
    );
  return company;
}

async function productPage(
  ctx: AppContext,
  request: FastifyRequest<{ Params: Params }>,
  reply: FastifyReply,
  product: ProductKey,
  source: Record<string, unknown>,
  values: FormValues,
  errors: FieldError[],
  message: string | null = null,
  status = 200,
) {
  const { session, organization } = request.signedIn;
  const company = product === 'formation' ? null : await companyOr404(ctx, request, reply);
  if (product !== 'formation' && !company) return reply;
  const prices = await loadPrices(ctx.pool, session.tenant);
  const tiers = enabledTiers(prices);
  const options = readOptions(source, company, tiers, product);
  const billing = billingOf(organization);
  const activeAgent = await hasActiveAgent(ctx.pool, session.tenant, company, options.filingState);
  const unavailable = await unavailableReason(ctx.pool, session.tenant, product, company, options);
  const lines = unavailable
    ? []
    : await summaryLines(ctx.pool, session.tenant, product, options, company, billing, activeAgent);
  const sections = productSections(product, options, activeAgent);
  const base = request.dashboardSite.basePath;
  // Each rendered form gets its own one-time token: resubmitting it never places or charges twice. Issuing it writes
  // nothing (DASH-9): its row is made when the form is submitted.
  const formToken = unavailable ? null : issueCheckoutForm(ctx.secrets.fileUrlSecret, session);
  const provider = billing === 'checkout' ? paymentProviderFor(ctx.config, session.tenant.environment) : null;
  const hosted = provider?.kind === 'hosted';
  const totalCents = lines.reduce((sum, l) => sum + l.amountCents, 0);
  const shownUnavailable =
    unavailable ??
    (billing === 'checkout' && !provider
      ? `Card payment is not available yet. Please contact ${organization.name} to order.`
      : null);
  const action = company ? `${base}/companies/${company.id}/checkout/${product}` : `${base}/checkout/formation`;
  const info =
    product === 'formation'
      ? withFields(tierInfo(options.tier), { title: `${tierInfo(options.tier).title} formation package` })
      : PRODUCT_INFO[product];
  return renderPage(
    reply,
    'checkout-form',
    chrome(request.dashboardSite, organization, request.signedIn, 'companies'),
    {
      info,
      product,
      company: company ? { id: company.id, legalName: company.legal_name } : null,
      action,
      backHref: company ? `${base}/companies/${company.id}/checkout` : `${base}/checkout`,
      controls: optionControls(product, options, tiers, company),
      hidden: [
        ...optionPairs(product, options),
        ...(formToken ? [[CHECKOUT_FORM_FIELD, formToken]] : []),
        ...(billing === 'checkout' ? [[TOTAL_FIELD, String(totalCents)]] : []),
      ],
      sections: presentSections(sections, values, errors),
      card: billing === 'checkout' && !hosted ? presentSections([CARD_SECTION], values, errors)[0] : null,
      hosted,
      lines: presentLines(lines, billing),
      total: formatCents(totalCents),
      paid: billing === 'checkout',
      unavailable: shownUnavailable,
      // The page already says why nothing can be bought: the same refusal is not said twice in other words.
      message: shownUnavailable ? null : message,
      errorList: errorSummary(errors, [...sections, CARD_SECTION]),
      activeAgent,
      options,
    },
    status,
  );
}

async function submit(
  ctx: AppContext,
  request: FastifyRequest<{ Params: Params; Body: FormValues }>,
  reply: FastifyReply,
  product: ProductKey,
) {
  const { session, organization } = request.signedIn;
  const company = product === 'formation' ? null : await companyOr404(ctx, request, reply);
  if (product !== 'formation' && !company) return reply;
  const form = request.body ?? {};
  const sent =
    typeof form[CHECKOUT_FORM_FIELD] === 'string' && form[CHECKOUT_FORM_FIELD] ? form[CHECKOUT_FORM_FIELD] : null;
  const formToken = sent ? issuedCheckoutForm(ctx.secrets.fileUrlSecret, session, sent) : null;
  // DASH-9: a token of another session, a forged or an old one is refused before anything is read.
  if (sent && !formToken)
    return productPage(ctx, request, reply, product, form, redisplayValues(form), [], EXPIRED_FORM.message, 409);
  // A form submitted again after it placed its order (double click, reload, back button) shows that order.
  const earlier = formToken ? await placedByForm(ctx.pool, session.tenant, formToken) : null;
  if (earlier) return reply.redirect(placedHref(request, earlier), 303);
  const tiers = enabledTiers(await loadPrices(ctx.pool, session.tenant));
  const { options, problem } = readPostedOptions(form, company, tiers, product);
  if (problem) return productPage(ctx, request, reply, product, form, redisplayValues(form), [], problem, 400);
  // A package switched off after the page was shown is refused, never silently swapped for another one.
  const tierGone =
    product === 'formation' && form.tier !== undefined && !(tiers as number[]).includes(Number(form.tier))
      ? `The ${tierInfo(tierOf(form.tier)).title} package is no longer offered. Please choose a package again.`
      : null;
  const unavailable = tierGone ?? (await unavailableReason(ctx.pool, session.tenant, product, company, options));
  if (unavailable) return productPage(ctx, request, reply, product, form, redisplayValues(form), [], unavailable, 409);
  const activeAgent = await hasActiveAgent(ctx.pool, session.tenant, company, options.filingState);
  // DASH-8: the total the page showed; a form that sends one we cannot read is treated as an expired form.
  const shownTotal = form[TOTAL_FIELD];
  if (shownTotal !== undefined && !/^\d{1,12}$/.test(shownTotal))
    return productPage(ctx, request, reply, product, form, redisplayValues(form), [], EXPIRED_FORM.message, 409);
  const expectedTotalCents = shownTotal === undefined ? null : Number(shownTotal);
  const hosted = { siteUrl: siteUrl(ctx, request), customerEmail: request.signedIn.user.email };
  const outcome = await submitCheckout(ctx, {
    tenant: session.tenant,
    organization,
    userId: session.userId,
    company,
    product,
    options,
    form,
    activeAgent,
    session,
    formToken,
    expectedTotalCents,
    hosted,
  });
  if (outcome.ok)
    return reply.redirect('redirectTo' in outcome ? outcome.redirectTo : placedHref(request, outcome), 303);
  const status =
    outcome.errors.some((e) => e.field === 'card.number') && outcome.message ? 402 : outcome.errors.length ? 400 : 409;
  return productPage(
    ctx,
    request,
    reply,
    product,
    form,
    redisplayValues(form),
    outcome.errors,
    outcome.message,
    status,
  );
}

// The dashboard's absolute address for links leaving the site (the payment page's way back): the white-label host
// (always https) or DASHBOARD_BASE_URL.
function siteUrl(ctx: AppContext, request: FastifyRequest): string {
  return request.dashboardSite.hostOrganization ? `https://${request.dashboardSite.host}` : ctx.config.dashboardBaseUrl;
}

function tierOf(raw: unknown): 1 | 2 | 3 {
  const n = Number(raw);
  return n === 2 || n === 3 ? n : 1;
}

function placedHref(request: FastifyRequest, placed: { companyId: string; groupId: string }): string {
  return `${request.dashboardSite.basePath}/companies/${encodeURIComponent(placed.companyId)}?placed=${encodeURIComponent(placed.groupId)}`;
}

function presentLines(lines: PricedLine[], billing: 'balance' | 'checkout') {
  return lines.map((l) => ({
    description: l.description,
    amount: billing === 'balance' ? null : l.amountCents === 0 ? 'Included' : formatCents(l.amountCents),
    stateFee: l.stateFee,
  }));
}
