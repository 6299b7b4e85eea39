import { phaseSizes, planFromContactsCsv, planFromInterchange, planFromValuesCsv } from './import-plan';
import type { InterchangeDocument } from './interchange.types';

describe('import plans', () => {
  it('keeps location-owned content after the customer\'s own, with document refs', () => {
    const doc: InterchangeDocument = {
      format: 'rmm-interchange',
      version: 1,
      source: { system: 'acme' },
      customers: [
        {
          externalId: 'c',
          name: 'C',
          customFields: [{ key: 'a', name: 'A', type: 'text' }],
          locations: [{ externalId: 'l1', name: 'L1', customFields: [{ key: 'b', name: 'B', type: 'text' }] }, { externalId: 'l2', name: 'L2', customFields: [{ key: 'b', name: 'B2', type: 'text' }] }],
          devices: [{ externalId: 'd', hostname: 'D' }],
        },
      ],
    };
    const plan = planFromInterchange(doc);
    expect(plan.customers[0].customFields.map((f) => [f.ref, f.locationExternalId])).toEqual([
      ['customers[0].customFields[0]', undefined],
      ['customers[0].locations[0].customFields[0]', 'l1'],
      ['customers[0].locations[1].customFields[0]', 'l2'],
    ]);
    expect(phaseSizes(plan)).toMatchObject({ organizations: 3, customFields: 3, devices: 1, contacts: 0 });
  });

  it('reads a contacts CSV into work and mobile phones and a site name', () => {
    const { plan, problems } = planFromContactsCsv('ExternalId,Name,Phone,Mobile,Site\nx,Ann,555,556,HQ\n', 'org-1');
    expect(problems).toEqual([]);
    expect(plan?.phases).toEqual(['contacts']);
    expect(plan?.customers[0]).toMatchObject({ target: { orgId: 'org-1' } });
    expect(plan?.customers[0].contacts[0]).toEqual({
      ref: 'line 2',
      item: { externalId: 'x', name: 'Ann', email: null, phones: [{ type: 'work', number: '555' }, { type: 'mobile', number: '556' }], title: null, notes: null, siteName: 'HQ' },
    });
  });

  it('names the CSV column of a bad phone number', () => {
    expect(planFromContactsCsv('externalId,name,mobile\nx,Ann,call me\n', 'o').problems).toEqual([[['line 2', 'mobile'], expect.any(String)]]);
    expect(planFromContactsCsv('externalId,name,phone\nx,Ann,call me\n', 'o').problems).toEqual([[['line 2', 'phone'], expect.any(String)]]);
    expect(planFromContactsCsv('externalId,name,phone,mobile\nx,Ann,1,call me\n', 'o').problems).toEqual([[['line 2', 'mobile'], expect.any(String)]]);
  });

  it('reads custom-field values as text rows naming a device by id or hostname', () => {
    const { plan } = planFromValuesCsv('deviceId,hostname,field,value\nsrc-1,,tier,Gold\n,WS-1,tier,Silver\n', 'o');
    expect(plan?.customers[0].values.map((v) => v.item)).toEqual([
      { deviceExternalId: 'src-1', hostname: undefined, field: 'tier', value: 'Gold', text: true },
      { deviceExternalId: undefined, hostname: 'WS-1', field: 'tier', value: 'Silver', text: true },
    ]);
    expect(planFromValuesCsv('field,value\ntier,Gold\n', 'o').problems).toEqual([[['line 2'], expect.any(String)]]);
    expect(planFromValuesCsv('hostname,field,value\nWS,Bad Key,x\n', 'o').problems[0][0]).toEqual(['line 2', 'field']);
    expect(planFromValuesCsv('hostname,field,value\n', 'o').problems).toEqual([[['line 2'], 'the file has no rows']]);
  });
});
