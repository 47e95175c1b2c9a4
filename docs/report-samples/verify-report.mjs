// Checks a vinhistory report: node verify-report.mjs <report link or saved .json file> <service URL>
// Prints "genuine <digest>" and exits 0, or "not genuine: <why>" and exits 1. Needs jose (npm install jose).
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { compactVerify, createRemoteJWKSet } from 'jose';

const [source, service] = process.argv.slice(2);
if (!source || !service) {
  console.error('usage: node verify-report.mjs <report link or saved .json file> <service URL, e.g. https://vinhistory.example>');
  process.exit(2);
}

async function envelopeOf(source) {
  if (!/^https?:\/\//.test(source)) return JSON.parse(await readFile(source, 'utf8'));
  // The signed snapshot is the report's address with .json (a reseller's address works too).
  const url = new URL(source);
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.replace(/\.(pdf|json)$/, '') + '.json';
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

try {
  const envelope = await envelopeOf(source);
  // The keys come from the service you trust, never from the report itself.
  const issuer = new URL(service).origin;
  const keys = createRemoteJWKSet(new URL('/.well-known/jwks.json', issuer));
  const { payload, protectedHeader } = await compactVerify(envelope.signature, keys, { algorithms: ['EdDSA'] });
  if (protectedHeader.iss !== issuer) throw new Error(`signed by ${protectedHeader.iss}, not ${issuer}`);
  // The signature covers the payload's bytes; the envelope's report must say exactly the same.
  const signed = JSON.parse(new TextDecoder().decode(payload));
  if (!isDeepStrictEqual(signed, envelope.report)) throw new Error('the report differs from what was signed');
  console.log(`genuine ${createHash('sha256').update(payload).digest('hex').slice(0, 16)}`);
} catch (error) {
  console.log(`not genuine: ${error.message}`);
  process.exit(1);
}
