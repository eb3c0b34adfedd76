import type { FieldError } from '../../lib/errors.js';
import { luhnValid, normalizeCardNumber, type CardDetails } from '../payments/payment-provider.js';
import type { FieldDef, Section } from './checkout.fields.js';

/** A submitted form: field name -> string value (checkboxes absent when unchecked). */
export type FormValues = Record<string, string>;

/** Flattens the fields of sections. */
function fieldsOf(sections: Section[]): FieldDef[] {
  return sections.flatMap((s) => s.rows.flat());
}

/**
 * Builds the part of an order body the fields describe: each value is set at its dotted path, typed by
 * `as` ('int' -> number, 'bool' -> checkbox state); empty optional text is left out so the API rules see
 * "missing", not "blank". Integer path segments make arrays (`officers.0.title`).
 */
export function bodyFromForm(sections: Section[], form: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fieldsOf(sections)) {
    const raw = (form[f.name] ?? '').trim();
    if (f.as === 'bool') {
      setPath(body, f.name, raw === 'on' || raw === 'true');
      continue;
    }
    if (raw === '') continue;
    setPath(body, f.name, f.as === 'int' && /^-?\d+$/.test(raw) ? Number(raw) : raw);
  }
  return body;
}

/** Sets `value` at a dotted path, creating objects (or arrays for numeric segments) on the way. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  // Arrays are indexed by their digit keys like objects, so one record view serves both.
  let node = target;
  keys.slice(0, -1).forEach((key, i) => {
    if (node[key] === undefined) node[key] = /^\d+$/.test(keys[i + 1]!) ? [] : {};
    node = node[key] as Record<string, unknown>;
  });
  node[keys[keys.length - 1]!] = value;
}

/** Reads a value at a dotted path, or undefined. */
export function getPath(source: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node == null ? undefined : (node as Record<string, unknown>)[key]), source);
}

/**
 * Validates the card fields (card.name, card.number, card.exp MM/YY, card.cvc) before any provider call.
 * @returns the card, or field errors naming the inputs.
 */
export function readCard(form: FormValues, now = new Date()): { card: CardDetails | null; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const name = (form['card.name'] ?? '').trim();
  const number = normalizeCardNumber(form['card.number'] ?? '');
  const exp = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(form['card.exp'] ?? '');
  const cvc = (form['card.cvc'] ?? '').trim();
  if (!name) errors.push({ field: 'card.name', message: 'Enter the name on the card' });
  if (!luhnValid(number)) errors.push({ field: 'card.number', message: 'Enter a valid card number' });
  let expMonth = 0;
  let expYear = 0;
  if (exp) {
    expMonth = Number(exp[1]);
    expYear = exp[2].length === 2 ? 2000 + Number(exp[2]) : Number(exp[2]);
  }
  const endOfMonth = new Date(Date.UTC(expYear, expMonth, 1));
  if (!exp || expMonth < 1 || expMonth > 12)
    errors.push({ field: 'card.exp', message: 'Enter the expiry date as MM/YY' });
  else if (endOfMonth <= now) errors.push({ field: 'card.exp', message: 'This card has expired' });
  if (!/^\d{3,4}$/.test(cvc)) errors.push({ field: 'card.cvc', message: 'Enter the 3 or 4 digit security code' });
  return { card: errors.length ? null : { name, number, expMonth, expYear, cvc }, errors };
}

/**
 * Values to show again after a failed submit: everything except the card number and security code, and the EIN
 * responsible party's tax id, which no page ever sends back (ORD-EIN-6).
 */
export function redisplayValues(form: FormValues): FormValues {
  const {
    'card.number': _n,
    'card.cvc': _c,
    'ein.responsibleParty.taxId': _tax,
    _csrf: _x,
    _checkout: _k,
    _total: _t,
    ...rest
  } = form;
  return rest;
}

/** Sections as the form templates render them: each field with its input id, value to show and error. */
export function presentSections(sections: Section[], values: FormValues, errors: FieldError[]) {
  const errorOf = new Map(errors.map((e) => [e.field, e.message]));
  return sections.map((s) => ({
    ...s,
    rows: s.rows.map((row) =>
      row.map((f) => ({
        ...f,
        id: `f-${f.name.replace(/\./g, '-')}`,
        value: values[f.name] ?? f.defaultValue ?? '',
        error: errorOf.get(f.name) ?? null,
      })),
    ),
  }));
}

/** Every error once for the summary at the top of a form, labelled with its input's label (and linked to it) when the form has that input. */
export function errorSummary(errors: FieldError[], sections: Section[]) {
  const labels = new Map(fieldsOf(sections).map((f) => [f.name, f.label]));
  return errors.map((e) => ({
    href: labels.has(e.field) ? `#f-${e.field.replace(/\./g, '-')}` : null,
    text: labels.has(e.field)
      ? `${labels.get(e.field)}: ${e.message}`
      : e.field
        ? `${e.field}: ${e.message}`
        : e.message,
  }));
}
