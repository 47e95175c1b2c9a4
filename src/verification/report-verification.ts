import { CompactSign, compactVerify, decodeProtectedHeader } from 'jose';
import { isReportId } from '../domain/ids.ts';
import type { Report } from '../domain/report.ts';
import type { BrandService } from '../accounts/brand-service.ts';
import type { ReportService } from '../search/report-service.ts';
import type { ReportSignaturesRepository, StoredReportSignature } from '../storage/repositories/report-signatures-repository.ts';
import type { ReportsRepository } from '../storage/repositories/reports-repository.ts';
import { shortDigest } from './digest.ts';
import { looksLikePdf, readPdfStamp, stampPdf } from './pdf-stamp.ts';
import { qrSvg } from './qr-code.ts';
import { SIGNING_ALG, type SigningKeys } from './signing-keys.ts';

/** A report's signed snapshot: the bytes signed, the JWS over them, and what the page and PDF show of it. */
export interface SignedReport {
  reportId: string;
  /** The UTF-8 JSON of the Report the JWS signs, byte for byte. */
  payload: string;
  issuer: string;
  issuedAt: string;
  signature: string;
  keyId: string;
  /** The first 16 hex digits of SHA-256 of the payload. */
  digest: string;
  /** The report's own address (the brand's report address where it has one): what its QR code carries. */
  reportUrl: string;
}

/** What /verify found. */
export type VerificationOutcome =
  | { kind: 'genuine'; signed: SignedReport; report: Report; via: 'link' | 'pdf' }
  /** A PDF naming a report of ours whose digest is not the one we signed: the file was edited. */
  | { kind: 'changed'; signed: SignedReport; report: Report; claimedDigest: string }
  /** A stored signature that does not verify under the key it names: the stored snapshot was altered. */
  | { kind: 'signature_invalid'; reportId: string }
  | { kind: 'unknown_report'; reportId: string }
  | { kind: 'not_a_report_link' }
  | { kind: 'not_a_pdf' }
  | { kind: 'no_report_in_pdf' };

/** Bytes /verify reads of an uploaded PDF: a report PDF with its photos is a few MiB. */
export const MAX_VERIFY_PDF_BYTES = 20 * 1024 * 1024;
/** Characters of a pasted link /verify reads. */
export const MAX_VERIFY_LINK_LENGTH = 2048;

/** A report's path, of its page, PDF or JSON (the query and fragment are not part of a URL's pathname). */
const REPORT_PATH = /\/report\/([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})(?:\.pdf|\.json)?\/?$/i;

function payloadOf(signature: string): string {
  return Buffer.from(signature.split('.')[1] ?? '', 'base64url').toString('utf8');
}

/** The report id of a pasted report link (any host: a reseller's address verifies too), or of a bare id. */
export function reportIdOfLink(text: string): string | null {
  const trimmed = text.trim();
  if (isReportId(trimmed.toLowerCase())) return trimmed.toLowerCase();
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const match = REPORT_PATH.exec(url.pathname);
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * Verifiable reports (contract, "Verifiable reports"): each report's payload is signed the first
 * time anything asks for it (its JSON, its page, its PDF), never in the search's commit, and the
 * signature is kept, so the signed bytes of a report never change afterwards. Verification reads
 * the kept signature and checks it again under the key it names.
 */
export class ReportVerification {
  constructor(
    private readonly options: {
      keys: SigningKeys;
      reports: ReportService;
      reportsRepo: ReportsRepository;
      repo: ReportSignaturesRepository;
      brands: BrandService;
      /** The issuer the JWS names: the service itself (PUBLIC_BASE_URL), whoever's brand the report shows. */
      issuer: string;
      now?: () => Date;
    },
  ) {}

  /** The signed snapshot of a report, signed now if it has not been yet; undefined for an unknown report. */
  async signed(reportId: string): Promise<SignedReport | undefined> {
    if (!isReportId(reportId)) return undefined;
    const kept = await this.options.repo.findSignature(reportId);
    if (kept) return this.present(kept);
    const report = await this.options.reports.find(reportId);
    const lots = report && (await this.options.reportsRepo.lotsJsonOf(reportId));
    if (!report || lots === undefined) return undefined;
    const brand = await this.options.brands.forReport(report);
    const reportUrl = `${brand?.reportBaseUrl ?? this.options.issuer}/report/${report.id}`;
    // The Report as the search answered it: ReportSchema's fields in order, the lots' stored JSON text as it was spliced into the answer.
    const payload = `{"status":"success","vin":${JSON.stringify(report.vin)},"origin_timestamp":${JSON.stringify(report.createdAt)},"lots":${lots},"report_url":${JSON.stringify(reportUrl)}}`;
    const { kid, key } = await this.options.keys.signer();
    const issuedAt = (this.options.now?.() ?? new Date()).toISOString();
    const signature = await new CompactSign(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'JOSE', iss: this.options.issuer, iat: Math.floor(Date.parse(issuedAt) / 1000) })
      .sign(key);
    return this.present(await this.options.repo.keepSignature({ reportId, keyId: kid, issuer: this.options.issuer, issuedAt, signature }));
  }

  private present(kept: StoredReportSignature): SignedReport {
    const payload = payloadOf(kept.signature);
    const reportUrl = (JSON.parse(payload) as Report).report_url;
    return { reportId: kept.reportId, payload, issuer: kept.issuer, issuedAt: kept.issuedAt, signature: kept.signature, keyId: kept.keyId, digest: shortDigest(payload), reportUrl };
  }

  /** The body of GET /report/<id>.json: the payload spliced in as signed, so `report` is those very bytes. */
  envelopeJson(signed: SignedReport): string {
    return `{"report":${signed.payload},"issued_at":${JSON.stringify(signed.issuedAt)},"issuer":${JSON.stringify(signed.issuer)},"signature":${JSON.stringify(signed.signature)}}`;
  }

  /** The QR code of the report's own address, as SVG markup for the page or a PDF footer. */
  qrCode(signed: SignedReport, medium: 'screen' | 'print' = 'screen'): Promise<string> {
    return qrSvg(signed.reportUrl, medium);
  }

  /** The JWK Set of every signing key, current and earlier. */
  jwks() {
    return this.options.keys.jwks();
  }

  /** A printed report PDF with the report's id, address and digest in its document information, for /verify. */
  stampPdf(pdf: Uint8Array, signed: SignedReport): Promise<Buffer> {
    return stampPdf(pdf, { reportId: signed.reportId, reportUrl: signed.reportUrl, digest: signed.digest });
  }

  /** Whether a pasted report link (or id) names a report this service signed, and what it said. */
  async verifyLink(text: string): Promise<VerificationOutcome> {
    const reportId = text.length <= MAX_VERIFY_LINK_LENGTH ? reportIdOfLink(text) : null;
    if (!reportId) return { kind: 'not_a_report_link' };
    return this.verifyReport(reportId, 'link');
  }

  /** Whether an uploaded PDF is a report this service made: the report its stamp names, and the digest it carries. */
  async verifyPdf(bytes: Uint8Array): Promise<VerificationOutcome> {
    if (!looksLikePdf(bytes)) return { kind: 'not_a_pdf' };
    const stamp = await readPdfStamp(bytes);
    if (!stamp) return { kind: 'no_report_in_pdf' };
    const outcome = await this.verifyReport(stamp.reportId, 'pdf');
    if (outcome.kind === 'genuine' && outcome.signed.digest !== stamp.digest) {
      return { kind: 'changed', signed: outcome.signed, report: outcome.report, claimedDigest: stamp.digest };
    }
    return outcome;
  }

  private async verifyReport(reportId: string, via: 'link' | 'pdf'): Promise<VerificationOutcome> {
    const signed = await this.signed(reportId);
    if (!signed) return { kind: 'unknown_report', reportId };
    const report = await this.check(signed.signature);
    return report ? { kind: 'genuine', signed, report, via } : { kind: 'signature_invalid', reportId };
  }

  /** The report a compact JWS signs, when it verifies under the service's key it names; else null. */
  async check(signature: string): Promise<Report | null> {
    try {
      const { kid } = decodeProtectedHeader(signature);
      const key = typeof kid === 'string' ? await this.options.keys.publicKey(kid) : null;
      if (!key) return null;
      const { payload } = await compactVerify(signature, key, { algorithms: [SIGNING_ALG] });
      return JSON.parse(new TextDecoder().decode(payload)) as Report;
    } catch {
      return null;
    }
  }
}
