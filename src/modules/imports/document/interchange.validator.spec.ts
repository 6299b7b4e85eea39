import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatPath } from '../../../common/shape/path.util';
import { interchangeJsonSchema } from './interchange.schema';
import { interchangeProblems } from './interchange.validator';

const ROOT = join(__dirname, '../../../..');
const fixture = () => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/rmm-export/export.json'), 'utf8'));
const base = () => ({ format: 'rmm-interchange', version: 1, source: { system: 'acme' }, customers: [] as Record<string, unknown>[] });
const first = (doc: unknown) => {
  const [p] = interchangeProblems(doc);
  return p && [formatPath(p[0], 'brackets'), p[1]];
};

describe('interchange document validation', () => {
  it('accepts the realistic export fixture and the example of docs/import-format.md', () => {
    expect(interchangeProblems(fixture())).toEqual([]);
    const md = readFileSync(join(ROOT, 'docs/import-format.md'), 'utf8');
    const example = /```json\n([\s\S]*?)\n```/.exec(md)?.[1] as string;
    expect(interchangeProblems(JSON.parse(example))).toEqual([]);
  });

  it('names the first problem with a bracketed path', () => {
    const doc = fixture();
    doc.customers[2].locations[0].name = '';
    doc.customers[3].devices[0].hostname = 7;
    expect(first(doc)).toEqual(['customers[2].locations[0].name', 'must be at least 1 characters']);
    expect(first({ ...base(), version: 2 })).toEqual(['version', 'must be 1']);
    expect(first({ ...base(), customers: undefined })).toEqual(['customers', 'is required']);
    expect(first({ ...base(), source: { system: 'has space' } })[0]).toBe('source.system');
  });

  it('checks references between records of a customer', () => {
    const doc = base();
    doc.customers = [{ externalId: 'c', name: 'C', locations: [{ externalId: 'l', name: 'L' }], contacts: [{ externalId: 'p', name: 'P', locationExternalId: 'x' }] }];
    expect(first(doc)).toEqual(['customers[0].contacts[0].locationExternalId', 'no location of this customer has this externalId']);
  });

  it('checks custom-field definitions, keys used by group filters, and keys reused below the account', () => {
    expect(first({ ...base(), customFields: [{ key: 'tier', name: 'Tier', type: 'single_select' }] })[0]).toBe('customFields[0].options');
    const groups = base();
    groups.customers = [{ externalId: 'c', name: 'C', deviceGroups: [{ externalId: 'g', name: 'G', filter: { customField: 'nope', op: 'exists' } }] }];
    expect(first(groups)[0]).toBe('customers[0].deviceGroups[0].filter.customField');
    const clash = { ...base(), customFields: [{ key: 'tier', name: 'Tier', type: 'text' }], customers: [{ externalId: 'c', name: 'C', locations: [{ externalId: 'l', name: 'L', customFields: [{ key: 'tier', name: 'T', type: 'text' }] }] }] };
    expect(first(clash)).toEqual(['customers[0].locations[0].customFields[0].key', 'this key is already a partner-wide (account) field']);
  });

  it('checks scripts and policy features with the path inside them', () => {
    const script = { externalId: 's', name: 'S', language: 'bash', body: 'true', exitCodeSeverityMapping: [{ from: 0, to: 5, severity: 'info' }, { exitCode: 3, severity: 'error' }] };
    expect(first({ ...base(), scripts: [script] })[0]).toBe('scripts[0].exitCodeSeverityMapping[1]');
    const policy = { externalId: 'p', name: 'P', type: 'configuration', features: { agent: { checkInIntervalSeconds: 1 } } };
    expect(first({ ...base(), policies: [policy] })).toEqual(['policies[0].features.agent.checkInIntervalSeconds', 'must be at least 30']);
  });

  it('checks assignment targets', () => {
    const doc = base();
    doc.customers = [{ externalId: 'c', name: 'C', devices: [{ externalId: 'd', hostname: 'D' }], policies: [{ externalId: 'p', name: 'P', type: 'configuration', features: {}, assignments: [{ target: 'account' }] }] }];
    expect(first(doc)[0]).toBe('customers[0].policies[0].assignments[0].target');
    const account = { ...base(), customers: doc.customers.map((c) => ({ ...c, policies: [] })), policies: [{ externalId: 'p', name: 'P', type: 'configuration', features: {}, assignments: [{ target: 'device', customerExternalId: 'c', externalId: 'zz' }] }] };
    expect(first(account)).toEqual(['policies[0].assignments[0].externalId', 'no device of the customer has this externalId']);
    account.policies[0].assignments = [{ target: 'customer', customerExternalId: 'nope', externalId: 'x' }];
    expect(first(account)[0]).toBe('policies[0].assignments[0].customerExternalId');
  });

  it('requires a value row to name its device', () => {
    const doc = base();
    doc.customers = [{ externalId: 'c', name: 'C', customFieldValues: [{ field: 'tier', value: 'x' }] }];
    expect(first(doc)).toEqual(['customers[0].customFieldValues[0]', 'a value row names its device by deviceExternalId or hostname']);
  });
});

describe('the published JSON Schema', () => {
  it('is exactly the schema generated from the shape the API validates with', () => {
    const published = JSON.parse(readFileSync(join(ROOT, 'docs/import-format.schema.json'), 'utf8'));
    expect(published).toEqual(interchangeJsonSchema());
  });
});
