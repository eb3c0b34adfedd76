/**
 * One figure of a bench run. `ratio` is the figure over its baseline from the same run (higher is better for
 * throughput); `target` states the goal in words, and `pass` whether this run met it (null: no goal).
 */
export interface Figure {
  section: string;
  name: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number };
  target?: string;
  pass?: boolean | null;
}

const figures: Figure[] = [];

/** Records a figure for the final table (and prints it at once, so a long run shows progress). */
export function record(f: Figure): void {
  figures.push(f);
  process.stdout.write(
    `  ${f.section}: ${f.name} = ${fmt(f.value)} ${f.unit}${f.baseline ? ` (${ratioText(f)})` : ''}${verdict(f)}\n`,
  );
}

/** The figure over its baseline, e.g. 0.42 for 42 %. */
function ratio(f: Pick<Figure, 'value' | 'baseline'>): number | null {
  return f.baseline?.value ? f.value / f.baseline.value : null;
}

/** Prints every recorded figure as a table; @returns false when any figure missed its target. */
export function printReport(machine: string): boolean {
  const head = ['section', 'figure', 'value', 'baseline', 'ratio', 'target', 'met'];
  const rows = figures.map((f) => [
    f.section,
    f.name,
    `${fmt(f.value)} ${f.unit}`,
    f.baseline ? `${f.baseline.name} ${fmt(f.baseline.value)}` : '',
    ratio(f) === null ? '' : `${(ratio(f)! * 100).toFixed(1)} %`,
    f.target ?? '',
    f.pass === undefined || f.pass === null ? '' : f.pass ? 'yes' : 'NO',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(
    `\nMachine: ${machine}\n\n${line(head)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n\n`,
  );
  return figures.every((f) => f.pass !== false);
}

function ratioText(f: Figure): string {
  const r = ratio(f);
  return r === null ? '' : `${(r * 100).toFixed(1)} % of ${f.baseline!.name}`;
}

function verdict(f: Figure): string {
  if (f.pass === undefined || f.pass === null) return '';
  return f.pass ? ` [target ${f.target}: met]` : ` [target ${f.target}: MISSED]`;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v.toFixed(2);
}
