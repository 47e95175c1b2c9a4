import type { ReportLanguage } from '../../domain/report-language.ts';
import type { ReportVerification, SignedReport } from '../../verification/report-verification.ts';
import { translatorFor } from './i18n.ts';

/** What the report views' verification partial shows (views/report/verification.eta). */
export interface VerificationView {
  qrSvg: string;
  digest: string;
  /** The /verify page; null on a branded page, which names no address of ours. */
  verifyHref: string | null;
  jsonHref: string;
  text: { title: string; text: string; qr: string; digest: string; check: string; json: string };
}

const KEYS = ['title', 'text', 'qr', 'digest', 'check', 'json'] as const;

export async function verificationView(
  verification: ReportVerification,
  signed: SignedReport,
  language: ReportLanguage,
  hrefs: { verifyHref: string | null; jsonHref: string },
  medium: 'screen' | 'print' = 'screen',
): Promise<VerificationView> {
  const t = translatorFor(language);
  return {
    qrSvg: await verification.qrCode(signed, medium),
    digest: signed.digest,
    ...hrefs,
    text: Object.fromEntries(KEYS.map((key) => [key, t.t(`verify.${key}`)])) as VerificationView['text'],
  };
}
