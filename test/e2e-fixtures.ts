import { expect } from 'vitest';

/*
 * Fixtures of the end-to-end walkthroughs (webhooks-e2e.test.ts, console.browser.test.ts): both place the same
 * Delaware formation and follow it to filed.
 */

/** Asserts the response status (the body is the failure message) and returns the parsed JSON body. */
export async function ok(res: { statusCode: number; body: string; json(): any }, status: number) {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

/** The Delaware address of the walkthrough company and its officer. */
export const address = {
  line1: '1209 Orange Street',
  city: 'Wilmington',
  state: 'DE',
  postalCode: '19801',
  country: 'US',
};

/**
 * POST /orders body forming Harbor Light Ventures LLC in DE: member-managed, officer Grace Hopper, a supplied
 * company registered agent, and the given fallback names.
 */
export function harborLightFormation(userId: string, alternativeNames: string[]) {
  return {
    userId,
    filingState: 'DE',
    formation: {
      company: {
        legalName: 'Harbor Light Ventures LLC',
        entityType: 'LLC',
        structureType: 'MEMBER',
        principalAddress: address,
        mailingAddress: address,
        officers: [
          {
            type: 'PERSON',
            firstName: 'Grace',
            lastName: 'Hopper',
            title: 'Managing Member',
            address,
            isPrimary: true,
          },
        ],
      },
      alternativeNames,
      registeredAgent: {
        type: 'COMPANY',
        companyName: 'Delaware Agents Inc',
        addressStreet: '8 The Green',
        addressCity: 'Dover',
        addressState: 'DE',
        addressZip: '19901',
      },
    },
  };
}
