import type { EntityRule, StateRule } from './due-date-rules.js';
import type { Presence } from './obligation.js';

/** The rule a domestic or foreign entity follows: the domestic rule with the foreign overrides on top (CAL-2). */
export function effectiveRule(entry: StateRule, entityType: 'LLC' | 'CORP', presence: Presence): EntityRule {
  const base = entityType === 'LLC' ? entry.llc : entry.corporation;
  if (presence === 'domestic' || !base.foreign) return base;
  const { note: _note, ...overrides } = base.foreign;
  const merged = { ...base, ...overrides } as EntityRule;
  // A foreign-only report (Oklahoma corporations) inherits the domestic 'not_applicable' first report unless
  // the override names one; the data's default for a periodic report is the following calendar year.
  if (merged.frequency !== 'none' && merged.firstReport.rule === 'not_applicable' && !overrides.firstReport) {
    merged.firstReport = { rule: 'following_calendar_year' };
  }
  return merged;
}

const SOURCE_RANK: Record<string, number> = { official: 0, statute: 1, regulation: 2, legislative: 3 };
/** The official, statute or regulation source first; else the first one listed (CAL-15). */
export function bestSourceUrl(rule: EntityRule): string | null {
  const ranked = [...(rule.sources ?? [])].sort((a, b) => (SOURCE_RANK[a.kind] ?? 9) - (SOURCE_RANK[b.kind] ?? 9));
  return ranked[0]?.url ?? null;
}

/** The caveats a rule's dates carry (CAL-6, CAL-11, CAL-14), joined, at most 500 characters; null when none. */
export function notesFor(rule: EntityRule): string | null {
  const notes: string[] = [];
  if (rule.params?.dateAssignedByState)
    notes.push(
      'The state assigns the exact due date in the anniversary month; the date shown is the anniversary date.',
    );
  if (rule.ruleKind === 'anniversary_date' && typeof rule.params?.anchor === 'string')
    notes.push(`The anniversary is that of the ${rule.params.anchor}.`);
  if (rule.frequency === 'biennial' && rule.biennialCycle?.basis === 'state_assigned')
    notes.push(
      'Biennial: the state assigns odd or even filing years, so every year is shown; only one of two applies.',
    );
  const alt = rule.alternative as { condition?: string; note?: string } | null | undefined;
  if (alt) notes.push(`Alternative schedule not applied: ${alt.condition ?? alt.note ?? 'see the rule'}.`);
  return notes.length ? notes.join(' ').slice(0, 500) : null;
}
