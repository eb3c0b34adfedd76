/** The API fee field (dollars) -> its state_fees column (cents). */
export const FEE_COLUMNS = {
  llcFormation: 'llc_formation_cents',
  corpFormation: 'corp_formation_cents',
  llcForeignQualification: 'llc_foreign_cents',
  corpForeignQualification: 'corp_foreign_cents',
  llcAnnualReport: 'llc_annual_report_cents',
  corpAnnualReport: 'corp_annual_report_cents',
  expeditedFormation: 'expedited_formation_cents',
} as const;

/** A fee field of the operator API and CLI (dollars), e.g. `llcFormation`. */
export type FeeField = keyof typeof FEE_COLUMNS;
/** Every fee field, in schedule order. */
export const FEE_FIELDS = Object.keys(FEE_COLUMNS) as FeeField[];
