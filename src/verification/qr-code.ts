import QRCode from 'qrcode';

/**
 * A QR code of a report's address as SVG markup. On the page (`screen`): error correction M (15 %)
 * with the standard's four-module quiet zone. In a PDF footer (`print`), where it must fit 15 mm:
 * correction L and a one-module zone inside the image (the page margin around it is white), which
 * keeps a reseller's longer address at version 4 (33 modules, 0.4 mm each): phones and zbarimg at
 * 150 dpi read it, where M with four modules (45 across) was not read at 150 dpi.
 */
export function qrSvg(text: string, medium: 'screen' | 'print' = 'screen'): Promise<string> {
  return QRCode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: medium === 'print' ? 'L' : 'M',
    margin: medium === 'print' ? 1 : 4,
    color: { dark: '#000000', light: '#ffffff' },
  });
}
