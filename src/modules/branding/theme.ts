/**
 * Organization branding turned into colours that keep WCAG AA contrast whatever the integrator picks
 * (DASH-3: pages pass an accessibility check). Colours are '#rrggbb'.
 */
export interface Theme {
  /** Brand colour: header and primary buttons. */
  primary: string;
  /** Text on `primary`: black or white, whichever contrasts more. */
  onPrimary: string;
  /** Accent colour: highlights and the selected state. */
  accent: string;
  onAccent: string;
  /** Links and outlines on white: `primary` darkened until it reaches 4.5:1 against white. */
  link: string;
}

/** Primary colour (#rrggbb) when the organization sets no valid one. */
const DEFAULT_PRIMARY = '#1f3a5f';
/** Accent colour (#rrggbb) when the organization sets no valid one. */
const DEFAULT_ACCENT = '#0f766e';
const HEX = /^#[0-9a-fA-F]{6}$/;

/** Builds the theme from `branding.primaryColor` / `accentColor` (invalid or missing: the defaults). */
export function brandTheme(branding: { primaryColor?: string | null; accentColor?: string | null }): Theme {
  const primary = HEX.test(branding.primaryColor ?? '') ? branding.primaryColor!.toLowerCase() : DEFAULT_PRIMARY;
  const accent = HEX.test(branding.accentColor ?? '') ? branding.accentColor!.toLowerCase() : DEFAULT_ACCENT;
  return {
    primary,
    onPrimary: textOn(primary),
    accent,
    onAccent: textOn(accent),
    link: darkenUntil(primary, '#ffffff', 4.5),
  };
}

/** WCAG contrast ratio of two '#rrggbb' colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Text on `bg`: white or near-black, whichever contrasts more; pure black where near-black falls short of 4.5:1
 * (mid greys such as #808080), since white or black always reaches it.
 */
function textOn(bg: string): string {
  const dark = contrastRatio(bg, '#111827') >= 4.5 ? '#111827' : '#000000';
  return contrastRatio(bg, '#ffffff') >= contrastRatio(bg, dark) ? '#ffffff' : dark;
}

function darkenUntil(color: string, against: string, ratio: number): string {
  let rgb = channels(color);
  for (let i = 0; i < 20 && contrastRatio(toHex(rgb), against) < ratio; i++) rgb = rgb.map((c) => Math.round(c * 0.85));
  return toHex(rgb);
}

function channels(hex: string): number[] {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

function toHex(rgb: number[]): string {
  return `#${rgb.map((c) => c.toString(16).padStart(2, '0')).join('')}`;
}

function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
