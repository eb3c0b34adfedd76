import { describe, expect, it } from 'vitest';
import { brandTheme, contrastRatio } from '../src/modules/branding/theme.js';

/* DASH-3: whatever colours an organization picks, the dashboard's text keeps WCAG AA contrast (4.5:1). */

const hex = (n: number) => n.toString(16).padStart(2, '0');

describe('brandTheme', () => {
  it('keeps text on the brand and accent colours at 4.5:1 or more, for every colour', () => {
    const failures: string[] = [];
    for (let r = 0; r < 256; r += 17)
      for (let g = 0; g < 256; g += 17)
        for (let b = 0; b < 256; b += 17) {
          const colour = `#${hex(r)}${hex(g)}${hex(b)}`;
          const theme = brandTheme({ primaryColor: colour, accentColor: colour });
          if (contrastRatio(theme.primary, theme.onPrimary) < 4.5) failures.push(`${colour} on ${theme.onPrimary}`);
          if (contrastRatio(theme.link, '#ffffff') < 4.5) failures.push(`link ${theme.link}`);
        }
    expect(failures).toEqual([]);
  });

  it('puts black text on a mid grey, where the near-black falls short', () => {
    expect(contrastRatio('#808080', '#111827')).toBeLessThan(4.5);
    expect(brandTheme({ primaryColor: '#808080' }).onPrimary).toBe('#000000');
    expect(brandTheme({ primaryColor: '#1f3a5f' }).onPrimary).toBe('#ffffff');
    expect(brandTheme({ primaryColor: '#f2c744' }).onPrimary).toBe('#111827');
  });
});
