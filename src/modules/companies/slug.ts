/** Longest slug base; long legal names are cut at a word boundary where possible. */
const MAX_BASE = 60;

/**
 * The readable slug base of a legal name: ASCII kebab case, accents folded, '&' read as 'and'
 * ("Acme Holdings, LLC" -> "acme-holdings-llc"). Never contains '_', so a slug can never look like an
 * id (`comp_…`); an empty result (a name of symbols only) becomes 'company'.
 */
export function slugBase(legalName: string): string {
  const kebab = legalName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (!kebab) return 'company';
  if (kebab.length <= MAX_BASE) return kebab;
  const cut = kebab.slice(0, MAX_BASE);
  const lastDash = cut.lastIndexOf('-');
  return (lastDash > MAX_BASE / 2 ? cut.slice(0, lastDash) : cut).replace(/-+$/, '');
}

/**
 * The first free slug: `base` when untaken, else `base-N` with N one more than the highest taken suffix
 * (starting at 2). @param taken slugs of the tenant equal to base or base-<digits>.
 */
export function nextFreeSlug(base: string, taken: string[]): string {
  if (!taken.includes(base)) return base;
  let max = 1;
  for (const s of taken) {
    const n = Number(s.slice(base.length + 1));
    if (s.startsWith(`${base}-`) && Number.isSafeInteger(n) && n > max) max = n;
  }
  return `${base}-${max + 1}`;
}
