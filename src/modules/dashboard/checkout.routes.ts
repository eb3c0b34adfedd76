import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../context.js';

export const checkoutRoutes: FastifyPluginAsync<{ ctx: AppContext }> = async () => {};
