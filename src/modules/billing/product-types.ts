/** The nine product types (PRICE-1), in catalogue order. */
export const PRODUCT_TYPES = [
  'ein',
  'expedited_formation',
  'formation_tier_1',
  'formation_tier_2',
  'formation_tier_3',
  'annual_report',
  'registered_agent',
  'foreign_qualification',
  'certificate_of_good_standing',
] as const;

/** One of PRODUCT_TYPES: the `type` of a price row and of the price catalogue. */
export type ProductType = (typeof PRODUCT_TYPES)[number];
