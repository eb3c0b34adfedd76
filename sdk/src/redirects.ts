import { RedirectError } from './errors.js';

/**
 * `fetchImpl` made to follow no redirect: every request goes out with `redirect: 'manual'`, and a 3xx answer throws
 * RedirectError instead of being followed. fetch keeps custom headers such as x-api-key across a redirect, even to
 * another origin, so following one would hand the key to whatever address it names. The API itself never
 * redirects: a redirect comes from something in front of it (an http-to-https upgrade, a moved host), and the fix is
 * the base address, which the error says (AUTH-13).
 */
export function withoutRedirects(fetchImpl: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, { ...init, redirect: 'manual' });
    const redirected =
      response.type === 'opaqueredirect' ||
      (response.status >= 300 && response.status < 400 && response.status !== 304);
    if (!redirected) return response;
    await response.body?.cancel().catch(() => undefined);
    const url = input instanceof Request ? input.url : String(input);
    const location = response.headers.get('location');
    throw new RedirectError(url, response.status, location === null ? null : new URL(location, url).href);
  };
}
