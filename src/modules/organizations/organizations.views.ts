import { centsToDollars } from '../../lib/money.js';
import { domainVerificationView } from './domain-verification.js';
import { type OrganizationAdminData, serializeApiKey, type TenantOrganization } from './organizations.service.js';

/*
 * The organizations module's presenters: the API edge where balances in cents become dollars (API-5).
 */

/**
 * The operator's view of an organization (admin API, console page): settings, balances per environment (cents in,
 * dollars out), API keys redacted (serializeApiKey), createdAt as ISO 8601.
 */
export function organizationAdminView({ organization: o, keys, balanceCents }: OrganizationAdminData) {
  return {
    id: o.id,
    name: o.name,
    whiteLabelDomain: o.white_label_domain,
    whiteLabelDomainVerification: domainVerificationView(o),
    dashboardBilling: o.dashboard_billing,
    emailNotifications: o.email_notifications,
    contactEmail: o.contact_email,
    balances: { live: centsToDollars(balanceCents.live), test: centsToDollars(balanceCents.test) },
    apiKeys: keys.map(serializeApiKey),
    createdAt: o.created_at.toISOString(),
  };
}

/** The integrator's view of its organization for one environment (OrganizationSchema): balance cents in, dollars out. */
export function organizationView({ organization: o, environment, balanceCents }: TenantOrganization) {
  return {
    id: o.id,
    name: o.name,
    environment,
    balance: centsToDollars(balanceCents),
    whiteLabelDomain: o.white_label_domain,
    whiteLabelDomainVerification: domainVerificationView(o),
    branding: {
      logoUrl: o.branding.logoUrl ?? null,
      primaryColor: o.branding.primaryColor ?? null,
      accentColor: o.branding.accentColor ?? null,
    },
    emailNotifications: o.email_notifications,
    dashboardBilling: o.dashboard_billing,
    contactEmail: o.contact_email,
    lowBalanceThreshold: o.low_balance_threshold_cents === null ? null : centsToDollars(o.low_balance_threshold_cents),
    createdAt: o.created_at.toISOString(),
    updatedAt: o.updated_at.toISOString(),
  };
}
