import QRCode from 'qrcode';

/**
 * A QR code of a report's address as SVG markup, for the page and the PDF alike. Error correction M
 * (15 %) survives a crease or a smudge on paper; the quiet zone is the module-width margin the
 * standard asks for, drawn inside the SVG so that the surrounding layout cannot eat it.
 */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, color: { dark: '#000000', light: '#ffffff' } });
}
