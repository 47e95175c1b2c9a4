import type { PDFDocument } from 'pdf-lib';

/**
 * pdf-lib, loaded when a PDF is first stamped or read: loading it took about half a second of CPU
 * at the start of every process that builds the services (the server, and every command, such as
 * `vinhistory import`: docs/benchmarks.md, "Re-imports"), most of which never touch a PDF.
 */
const pdfLib = () => import('pdf-lib');

/** What a report PDF carries in its document information, for /verify to find the report by. */
export interface PdfStamp {
  reportId: string;
  reportUrl: string;
  digest: string;
}

// Neutral: a white-label report's PDF carries nothing of ours, not even here.
const KEYWORD = 'verifiable-report';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * Writes the report's id, address and short digest into the PDF's document information (Subject and
 * Keywords): a reader's viewer shows them under the document's properties, and /verify reads them
 * back from an upload without rendering the pages. pdf-lib rewrites the file; the pages stay as printed.
 */
export async function stampPdf(pdf: Uint8Array, stamp: PdfStamp): Promise<Buffer> {
  const { PDFDocument } = await pdfLib();
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  doc.setSubject(stamp.reportUrl);
  doc.setKeywords([KEYWORD, `report:${stamp.reportId}`, `sha256:${stamp.digest}`]);
  return Buffer.from(await doc.save());
}

/** The stamp of a report PDF; null when the file is not a PDF or carries none. */
export async function readPdfStamp(bytes: Uint8Array): Promise<PdfStamp | null> {
  const { PDFDocument } = await pdfLib();
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, { updateMetadata: false, ignoreEncryption: true, throwOnInvalidObject: false });
  } catch {
    return null;
  }
  const words = (doc.getKeywords() ?? '').split(/\s+/);
  if (!words.includes(KEYWORD)) return null;
  const reportId = words.find((word) => word.startsWith('report:'))?.slice('report:'.length) ?? '';
  const digest = words.find((word) => word.startsWith('sha256:'))?.slice('sha256:'.length) ?? '';
  if (!UUID.test(reportId)) return null;
  return { reportId, reportUrl: doc.getSubject() ?? '', digest };
}

/** Whether the bytes start as a PDF does (a quick refusal of other uploads before parsing). */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-';
}
