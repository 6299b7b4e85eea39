import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { getMetadataStorage } from 'class-validator';
import { tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, type TestApp } from '../../support/test-app';
import { isKnownValidator, validatorNames } from '../../../src/common/openapi/validation-schema';
import { allDocumentedCodes, documentedCodes, operations, response, type Doc, type Operation, type Schema } from './openapi.kit';

/**
 * Issue 15, item 1: the served OpenAPI document is what a client generator can trust. It lints
 * clean with Redocly's recommended rules; every field has its type, enumeration and format; every
 * operation lists its error statuses and codes with ErrorBody; and what the service answers to
 * requests every client can get wrong is among what the document says it answers.
 */

/** Warnings of the recommended ruleset this document keeps, each with why. Anything else fails. */
const ALLOWED_WARNINGS: { rule: string; at: RegExp; why: string }[] = [
  { rule: 'info-license', at: /^#\/info$/, why: 'the API is proprietary (package.json: UNLICENSED): there is no licence to name' },
  {
    rule: 'operation-4xx-response',
    at: /^#\/paths\/~1api~1v1~1health(~1ready)?\/get\/responses$/,
    why: 'health probes take no input and no credential: they answer 200, 503 or 500, never a 4xx',
  },
  {
    rule: 'operation-4xx-response',
    at: /^#\/paths\/~1api~1v1~1sso~1(logout~1)?callback\/get\/responses$/,
    why: "the OIDC callback and the return from an OP's sign-out are the identity provider's redirects: every failure, too, redirects (to /login?error=<code>, or to /)",
  },
  {
    rule: 'operation-2xx-response',
    at: /^#\/paths\/~1api~1v1~1sso~1(login~1|callback|logout~1callback|saml~1login~1|saml~1acs|saml~1slo~1)/,
    why: 'SSO browser navigations always answer 302 with Location (docs/api-conventions.md)',
  },
];

describe('the served OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;
  let ids: Record<string, string>;
  let agent: { id: string; token: string };
  let tech: string;

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    const fx = tenantFixture();
    ids = await t.seed(fx);
    const device = fx.devices!.find((d) => d.key === 'deviceA1')!;
    agent = { id: device.agentId!, token: device.agentToken! };
    tech = await t.token(ids.tech, { mfa: true });
    doc = (await (await fetch(`${t.baseUrl}/api/docs-json`)).json()) as Doc;
  });
  afterAll(() => t.close());

  const all = () => operations(doc);
  const resolve = (s: Schema | undefined): Schema | undefined => (s?.$ref ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s);

  it('lints with no error and no warning but those explained (Redocly, recommended rules)', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    const found = problems.map((p) => ({ severity: p.severity, rule: p.ruleId, at: p.location[0]?.pointer ?? '', message: p.message }));
    const errors = found.filter((p) => p.severity === 'error');
    const unexplained = found.filter((p) => p.severity !== 'error' && !ALLOWED_WARNINGS.some((a) => a.rule === p.rule && a.at.test(p.at)));
    expect(errors).toEqual([]);
    expect(unexplained).toEqual([]);
    // Each allowance is still needed: a fixed warning takes its allowance with it.
    for (const a of ALLOWED_WARNINGS) expect(found.some((p) => p.rule === a.rule && a.at.test(p.at))).toBe(true);
  });

  it('gives every schema field and parameter a type, an enumeration, a reference or alternatives, never a bare object', () => {
    const bare: string[] = [];
    const walk = (s: Schema | undefined, at: string) => {
      if (!s || typeof s !== 'object') return;
      const typed = s.type !== undefined || s.$ref || s.enum || s.allOf || s.oneOf || s.anyOf;
      // `{}` is deliberate: any JSON value (a script parameter's default, a custom field's value in an import).
      const anyValue = Object.keys(s).filter((k) => k !== 'description').length === 0;
      if (!typed && !anyValue) bare.push(`${at} has no type`);
      if (s.type === 'object' && !s.properties && s.additionalProperties === undefined && !s.allOf) bare.push(`${at} is a bare object`);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${at}.${k}`);
      if (s.items && Object.keys(s.items).length) walk(s.items, `${at}[]`);
      for (const [i, v] of (s.oneOf ?? []).entries()) walk(v as Schema, `${at}|${i}`);
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) if (name !== 'ErrorBody') walk(schema, name);
    for (const { path, method, op } of all()) for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in} ${p.name}`);
    expect(bare).toEqual([]);
    expect(doc.components.schemas.Object).toBeUndefined();
  });

  it('lists for every enumerated request field the values its validator accepts', () => {
    const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Function, { name?: string; propertyName: string; constraints?: unknown[]; each?: boolean }[]> };
    let checked = 0;
    const wrong: string[] = [];
    for (const [target, list] of storage.validationMetadatas) {
      const schema = doc.components.schemas[target.name];
      if (!schema?.properties) continue;
      for (const m of list.filter((x) => x.name === 'isIn')) {
        const field = schema.properties[m.propertyName];
        if (!field) continue;
        const values = (m.each ? field.items?.enum : field.enum) as unknown[] | undefined;
        const accepted = m.constraints?.[0] as unknown[];
        checked++;
        if (!values || !accepted.every((v) => values.includes(v)) || !values.every((v) => v === null || accepted.includes(v))) {
          wrong.push(`${target.name}.${m.propertyName}: ${JSON.stringify(values)} vs ${JSON.stringify(accepted)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(20);
    // The query parameters that were an empty Object schema.
    const param = (path: string, name: string) => doc.paths[path].get.parameters?.find((p) => p.name === name)?.schema;
    expect(param('/api/v1/devices', 'status')).toEqual({ type: 'string', enum: ['active', 'decommissioned'] });
    expect(param('/api/v1/pam/elevation-requests', 'status')?.enum).toEqual(['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating']);
  });

  it('knows every class-validator validator the DTOs use: each is stated in the schema or deliberately not', () => {
    const dtos = (target: Function) => target.name in doc.components.schemas;
    const names = validatorNames(dtos);
    expect(names.size).toBeGreaterThan(20);
    expect([...names].filter((n) => !isKnownValidator(n))).toEqual([]);
  });

  it('states formats, bounds and patterns, and the agent hash pattern accepts what the server accepts', () => {
    const s = doc.components.schemas;
    expect(s.CreatePamRuleDto.properties!.priority).toMatchObject({ type: 'integer', minimum: -1_000_000, maximum: 1_000_000 });
    expect(s.PamRuleDto.properties!.createdAt).toMatchObject({ type: 'string', format: 'date-time' });
    expect(s.PamRuleDto.properties!.id).toMatchObject({ type: 'string', format: 'uuid' });
    expect(s.LoginDto.properties!.email).toMatchObject({ type: 'string', format: 'email', maxLength: 255 });
    expect(s.CreateRoleDto.properties!.permissions.items?.enum).toContain('devices:execute');
    const hash = new RegExp(s.ElevationIngestDto.properties!.target_executable_hash.pattern as string);
    expect(hash.test('AB'.repeat(32))).toBe(true);
    expect(hash.test('ab'.repeat(32))).toBe(true);
    expect(hash.test('ab'.repeat(31))).toBe(false);
    expect(hash.test('g'.repeat(64))).toBe(false);
    for (const path of Object.keys(doc.paths)) {
      for (const p of Object.values(doc.paths[path]).flatMap((o) => o.parameters ?? []).filter((x) => x.in === 'path')) {
        expect({ path, name: p.name, format: p.schema?.format }).toEqual({ path, name: p.name, format: 'uuid' });
      }
    }
  });

  it('gives every operation its error statuses with ErrorBody and the codes it answers', () => {
    const problems: string[] = [];
    for (const { path, method, op } of all()) {
      const name = `${method.toUpperCase()} ${path}`;
      const secured = (op.security ?? []).length > 0;
      const errors = Object.keys(op.responses).filter((s) => Number(s) >= 400);
      if (!errors.includes('500')) problems.push(`${name}: no 500`);
      if (secured && !documentedCodes(doc, op, 401)?.includes('unauthenticated')) problems.push(`${name}: no 401 unauthenticated`);
      if (!secured && op.security === undefined) problems.push(`${name}: public without security []`);
      for (const status of errors) {
        const r = response(doc, op.responses[status]);
        const schema = r?.content?.['application/json']?.schema;
        if (!schema?.allOf?.some((s) => s.$ref === '#/components/schemas/ErrorBody')) problems.push(`${name} ${status}: not ErrorBody`);
        if (!documentedCodes(doc, op, Number(status))?.length) problems.push(`${name} ${status}: no codes`);
      }
      if ((op.parameters ?? []).some((p) => p.in === 'path' && p.name !== 'id') && !errors.includes('404')) problems.push(`${name}: path ids but no 404`);
      if (op.requestBody && !['413', '415'].every((s) => errors.includes(s))) problems.push(`${name}: a body but no 413/415`);
    }
    expect(problems).toEqual([]);
    const respond = doc.paths['/api/v1/pam/elevation-requests/{id}/respond'].post;
    expect(documentedCodes(doc, respond, 403)).toEqual(['forbidden', 'mfa_required', 'site_access_denied', 'self_approval']);
    expect(documentedCodes(doc, respond, 409)).toEqual(['conflict', 'not_pending']);
    expect(documentedCodes(doc, doc.paths['/api/v1/organizations'].post, 403)).toEqual(['forbidden', 'partner_scope_required']);
    expect(response(doc, doc.paths['/api/v1/auth/login'].post.responses['429'])?.headers).toHaveProperty('Retry-After');
  });

  it('documents 503 database_unavailable with Retry-After on every operation but the health probes', () => {
    const wrong: string[] = [];
    for (const { path, method, op } of all()) {
      const name = `${method.toUpperCase()} ${path}`;
      const codes = documentedCodes(doc, op, 503) ?? [];
      if (path.startsWith('/api/v1/health')) {
        if (codes.includes('database_unavailable')) wrong.push(`${name}: a probe documents database_unavailable`);
        continue;
      }
      if (!codes.includes('database_unavailable')) wrong.push(`${name}: no 503 database_unavailable`);
      else if (!response(doc, op.responses['503'])?.headers?.['Retry-After']) wrong.push(`${name}: 503 without Retry-After`);
    }
    expect(wrong).toEqual([]);
    // Documented once, by reference, with the header's meaning; the document's description explains the code.
    expect(doc.paths['/api/v1/agents/{id}/elevation-requests'].post.responses['503']).toEqual({ $ref: '#/components/responses/DatabaseUnavailable' });
    expect(doc.components.responses?.DatabaseUnavailable.headers?.['Retry-After']).toEqual({ description: expect.any(String), schema: { type: 'integer', minimum: 1 } });
    expect(doc.info.description).toMatch(/- `database_unavailable`: .*`Retry-After`/);
    // Readiness keeps its own 503 codes: it asks the database itself.
    expect(documentedCodes(doc, doc.paths['/api/v1/health/ready'].get, 503)).toEqual(['draining', 'not_ready']);
  });

  it('names in each operation the error codes its description mentions', () => {
    const known = new Set(all().flatMap(({ op }) => [...allDocumentedCodes(doc, op)]));
    const missing: string[] = [];
    for (const { path, method, op } of all()) {
      const mine = allDocumentedCodes(doc, op);
      for (const [, code] of (op.description ?? '').matchAll(/`([a-z][a-z0-9_]+)`/g)) {
        if (known.has(code) && !mine.has(code)) missing.push(`${method.toUpperCase()} ${path}: ${code}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents every error code the modules raise on at least one operation', () => {
    const known = new Set(all().flatMap(({ op }) => [...allDocumentedCodes(doc, op)]));
    const raised = new Set<string>();
    const files = walkFiles(join(__dirname, '../../../src')).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    const patterns = [
      /AppException\.(?:badRequest|forbidden|conflict|gone)\(\s*'([a-z_]+)'/g,
      /new AppException\(\s*(?:HttpStatus\.)?\w+,\s*'([a-z_]+)'/g,
      /AppException\.notFound\([^)]*,\s*'([a-z_]+)'\)/g,
    ];
    for (const f of files) for (const re of patterns) for (const [, code] of readFileSync(f, 'utf8').matchAll(re)) raised.add(code);
    // Defined but raised by no route (replacing an authenticator is an enrolment, see docs/architecture.md).
    const unused = new Set(['mfa_already_enabled']);
    expect([...raised].filter((c) => !known.has(c) && !unused.has(c)).sort()).toEqual([]);
    expect(raised.size).toBeGreaterThan(40);
  });

  it('documents the SSO browser navigations as 302 with Location, and the SAML form body', () => {
    for (const [path, method] of [
      ['/api/v1/sso/login/{orgId}', 'get'],
      ['/api/v1/sso/login/partner/{partnerId}', 'get'],
      ['/api/v1/sso/callback', 'get'],
      ['/api/v1/sso/saml/login/{orgId}', 'get'],
      ['/api/v1/sso/saml/login/partner/{partnerId}', 'get'],
      ['/api/v1/sso/saml/acs', 'post'],
    ] as const) {
      const op = doc.paths[path][method];
      expect(Object.keys(op.responses).filter((s) => Number(s) < 400)).toEqual(['302']);
      expect(response(doc, op.responses['302'])?.headers).toHaveProperty('Location');
    }
    const acs = doc.paths['/api/v1/sso/saml/acs'].post.requestBody!.content['application/x-www-form-urlencoded'].schema;
    expect(resolve(acs)).toMatchObject({ properties: { SAMLResponse: { type: 'string' }, RelayState: { type: 'string' } }, required: ['SAMLResponse'] });
    expect(Object.keys(doc.paths['/api/v1/sso/saml/metadata/{providerId}'].get.responses['200'] as object)).toContain('content');
    expect(Object.keys((doc.paths['/api/v1/sso/saml/metadata/{providerId}'].get.responses['200'] as { content: object }).content)).toEqual(['application/samlmetadata+xml']);
  });

  /**
   * Requests every client gets wrong sooner or later, sent to every operation: no credential, a
   * body of the wrong type, malformed JSON, a path id that is not a UUID, and ids that do not exist
   * with an empty body. Each answer's status must be one the operation documents, and an error's
   * code one it lists under that status.
   */
  it('answers every operation only with statuses and codes the document lists for it', async () => {
    let address = 0;
    const undocumented: string[] = [];
    const send = async (label: string, path: string, method: string, op: Operation, init: { auth?: string; type?: string; body?: string }) => {
      address++;
      const headers: Record<string, string> = { 'x-forwarded-for': `10.9.${(address >> 8) & 255}.${address & 255}` };
      if (init.auth) headers.authorization = `Bearer ${init.auth}`;
      if (init.type) headers['content-type'] = init.type;
      const res = await fetch(`${t.baseUrl}${path}`, { method: method.toUpperCase(), headers, body: init.body, redirect: 'manual' });
      const text = await res.text();
      const where = `${method.toUpperCase()} ${path} (${label})`;
      if (!(String(res.status) in op.responses)) return undocumented.push(`${where}: ${res.status} not documented ${text.slice(0, 160)}`);
      if (res.status < 400) return;
      const code = (JSON.parse(text) as { code?: string }).code;
      const listed = documentedCodes(doc, op, res.status) ?? [];
      if (!code || !listed.includes(code)) undocumented.push(`${where}: ${res.status} ${code} not among ${listed.join(', ')}`);
    };
    for (const { path, method, op } of all()) {
      const agentRoute = (op.security ?? []).some((s) => 'agent' in s);
      const secured = (op.security ?? []).length > 0;
      const fill = (id: (name: string) => string) => path.replace(/\{(\w+)\}/g, (_, n: string) => (agentRoute && n === 'id' ? agent.id : id(n)));
      const url = fill(() => randomUUID());
      const types = Object.keys(op.requestBody?.content ?? {});
      const json = types.includes('application/json');
      const credential = async () => (agentRoute ? agent.token : path.endsWith('/auth/logout') ? t.token(ids.tech, { mfa: true }) : tech);
      await send('no credential', url, method, op, json ? { type: 'application/json', body: '{}' } : {});
      if (types.length) await send('text/plain body', url, method, op, { type: 'text/plain', body: 'x' });
      if (json) await send('malformed JSON', url, method, op, { type: 'application/json', body: '{"a":' });
      if ((op.parameters ?? []).some((p) => p.in === 'path' && !(agentRoute && p.name === 'id'))) {
        await send('path id not a UUID', fill(() => 'not-a-uuid'), method, op, { auth: await credential(), ...(json ? { type: 'application/json', body: '{}' } : {}) });
      }
      if (secured || method === 'get') await send('unknown ids, empty body', url, method, op, { auth: await credential(), ...(json ? { type: 'application/json', body: '{}' } : {}) });
    }
    expect(undocumented).toEqual([]);
    expect(address).toBeGreaterThan(400);
  }, 120_000);
});

function walkFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walkFiles(full) : [full];
  });
}
