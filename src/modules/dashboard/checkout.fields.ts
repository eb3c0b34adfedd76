import { CORP_TITLES, FORMATION_STATES, LLC_TITLES } from '../companies/company-rules.js';
import { EIN_PRINCIPAL_ACTIVITIES, EIN_REASONS } from '../orders/ein.schemas.js';

/*
 * Checkout forms as data. A field's `name` is the dotted path of the POST /orders body it fills
 * (e.g. `ein.responsibleParty.firstName`), so the API's field errors land next to the right input and
 * the body is built by one generic function (checkout.forms.ts).
 */

/** One choice of a select field: the submitted `value` and the `label` shown. */
export interface Option {
  value: string;
  label: string;
}

/** One form input. `name` is the dotted POST /orders body path it fills; `kind` picks the HTML input. */
export interface FieldDef {
  name: string;
  label: string;
  kind: 'text' | 'select' | 'checkbox' | 'number' | 'date';
  /** How the value goes into the body. Default 'string'. */
  as?: 'string' | 'int' | 'bool';
  required?: boolean;
  options?: Option[];
  hint?: string;
  autocomplete?: string;
  inputmode?: string;
  placeholder?: string;
  defaultValue?: string;
}

/** A fieldset of a checkout form: a legend, an optional intro, and its rows of fields. */
export interface Section {
  legend: string;
  intro?: string;
  /** Rows of fields; fields of one row sit side by side on wide screens. */
  rows: FieldDef[][];
}

const humanize = (v: string) => v.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
const options = (values: readonly string[], label: (v: string) => string = (v) => v): Option[] =>
  values.map((value) => ({ value, label: label(value) }));

/** US states for selects, by code. */
export const STATE_OPTIONS: Option[] = options(FORMATION_STATES);

const address = (prefix: string, required: boolean): FieldDef[][] => [
  [{ name: `${prefix}.line1`, label: 'Street address', kind: 'text', required, autocomplete: 'address-line1' }],
  [{ name: `${prefix}.line2`, label: 'Apartment, suite', kind: 'text', autocomplete: 'address-line2' }],
  [
    { name: `${prefix}.city`, label: 'City', kind: 'text', required, autocomplete: 'address-level2' },
    {
      name: `${prefix}.state`,
      label: 'State',
      kind: 'select',
      required,
      options: STATE_OPTIONS,
      autocomplete: 'address-level1',
    },
    {
      name: `${prefix}.postalCode`,
      label: 'ZIP code',
      kind: 'text',
      required,
      autocomplete: 'postal-code',
      inputmode: 'numeric',
    },
  ],
];

/** The company to form (formation.company): name, management, addresses and the first officer. */
export function formationCompanySections(entityType: 'LLC' | 'CORP'): Section[] {
  const p = 'formation.company';
  const management: FieldDef =
    entityType === 'LLC'
      ? {
          name: `${p}.structureType`,
          label: 'Management',
          kind: 'select',
          required: true,
          options: [
            { value: 'MEMBER', label: 'Member-managed' },
            { value: 'MANAGER', label: 'Manager-managed' },
          ],
        }
      : {
          name: `${p}.taxElection`,
          label: 'Tax election',
          kind: 'select',
          required: true,
          options: options(['C Corporation', 'S Corporation']),
        };
  const titles = entityType === 'LLC' ? LLC_TITLES : CORP_TITLES;
  return [
    {
      legend: 'Your new company',
      rows: [
        [
          {
            name: `${p}.legalName`,
            label: 'Company name',
            kind: 'text',
            required: true,
            hint:
              entityType === 'LLC' ? 'Include LLC, e.g. Blue Fern LLC' : 'Include Inc. or Corp., e.g. Blue Fern Inc.',
          },
        ],
        [management],
      ],
    },
    { legend: 'Principal address', rows: address(`${p}.principalAddress`, true) },
    {
      legend: 'Mailing address',
      intro: 'Leave blank to use the principal address.',
      rows: address(`${p}.mailingAddress`, false),
    },
    {
      legend: 'Officer of record',
      intro: 'The person who will be listed on the filing. Their address is the principal address.',
      rows: [
        [
          {
            name: `${p}.officers.0.firstName`,
            label: 'First name',
            kind: 'text',
            required: true,
            autocomplete: 'given-name',
          },
          {
            name: `${p}.officers.0.lastName`,
            label: 'Last name',
            kind: 'text',
            required: true,
            autocomplete: 'family-name',
          },
        ],
        [{ name: `${p}.officers.0.title`, label: 'Title', kind: 'select', required: true, options: options(titles) }],
      ],
    },
  ];
}

/** A registered agent the company already has (flat address in the filing state), under `prefix`. */
export function suppliedAgentSection(prefix: string, filingState: string): Section {
  return {
    legend: 'Your registered agent',
    intro: `The person who accepts legal mail for the company at a street address in ${filingState} (no PO boxes).`,
    rows: [
      [
        { name: `${prefix}.firstName`, label: 'First name', kind: 'text', required: true },
        { name: `${prefix}.lastName`, label: 'Last name', kind: 'text', required: true },
      ],
      [{ name: `${prefix}.addressStreet`, label: `Street address in ${filingState}`, kind: 'text', required: true }],
      [
        { name: `${prefix}.addressCity`, label: 'City', kind: 'text', required: true },
        { name: `${prefix}.addressZip`, label: 'ZIP code', kind: 'text', required: true, inputmode: 'numeric' },
      ],
    ],
  };
}

/**
 * The SS-4 responsible party (orders/ein.schemas.ts `ResponsiblePartySchema`) at `prefix` (`ein.responsibleParty` at
 * checkout, `responsibleParty` on the correction page, ORD-EIN-8); `middleName` adds its optional field.
 */
export function responsiblePartySection(prefix: string, legend: string, middleName = false): Section {
  const name = (field: string, label: string): FieldDef => ({
    name: `${prefix}.${field}`,
    label,
    kind: 'text',
    required: field !== 'middleName',
  });
  return {
    legend,
    intro: 'The person who owns or controls the company. The IRS checks the name against the tax ID.',
    rows: [
      middleName
        ? [name('firstName', 'First name'), name('middleName', 'Middle name'), name('lastName', 'Last name')]
        : [name('firstName', 'First name'), name('lastName', 'Last name')],
      [
        {
          name: `${prefix}.taxIdType`,
          label: 'Tax ID type',
          kind: 'select',
          required: true,
          options: options(['SSN', 'ITIN']),
        },
        {
          name: `${prefix}.taxId`,
          label: 'SSN or ITIN',
          kind: 'text',
          required: true,
          inputmode: 'numeric',
          placeholder: '123-45-6789',
          autocomplete: 'off',
          hint: 'For the IRS only: kept encrypted until the EIN is filed, then destroyed.',
        },
      ],
      [
        {
          name: `${prefix}.title`,
          label: 'Role in the company',
          kind: 'text',
          required: true,
          placeholder: 'e.g. Managing Member',
        },
      ],
    ],
  };
}

/** The `ein` object after IRS Form SS-4 (orders/ein.schemas.ts). */
export function einSections(): Section[] {
  const p = 'ein';
  return [
    responsiblePartySection(`${p}.responsibleParty`, 'EIN: responsible party'),
    {
      legend: 'EIN: the business',
      rows: [
        [
          {
            name: `${p}.reasonForApplying`,
            label: 'Reason for applying',
            kind: 'select',
            required: true,
            options: options(EIN_REASONS, humanize),
            defaultValue: 'started_new_business',
          },
        ],
        [{ name: `${p}.reasonForApplyingOther`, label: 'If other, describe the reason', kind: 'text' }],
        [
          {
            name: `${p}.principalActivity`,
            label: 'Principal activity',
            kind: 'select',
            required: true,
            options: options(EIN_PRINCIPAL_ACTIVITIES, humanize),
          },
        ],
        [{ name: `${p}.principalActivityOther`, label: 'If other, describe the activity', kind: 'text' }],
        [
          {
            name: `${p}.principalProductOrService`,
            label: 'Main product or service',
            kind: 'text',
            required: true,
            placeholder: 'e.g. Bookkeeping services',
          },
        ],
      ],
    },
    {
      legend: 'EIN: employees in the next 12 months',
      rows: [
        [
          {
            name: `${p}.employees.agricultural`,
            label: 'Agricultural',
            kind: 'number',
            as: 'int',
            required: true,
            defaultValue: '0',
          },
          {
            name: `${p}.employees.household`,
            label: 'Household',
            kind: 'number',
            as: 'int',
            required: true,
            defaultValue: '0',
          },
          {
            name: `${p}.employees.other`,
            label: 'Other',
            kind: 'number',
            as: 'int',
            required: true,
            defaultValue: '0',
          },
        ],
        [
          {
            name: `${p}.firstWagesDate`,
            label: 'First date wages are paid',
            kind: 'date',
            hint: 'Only when you expect employees.',
          },
        ],
      ],
    },
    {
      legend: 'EIN: IRS questions',
      intro: 'Check any that apply to the business.',
      rows: [
        [
          {
            name: `${p}.irsQuestions.ownsHeavyHighwayVehicle`,
            label: 'Owns a highway vehicle of 55,000 lb or more',
            kind: 'checkbox',
            as: 'bool',
          },
        ],
        [
          {
            name: `${p}.irsQuestions.involvesGambling`,
            label: 'Involves gambling or wagering',
            kind: 'checkbox',
            as: 'bool',
          },
        ],
        [
          {
            name: `${p}.irsQuestions.filesExciseTaxForm720`,
            label: 'Needs to file Form 720 (federal excise tax)',
            kind: 'checkbox',
            as: 'bool',
          },
        ],
        [
          {
            name: `${p}.irsQuestions.sellsAlcoholTobaccoOrFirearms`,
            label: 'Sells or makes alcohol, tobacco or firearms',
            kind: 'checkbox',
            as: 'bool',
          },
        ],
      ],
    },
  ];
}

/** Card fields of in-app checkout; never part of the order body. */
export const CARD_SECTION: Section = {
  legend: 'Payment',
  rows: [
    [{ name: 'card.name', label: 'Name on card', kind: 'text', required: true, autocomplete: 'cc-name' }],
    [
      {
        name: 'card.number',
        label: 'Card number',
        kind: 'text',
        required: true,
        autocomplete: 'cc-number',
        inputmode: 'numeric',
        placeholder: '1234 1234 1234 1234',
      },
    ],
    [
      {
        name: 'card.exp',
        label: 'Expiry (MM/YY)',
        kind: 'text',
        required: true,
        autocomplete: 'cc-exp',
        placeholder: 'MM/YY',
        inputmode: 'numeric',
      },
      {
        name: 'card.cvc',
        label: 'Security code',
        kind: 'text',
        required: true,
        autocomplete: 'cc-csc',
        inputmode: 'numeric',
        placeholder: 'CVC',
      },
    ],
  ],
};
