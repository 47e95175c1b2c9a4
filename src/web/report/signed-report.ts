import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../errors.ts';
import { ReportSchema } from '../../domain/report.ts';
import { errorRef, retryAfterHeader } from '../../http/api/schemas.ts';
import { retryAfter } from '../../limits/limit-headers.ts';
import type { RateGuard } from '../../limits/guards.ts';

const SignedReportSchema = Type.Object(
  {
    report: Type.Ref(ReportSchema, { description: 'The Report as the search answered it: exactly the JSON the signature signs (its payload, decoded).' }),
    issued_at: Type.String({ format: 'date-time', description: 'When the service signed this report: the first time its page, PDF or JSON was asked for.' }),
    issuer: Type.String({ format: 'uri', description: "The service that signed it (its PUBLIC_BASE_URL), also for a white-label report shown at a reseller's address." }),
    signature: Type.String({
      pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      description: 'A compact JWS (RFC 7515): header `alg` EdDSA (Ed25519), `kid` of a key in /.well-known/jwks.json; its payload is the UTF-8 bytes of the JSON of `report`. docs/reports.md shows how to check it.',
    }),
  },
  { $id: 'SignedReport', title: 'SignedReport', additionalProperties: false },
);

const JwkSchema = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String({ description: 'The public key, base64url.' }),
    kid: Type.String({ description: 'The key id a signature names: the RFC 7638 thumbprint of the key.' }),
    alg: Type.Literal('EdDSA'),
    use: Type.Literal('sig'),
  },
  { $id: 'Jwk', title: 'Jwk' },
);

const JwkSetSchema = Type.Object(
  { keys: Type.Array(Type.Ref(JwkSchema), { description: 'Every key the service signs or has signed reports with, the current one first. A rotation adds a key and removes none.' }) },
  { $id: 'JwkSet', title: 'JwkSet' },
);

const NO_REPORT = 'No report has this id.';

/** Throws the 429 of an address past the guard's rate. */
async function withinRate(guard: RateGuard, ip: string): Promise<void> {
  const decision = await guard.consume(ip);
  if (!decision.allowed) {
    throw new ApiError('RATE_LIMITED', `Too many requests: at most ${guard.perSecond} a second from one address for report checks.`, { headers: { 'retry-after': retryAfter(decision.resetMs) } });
  }
}

/**
 * The signed snapshot of a report and the keys to check it (contract, "Verifiable reports"): free
 * and public like the report page, to anyone holding the link; the JSON is signed at its first need.
 */
const signedReportRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { verification, guards } = app.services;
  const limited = errorRef('RATE_LIMITED', `More than ${guards.reportVerifications.perSecond} report checks (signed JSON, keys, /verify) in one second from one address; see Retry-After.`, retryAfterHeader);
  app.addSchema(JwkSchema);
  app.addSchema(JwkSetSchema);
  app.addSchema(SignedReportSchema);

  app.get(
    '/report/:id.json',
    {
      schema: {
        tags: ['Verification'],
        summary: "A report's signed snapshot",
        description: 'The Report as the search answered it, with an Ed25519 compact JWS over its bytes. Free: no token, not counted; anyone holding the report link may read it.',
        operationId: 'signedReport',
        security: [],
        params: Type.Object({ id: Type.String({ maxLength: 80, description: 'The report id: the UUID at the end of report_url.', examples: ['0b9c3f5e-4f6a-4d8e-9a1b-2c3d4e5f6a7b'] }) }),
        response: {
          200: Type.Ref(SignedReportSchema, { description: 'The signed snapshot.' }),
          404: errorRef('REPORT_NOT_FOUND', NO_REPORT),
          429: limited,
          '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
        },
      },
    },
    async (request, reply) => {
      await withinRate(guards.reportVerifications, request.ip);
      const signed = await verification.signed(request.params.id);
      if (!signed) throw new ApiError('REPORT_NOT_FOUND', `${NO_REPORT} Check the link: the id is the UUID after /report/ in the report_url.`);
      // The payload is spliced in as it was signed, not serialised again (SignedReportSchema still documents it).
      const raw: FastifyReply = reply;
      return raw
        .type('application/json; charset=utf-8')
        .header('x-robots-tag', 'noindex, nofollow')
        .header('cache-control', 'private, max-age=300')
        .header('x-content-type-options', 'nosniff')
        .send(verification.envelopeJson(signed));
    },
  );

  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['Verification'],
        summary: 'The public keys that sign reports',
        description: 'A JWK Set (RFC 7517) of every Ed25519 key the service signs reports with, current and earlier: a report signed before a rotation still verifies. Free: no token.',
        operationId: 'jwks',
        security: [],
        response: {
          200: Type.Ref(JwkSetSchema, { description: 'The JWK Set.' }),
          429: limited,
          '5xx': errorRef('INTERNAL', 'A fault of the service. The message carries a request id and no internals.'),
        },
      },
    },
    async (request, reply) => {
      await withinRate(guards.reportVerifications, request.ip);
      // Short, so that a rotated key is seen soon; a verifier meeting an unknown kid fetches the set again (docs/reports.md).
      reply.header('cache-control', 'public, max-age=60').header('access-control-allow-origin', '*');
      return verification.jwks();
    },
  );
};

export default signedReportRoutes;
