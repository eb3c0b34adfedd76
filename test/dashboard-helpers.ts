import type { TestApp, TestTenant } from './harness.js';

/** A magic link split into what `app.inject` needs: path and Host (and https when the link is https). */
export function injectTarget(link: string): { url: string; headers: Record<string, string> } {
  const u = new URL(link);
  const headers: Record<string, string> = { host: u.host };
  if (u.protocol === 'https:') headers['x-forwarded-proto'] = 'https';
  return { url: u.pathname + u.search, headers };
}

/** Mints a link through the API (test environment unless `env`). */
export async function mintLink(
  tenant: TestTenant,
  body: { userId: string; companyId?: string },
  env: 'live' | 'test' = 'test',
): Promise<string> {
  const res = await tenant.api('POST', '/auth/magic-link', body, { env });
  if (res.statusCode !== 201) throw new Error(`mintLink: ${res.statusCode} ${res.body}`);
  return res.json().magicLink;
}

/** Opens a link like a browser would (no cookie yet). */
export function openLink(t: TestApp, link: string, extraHeaders: Record<string, string> = {}) {
  const { url, headers } = injectTarget(link);
  return t.app.inject({ method: 'GET', url, headers: { ...headers, ...extraHeaders } });
}

/** The `name=value` of the session cookie a response sets, and its attributes. */
export function sessionCookie(setCookie: string | string[] | undefined): { pair: string; attributes: string } {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const line = all.find((c) => c.startsWith('fcs_dashboard='));
  if (!line) throw new Error(`no session cookie in ${JSON.stringify(setCookie)}`);
  const [pair, ...rest] = line.split(';');
  return { pair: pair.trim(), attributes: rest.join(';') };
}

/** Signs in with a fresh link (test environment unless `env`) and returns a function that GETs/POSTs dashboard pages with the cookie. */
export async function signIn(
  t: TestApp,
  tenant: TestTenant,
  body: { userId: string; companyId?: string },
  env: 'live' | 'test' = 'test',
) {
  const link = await mintLink(tenant, body, env);
  const res = await openLink(t, link);
  if (res.statusCode !== 303) throw new Error(`signIn: ${res.statusCode} ${res.body}`);
  const { pair } = sessionCookie(res.headers['set-cookie']);
  const { headers } = injectTarget(link);
  const base = new URL(link).pathname.replace(/\/auth\/[^/]+$/, '');
  return {
    link,
    base,
    location: String(res.headers.location),
    get: (path: string) => t.app.inject({ method: 'GET', url: base + path, headers: { ...headers, cookie: pair } }),
    post: (path: string, form: Record<string, string> | URLSearchParams) =>
      t.app.inject({
        method: 'POST',
        url: base + path,
        headers: { ...headers, cookie: pair, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      }),
  };
}

/** The CSRF token embedded in a page's forms. */
export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no CSRF token in page');
  return m[1];
}

/** The one-time token of the checkout form in a page (hidden field `_checkout`). */
export function checkoutTokenOf(html: string): string {
  const m = /name="_checkout" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('no checkout form token in page');
  return m[1];
}

/** The card fields of a checkout form; with the sandbox provider the number decides the outcome (DASH-7). */
export const card = (number: string) => ({
  'card.name': 'Ada Lovelace',
  'card.number': number,
  'card.exp': '12/39',
  'card.cvc': '123',
});

/** The EIN fields of a checkout form: a valid SS-4 (the form's counterpart of orders-fixtures `einObject`). */
export const einForm = {
  'ein.responsibleParty.firstName': 'Ada',
  'ein.responsibleParty.lastName': 'Lovelace',
  'ein.responsibleParty.taxIdType': 'SSN',
  'ein.responsibleParty.taxId': '123-45-6789',
  'ein.responsibleParty.title': 'Managing Member',
  'ein.reasonForApplying': 'started_new_business',
  'ein.principalActivity': 'retail',
  'ein.principalProductOrService': 'Handmade furniture',
  'ein.employees.agricultural': '0',
  'ein.employees.household': '0',
  'ein.employees.other': '0',
};

/** The company fields of a formation checkout form: a member-managed company named `legalName` in Sheridan, WY. */
export const wyomingCompanyForm = (legalName: string) => ({
  'formation.company.legalName': legalName,
  'formation.company.structureType': 'MEMBER',
  'formation.company.principalAddress.line1': '30 N Gould St',
  'formation.company.principalAddress.city': 'Sheridan',
  'formation.company.principalAddress.state': 'WY',
  'formation.company.principalAddress.postalCode': '82801',
  'formation.company.officers.0.firstName': 'Ada',
  'formation.company.officers.0.lastName': 'Lovelace',
  'formation.company.officers.0.title': 'Managing Member',
});

/** Sets who pays for the tenant's dashboard orders (DASH-6): `customer` by card, or `organization` from its balance. */
export async function setDashboardBilling(tenant: TestTenant, billing: 'customer' | 'organization'): Promise<void> {
  const res = await tenant.api('PATCH', '/organization', { dashboardBilling: billing }, { env: 'live' });
  if (res.statusCode !== 200) throw new Error(`setDashboardBilling: ${res.statusCode} ${res.body}`);
}

/** An amount in cents written as the dashboard shows it: `$1,234.50`. */
export const dollarsText = (cents: number) => `$${(cents / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
