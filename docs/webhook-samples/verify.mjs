// Checks a vinhistory webhook: node verify.mjs (reads the body on stdin; the header and secret from the environment).
import { createHmac, timingSafeEqual } from 'node:crypto';

export function verifyVinhistorySignature(header, rawBody, secret, toleranceSeconds = 300) {
  const parts = header.split(',').map((part) => part.split('=', 2));
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  const signatures = parts.filter(([key]) => key === 'v1').map(([, value]) => value);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  return signatures.some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let body = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) body += chunk;
  const ok = verifyVinhistorySignature(process.env.SIGNATURE, body, process.env.WEBHOOK_SECRET);
  console.log(ok ? 'valid' : 'invalid');
}
