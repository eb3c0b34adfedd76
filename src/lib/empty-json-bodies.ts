import type { FastifyInstance } from 'fastify';

/**
 * API-7: a route that takes no body (no body schema: DELETE /webhook-endpoints/{id}, POST …/rotate-secret,
 * …/resend, …/verify, …) accepts an empty body sent as `application/json`, which many HTTP clients send with every
 * POST and DELETE. A route that takes a body still answers an empty one 400 ("The JSON body is empty; send an object",
 * Fastify's FST_ERR_CTP_EMPTY_JSON_BODY), and every other body goes to Fastify's own JSON parser, which refuses
 * `__proto__` and `constructor.prototype` keys (its defaults).
 */
export function acceptEmptyJsonBodies(scope: FastifyInstance): void {
  const parseJson = scope.getDefaultJsonParser('error', 'error');
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && !request.routeOptions.schema?.body) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
}
