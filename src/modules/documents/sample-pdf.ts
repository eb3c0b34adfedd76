import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

/** What a generated test document shows. `date` is 'YYYY-MM-DD'. */
export interface SamplePdfContent {
  title: string;
  companyName: string;
  orderId: string | null;
  date: string;
}

/**
 * A small, real one-page PDF (US Letter) standing in for a state-issued document in the test environment
 * (DOC-4): title, company legal name, order id, date, and a line saying it was filed nowhere.
 * @returns the PDF bytes (they start with `%PDF-`).
 */
export async function makeSamplePdf(c: SamplePdfContent): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  pdf.setTitle(`${c.title} - ${winAnsi(c.companyName)}`);
  pdf.setProducer('Filing Compliance Service (test environment)');
  pdf.setCreationDate(new Date(`${c.date}T12:00:00Z`));
  const page = pdf.addPage([612, 792]);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const grey = rgb(0.35, 0.35, 0.35);
  page.drawText(winAnsi(c.title), { x: 72, y: 700, size: 22, font: bold });
  const lines: Array<[string, string]> = [
    ['Company', c.companyName],
    ['Order', c.orderId ?? '-'],
    ['Date', c.date],
  ];
  lines.forEach(([label, value], i) => {
    page.drawText(`${label}:`, { x: 72, y: 650 - i * 22, size: 12, font: bold });
    page.drawText(winAnsi(value).slice(0, 80), { x: 160, y: 650 - i * 22, size: 12, font: regular });
  });
  page.drawText('TEST DOCUMENT - generated in the test environment; not filed with any state or agency.', {
    x: 72,
    y: 520,
    size: 10,
    font: regular,
    color: grey,
  });
  return pdf.save();
}

// The standard fonts encode WinAnsi only; anything else (CJK, emoji) is shown as '?'.
function winAnsi(text: string): string {
  return text.replace(/[^\x20-\x7E\xA0-\xFF]/g, '?');
}
