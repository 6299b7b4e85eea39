import { createHash, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Middleware } from 'openapi-fetch';
import * as ts from 'typescript';
import { PASSWORD, TOTP_SECRET, tenantFixture } from '../../factories/tenant.factory';
import { startTestApp, type TestApp } from '../../support/test-app';
import { answerValidator, response, type Doc, type Schema } from './openapi.kit';
import { apiClient, approve, createApprovalRule, createSamlProvider, FLOW_OPERATIONS, importDocument, listApproved, reportPrompt, signInWithMfa, type Api } from './client-flows';

/**
 * Issue 15, item 1: a typed client generated from the served document (openapi-typescript for the
 * types, openapi-fetch as the client) drives one real flow per module against the running service.
 * The flows are compiled against the types generated from this run's document, and every answer is
 * checked against the schema the document gives for its status, so a field the document gets wrong
 * breaks the compile or the run.
 */

const GENERATED = join(__dirname, 'generated', 'api.d.ts');
const FLOWS = join(__dirname, 'client-flows.ts');
const HEADER =
  '// The operations of the served OpenAPI document that test/e2e/openapi/client-flows.ts calls, as openapi-typescript types them.\n' +
  '// Rewritten by: UPDATE_OPENAPI_TYPES=1 npx jest --config jest.config.js test/e2e/openapi/generated-client.e2e.test.ts\n';

/** The document cut down to some operations and the components they reach. */
function pruned(doc: Doc, keep: readonly (readonly [string, string])[]): Doc {
  const paths: Doc['paths'] = {};
  for (const [path, method] of keep) (paths[path] ??= {})[method] = doc.paths[path][method];
  const used = { schemas: new Set<string>(), responses: new Set<string>() };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      const ref = key === '$ref' && typeof value === 'string' ? /^#\/components\/(schemas|responses)\/(.+)$/.exec(value) : null;
      if (ref) {
        const kind = ref[1] as 'schemas' | 'responses';
        if (!used[kind].has(ref[2])) {
          used[kind].add(ref[2]);
          visit((doc.components[kind] as Record<string, unknown>)[ref[2]]);
        }
      } else visit(value);
    }
  };
  visit(paths);
  const pick = <T,>(all: Record<string, T> | undefined, names: Set<string>) => Object.fromEntries(Object.entries(all ?? {}).filter(([n]) => names.has(n)));
  return { ...doc, paths, components: { ...doc.components, schemas: pick(doc.components.schemas, used.schemas), responses: pick(doc.components.responses, used.responses) } };
}

/**
 * openapi-typescript's command line on the document, in a temporary directory (the generator is
 * an ES module, which jest's module system does not load: it runs in its own Node process).
 */
function generateTypes(document: Doc): string {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document));
    const cli = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
    execFileSync(process.execPath, [cli, join(dir, 'openapi.json'), '--output', join(dir, 'api.d.ts')], { stdio: 'pipe' });
    return readFileSync(join(dir, 'api.d.ts'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Type errors of the flows compiled against `types` (the generated file's text). */
function typeErrors(types: string): string[] {
  const configFile = ts.readConfigFile(join(__dirname, '../../../tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, join(__dirname, '../../..'));
  const host = ts.createCompilerHost({ ...options, noEmit: true, incremental: false });
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (file === GENERATED ? types : readFile(file));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === GENERATED || fileExists(file);
  const program = ts.createProgram([FLOWS], { ...options, noEmit: true, incremental: false }, host);
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('a client generated from the served OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;
  let ids: Record<string, string>;
  let fx: ReturnType<typeof tenantFixture>;
  let api: Api;
  let generated: string;
  const answers: string[] = [];
  const mismatches: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({}, { listen: true });
    fx = tenantFixture();
    ids = await t.seed(fx);
    doc = (await (await fetch(`${t.baseUrl}/api/docs-json`)).json()) as Doc;
    generated = HEADER + generateTypes(pruned(doc, FLOW_OPERATIONS));
    if (process.env.UPDATE_OPENAPI_TYPES === '1') writeFileSync(GENERATED, generated);
    const validate = answerValidator(doc);
    /** Every answer of the flows, checked against the schema the document gives its status. */
    const check: Middleware = {
      async onResponse({ request, response: res, schemaPath }) {
        const method = request.method.toLowerCase();
        const where = `${request.method} ${schemaPath} ${res.status}`;
        answers.push(where);
        const documented = response(doc, doc.paths[schemaPath]?.[method]?.responses[String(res.status)]);
        if (!documented) return void mismatches.push(`${where}: status not documented`);
        const schema = documented.content?.['application/json']?.schema as Schema | undefined;
        if (!schema) return;
        const fn = validate(schema);
        if (!fn(await res.clone().json())) mismatches.push(`${where}: ${JSON.stringify(fn.errors)}`);
      },
    };
    api = apiClient(t.baseUrl, check);
  });
  afterAll(() => t.close());

  it('is generated with openapi-typescript from the document, and the checked-in copy is that output', () => {
    expect(generated).toContain('"/api/v1/pam/rules"');
    expect(readFileSync(GENERATED, 'utf8')).toBe(generated);
  });

  it('type-checks the flows against the types generated from this run', () => {
    expect(typeErrors(generated)).toEqual([]);
  });

  it('breaks the compile when the document gets a field wrong', () => {
    // The verdict the PAM flow sends, no longer one the document allows.
    expect(typeErrors(generated.replaceAll('"auto_approve" | "auto_deny" | "require_approval" | "ignore"', '"auto_approve" | "auto_deny" | "ignore"')).join('\n')).toMatch(
      /require_approval/,
    );
  });

  const hash = createHash('sha256').update(`setup-${randomUUID()}`).digest('hex');
  let adminToken = '';
  let ruleId = '';
  let requestId = '';

  it('auth: signs in with a password and a TOTP code, and the session is MFA-satisfied', async () => {
    const session = await signInWithMfa(api, fx.emails.adminA, PASSWORD, TOTP_SECRET);
    expect({ mfa: session.mfa, email: session.email }).toEqual({ mfa: true, email: fx.emails.adminA });
    adminToken = session.token;
  });

  it('pam: creates a rule that sends an installer for approval, and lists it', async () => {
    const { rule, listed } = await createApprovalRule(api, adminToken, hash);
    expect(rule).toMatchObject({ verdict: 'require_approval', matchHash: hash, orgId: ids.orgA, approvalDurationMinutes: 30 });
    expect(listed).toBe(true);
    ruleId = rule.id;
  });

  it('agent: the device reports the prompt (hash in capitals) and the rule makes it pending', async () => {
    const device = fx.devices!.find((d) => d.key === 'deviceA1')!;
    const result = await reportPrompt(api, { id: device.agentId!, token: device.agentToken! }, hash);
    expect(result.status).toBe('pending');
    requestId = result.id!;
  });

  it('pam lifecycle: a technician approves it; its history shows the decision and the rule', async () => {
    const { status, request, events } = await approve(api, adminToken, requestId);
    expect(status).toBe('approved');
    // The rule matched the hash the agent sent in capitals: the documented pattern is what the server accepts.
    expect(request).toMatchObject({ id: requestId, status: 'approved', pamRuleId: ruleId, approvedByName: 'Admin A', targetExecutablePath: expect.stringMatching(/setup\.exe$/) });
    expect(events).toEqual([
      [null, 'pending'],
      ['pending', 'approved'],
    ]);
  });

  it('pam: lists the approved requests, the new one first', async () => {
    const { ids: listed, pagination } = await listApproved(api, adminToken);
    expect(listed[0]).toBe(requestId);
    expect(pagination).toMatchObject({ page: 1, limit: 10, total: expect.any(Number) });
  });

  it('sso: creates a SAML provider, inactive until complete, and reads it back', async () => {
    const { created, read } = await createSamlProvider(api, adminToken);
    expect(created).toMatchObject({ type: 'saml', status: 'inactive', ownerScope: 'organization', orgId: ids.orgA });
    expect(read).toEqual(created);
  });

  it("imports: a partner technician's interchange document runs to its report", async () => {
    const job = await importDocument(api, await t.token(ids.tech, { mfa: true }), randomUUID().slice(0, 8));
    expect(job).toMatchObject({ status: 'completed', percent: 100, error: null });
    expect(job.report?.summary.created).toBeGreaterThanOrEqual(3);
  });

  it('got from the service only answers whose status and body the document describes, from every operation the flows call', () => {
    expect(mismatches).toEqual([]);
    // Each operation at least once. Not a count of answers: the import is polled until it ends, so how many times
    // depends on how fast it runs (a floor of 14 answers failed a clean-clone run whose import ended by the first poll).
    const operations = (list: readonly string[]) => [...new Set(list)].sort();
    expect(operations(answers.map((a) => a.split(' ').slice(0, 2).join(' ')))).toEqual(operations(FLOW_OPERATIONS.map(([path, method]) => `${method.toUpperCase()} ${path}`)));
  });
});
