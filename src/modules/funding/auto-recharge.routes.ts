import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import {
  AutoRechargeSettingsSchema,
  AutoRechargeSetupSchema,
  UpdateAutoRechargeBody,
} from './auto-recharge.schemas.js';
import { getAutoRecharge, startMethodSetup, updateAutoRecharge } from './auto-recharge.service.js';
import { autoRechargeSettingsView } from './auto-recharge.views.js';

/** The portal page Stripe sends an owner back to after saving a method (FUND-31, FUND-37). */
export const AUTO_RECHARGE_PORTAL_PATH = '/balance/auto-recharge';

/**
 * GET and PUT /balance/auto-recharge, POST /balance/auto-recharge/setup (FUND-30..FUND-32, FUND-37, FUND-38): the
 * organization's automatic recharge of its live balance.
 */
export const autoRechargeRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/balance/auto-recharge',
    {
      schema: {
        ...operation('getAutoRecharge'),
        summary: 'Retrieve the auto-recharge settings',
        description:
          "The organization's automatic recharge of its live balance: on or off, the threshold and amount in dollars, whether a payment method is saved, why the service turned it off (three failed attempts), and the newest recharge. One per organization; the test balance is never recharged.",
        response: { 200: AutoRechargeSettingsSchema, ...operationErrors('getAutoRecharge') },
      },
    },
    async (request) => autoRechargeSettingsView(await getAutoRecharge(ctx.pool, request.tenant.organizationId)),
  );

  app.put(
    '/balance/auto-recharge',
    {
      schema: {
        ...operation('updateAutoRecharge'),
        summary: 'Update the auto-recharge settings',
        description:
          'Live key only (403 with a test key). "When a debit takes the live balance below `threshold`, add `amount`": the recharge runs in the background as an off-session payment with the saved card or US bank account, at most one at a time, and is credited as a top-up (`balance.top_up_succeeded`) once Stripe says the money is there (a bank debit after a few business days). After three failed attempts it stops, auto-recharge is turned off, the owners are emailed and `balance.auto_recharge_failed` is sent. `amount` within the top-up bounds (400 naming `amount`); turning it on needs a saved payment method (400 naming `enabled`).',
        body: UpdateAutoRechargeBody,
        response: { 200: AutoRechargeSettingsSchema, ...operationErrors('updateAutoRecharge') },
      },
    },
    async (request) => autoRechargeSettingsView(await updateAutoRecharge(ctx, request.tenant, request.body)),
  );

  app.post(
    '/balance/auto-recharge/setup',
    {
      schema: {
        ...operation('setUpAutoRechargeMethod'),
        summary: 'Save a payment method for auto-recharge',
        description:
          'Live key only (403 with a test key). Opens a Stripe Checkout page in setup mode where an owner saves a card or US bank account for automatic recharges; nothing is charged there. Once Stripe confirms it, the method is saved (replacing any earlier one) and auto-recharge is turned on if a threshold and an amount are set. Stripe sends the owner back to the partner portal.',
        response: { 201: AutoRechargeSetupSchema, ...operationErrors('setUpAutoRechargeMethod') },
      },
    },
    async (request, reply) => {
      const page = await startMethodSetup(
        ctx,
        request.tenant,
        `${ctx.config.portalBaseUrl}${AUTO_RECHARGE_PORTAL_PATH}`,
      );
      return reply.status(201).send({ checkoutUrl: page.url });
    },
  );
};
