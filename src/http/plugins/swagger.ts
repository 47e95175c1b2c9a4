import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { codesSentence, ErrorSchema } from '../api/schemas.ts';
import { ReportSchema } from '../../domain/report.ts';
import { LotSchema } from '../../domain/lot.ts';

type Json = { [key: string]: unknown };

/** Who a document is for: its operations (by path prefix), its token, its tags. */
interface Audience {
  pathPrefix: string;
  /** Operations of the audience outside its prefix (the public report JSON and keys of verifiable reports). */
  alsoPaths?: readonly string[];
  title: string;
  description: string;
  securityScheme: 'apiToken' | 'operatorToken';
  tags: { name: string; description: string }[];
}

/**
 * The two answers of a request no operation takes (http/plugins/error-handler.ts), told in the
 * document's description: no operation can refer to them, and a component nothing refers to is
 * lint (Redocly's and Spectral's unused-component rules).
 */
const UNROUTED_ANSWERS = (prefix: string) =>
  `A documented path asked with another method (QUERY and HEAD included) answers 405 with \`Allow\` (the methods it answers) and an \`Error\` body, ${codesSentence(['METHOD_NOT_ALLOWED']).toLowerCase()} ` +
  `An unknown path under ${prefix} answers a JSON 404 \`Error\`, ${codesSentence(['ROUTE_NOT_FOUND']).toLowerCase()}`;

const CUSTOMERS: Audience = {
  pathPrefix: '/api/',
  title: 'vinhistory API',
  description:
    'Vehicle auction history by VIN: every known auction lot (damage, odometer, sale price, repair cost, retail value, location, photos) and a shareable report page.\n\n' +
    'Send your API token in the Authorization header, bare (`Authorization: vh_live_...`) or with the Bearer scheme. ' +
    'A sandbox token (`vh_test_...`) searches only the documented sandbox catalogue of test vehicles, answers exactly as a live token does, and is never counted.\n\n' +
    'Every answer carries `X-Request-Id`; quote it to support. ' +
    UNROUTED_ANSWERS('/api/') +
    '\n\nEvery error body is an `Error`: a `code` of a closed set (the schema lists them; each response names the ones it may carry) and a `message`; only the 401 has no code.',
  securityScheme: 'apiToken',
  tags: [
    { name: 'Search', description: 'Look up the auction history of a VIN, or of the vehicle of an auction lot. Counted against the monthly quota.' },
    { name: 'Catalogue and market', description: 'Search lots by what they are, and what similar cars sold for. Counted against the monthly quota like a search; live tokens only.' },
    { name: 'Account', description: "The account's plan and usage. Free: not counted." },
    { name: 'Watches', description: 'VINs and lots to get webhook events for (lot.created, lot.updated). Not counted as searches; the plan limits how many.' },
    { name: 'Webhooks', description: "The account's webhook endpoint, its signing secret, test pings and the log of every delivery attempt. See docs/webhooks.md." },
    { name: 'Verification', description: "A report's signed snapshot and the public keys that check it: free, no token. See docs/reports.md." },
    { name: 'Batches', description: "Up to 1,000 searches or lookups by lot in one request, run in the background within half the account's rate; each item counted like a search." },
  ],
  alsoPaths: ['/report/{id}.json', '/.well-known/jwks.json'],
};

const OPERATORS: Audience = {
  pathPrefix: '/admin/',
  title: 'vinhistory operators API',
  description:
    "The operator's API: loading auction lots, and running the customers (accounts, plans, tokens, invoices, the audit log). Not for customers: every operation needs an operator token (`vh_op_...`, made with `vinhistory operator-tokens create`).\n\n" +
    'Every answer carries `X-Request-Id`. ' +
    UNROUTED_ANSWERS('/admin/') +
    '\n\nEvery error body is an `Error`: a `code` of a closed set and a `message`; only the 401 has no code.',
  securityScheme: 'operatorToken',
  tags: [{ name: 'Admin', description: "Loading auction lots from scrapers and partners; running the customers: accounts, plans, tokens, invoices and the operators' audit log (docs/operators.md)." }],
};

const SECURITY_SCHEMES = {
  apiToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Your API token, e.g. `vh_live_...` (or a sandbox token, `vh_test_...`), optionally preceded by `Bearer `.',
  },
  operatorToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'An operator token (`vh_op_...`, made with `vinhistory operator-tokens create`), optionally preceded by `Bearer `. Customer tokens are refused.',
  },
};

/** Set on every answer by app.ts (the client's own id when it sent one, else a new UUID). */
const REQUEST_ID_HEADER = {
  description: 'The id of this request in the service logs; quote it to support. Echoes the request\'s X-Request-Id when one was sent.',
  schema: { type: 'string' },
};

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The names of the component schemas a value refers to, directly or through other schemas. */
function referencedSchemas(roots: unknown[], schemas: Json): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isObject(value)) return;
    const ref = value.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (!found.has(name)) {
        found.add(name);
        visit(schemas[name]);
      }
    }
    Object.values(value).forEach(visit);
  };
  roots.forEach(visit);
  return found;
}

/** An operation's responses, each with the X-Request-Id header that every answer carries. */
function withRequestId(operation: Json): Json {
  const responses = isObject(operation.responses) ? operation.responses : {};
  return {
    ...operation,
    responses: Object.fromEntries(
      Object.entries(responses).map(([status, response]) => {
        const fields = isObject(response) ? response : {};
        const headers = isObject(fields.headers) ? fields.headers : {};
        return [status, { ...fields, headers: { ...headers, 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } } }];
      }),
    ),
  };
}

/**
 * One audience's document out of the one @fastify/swagger generates from every route: its
 * operations, the schemas they refer to, its security scheme and tags. Customers never see the
 * operators' API in their document or reference page.
 */
export function documentFor(full: Json, audience: Audience, publicBaseUrl: string): Json {
  const allPaths = isObject(full.paths) ? full.paths : {};
  const paths = Object.fromEntries(
    Object.entries(allPaths)
      .filter(([path]) => path.startsWith(audience.pathPrefix) || audience.alsoPaths?.includes(path))
      .map(([path, item]) => [
        path,
        Object.fromEntries(Object.entries(isObject(item) ? item : {}).map(([method, operation]) => [method, isObject(operation) ? withRequestId(operation) : operation])),
      ]),
  );
  const components = isObject(full.components) ? full.components : {};
  const allSchemas = isObject(components.schemas) ? components.schemas : {};
  const used = referencedSchemas([paths], allSchemas);
  return {
    openapi: full.openapi,
    info: {
      title: audience.title,
      version: '1.0.0',
      description: audience.description,
      contact: { name: 'vinhistory', url: publicBaseUrl },
      license: { name: 'Proprietary: use under the terms of your vinhistory plan', identifier: 'LicenseRef-vinhistory-proprietary' },
    },
    servers: full.servers,
    tags: audience.tags,
    paths,
    components: {
      securitySchemes: { [audience.securityScheme]: SECURITY_SCHEMES[audience.securityScheme] },
      schemas: Object.fromEntries(Object.entries(allSchemas).filter(([name]) => used.has(name))),
      headers: { 'X-Request-Id': REQUEST_ID_HEADER },
    },
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The customers' OpenAPI document (customer operations only), for its reference page at /docs. */
    customerOpenApi(): { [key: string]: unknown };
  }
}

/**
 * OpenAPI 3.1 generated from the route schemas, as two documents: the customers' at
 * /api/v1/openapi.json, with its reference page at /docs (src/web/site/docs.ts, in the site's
 * layout), and the operators' at /admin/v1/openapi.json.
 */
export default fp(
  async (app) => {
    app.addSchema(LotSchema);
    app.addSchema(ReportSchema);
    app.addSchema(ErrorSchema);
    const { publicBaseUrl } = app.services.config;
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: CUSTOMERS.title, version: '1.0.0' },
        servers: [{ url: publicBaseUrl }],
        components: { securitySchemes: SECURITY_SCHEMES as never },
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    });
    // Built once, on first use: the routes are all known by then and do not change.
    const documents = new Map<Audience, Json>();
    const document = (audience: Audience): Json => {
      let built = documents.get(audience);
      if (!built) documents.set(audience, (built = documentFor(app.swagger() as unknown as Json, audience, publicBaseUrl)));
      return built;
    };
    app.decorate('customerOpenApi', () => document(CUSTOMERS));
    app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => document(CUSTOMERS));
    app.get('/admin/v1/openapi.json', { schema: { hide: true } }, async () => document(OPERATORS));
  },
  { name: 'swagger', dependencies: ['services'] },
);
