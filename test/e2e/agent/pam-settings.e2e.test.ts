import request from 'supertest';
import { startTestApp, TestApp } from '../../support/test-app';
import { AgentKit } from './agent-kit';

describe('GET /agents/:id/pam-settings: uacInterceptionEnabled resolved through the policy hierarchy', () => {
  let t: TestApp;
  let k: AgentKit;

  beforeAll(async () => {
    t = await startTestApp();
    k = await new AgentKit(t).seed();
  });
  afterAll(() => t.close());

  const uac = async (device: string) => {
    const res = await k.settings(device).expect(200);
    expect(Object.keys(res.body)).toEqual(['uacInterceptionEnabled']);
    return res.body.uacInterceptionEnabled as boolean;
  };
  const all = async () => ({ A1: await uac('deviceA1'), A2: await uac('deviceA2'), B1: await uac('deviceB1') });
  const pam = (enabled?: boolean) => ({ pam: enabled === undefined ? {} : { uacInterceptionEnabled: enabled } });

  it('is true on every device when no policy sets it', async () => {
    expect(await all()).toEqual({ A1: true, A2: true, B1: true });
    await k.policy('adminA', { name: 'Monitoring only', features: { monitoring: { cpuThresholdPercent: 90 } } }, [{ targetType: 'device', targetId: k.ids.deviceA1 }]);
    expect(await uac('deviceA1')).toBe(true);
  });

  it('takes a partner-level value on every device of the partner', async () => {
    await k.policy('tech', { scope: 'partner', name: 'Partner off', features: pam(false) }, [{ targetType: 'partner', targetId: k.ids.partner }]);
    expect(await all()).toEqual({ A1: false, A2: false, B1: false });
  });

  it('lets an organization-level value override the partner\'s', async () => {
    await k.policy('adminA', { name: 'Org A on', features: pam(true) }, [{ targetType: 'organization', targetId: k.ids.orgA }]);
    expect(await all()).toEqual({ A1: true, A2: true, B1: false });
  });

  it('lets a site-level value override the organization\'s', async () => {
    await k.policy('adminA', { name: 'Site A1 off', features: pam(false) }, [{ targetType: 'site', targetId: k.ids.siteA1 }]);
    expect(await all()).toEqual({ A1: false, A2: true, B1: false });
  });

  it('lets a device-group value override the site\'s', async () => {
    await k.policy('adminA', { name: 'Workstations on', features: pam(true) }, [{ targetType: 'device_group', targetId: k.ids.groupA1 }]);
    expect(await all()).toEqual({ A1: true, A2: true, B1: false });
  });

  it('lets a device-level value override the group\'s, and within a level the lower priority number wins', async () => {
    const off = await k.policy('adminA', { name: 'Device off', features: pam(false) }, [{ targetType: 'device', targetId: k.ids.deviceA1, priority: 10 }]);
    expect(await uac('deviceA1')).toBe(false);
    const on = await k.policy('adminA', { name: 'Device on first', features: pam(true) }, [{ targetType: 'device', targetId: k.ids.deviceA1, priority: 5 }]);
    expect(await uac('deviceA1')).toBe(true);
    await k.deletePolicy('adminA', on);
    expect(await uac('deviceA1')).toBe(false);
    await k.deletePolicy('adminA', off);
    expect(await uac('deviceA1')).toBe(true);
  });

  it('skips a closer policy that does not set the value, and a disabled one', async () => {
    await k.policy('adminA', { name: 'PAM feature, no setting', features: pam() }, [{ targetType: 'device', targetId: k.ids.deviceA2 }]);
    await k.policy('adminA', { name: 'Disabled off', enabled: false, features: pam(false) }, [{ targetType: 'device', targetId: k.ids.deviceA2 }]);
    expect(await uac('deviceA2')).toBe(true);
  });

  it('answers only the agent of the device', async () => {
    const a1 = k.agent('deviceA1');
    await request(t.http).get(`/api/v1/agents/${k.agent('deviceB1').id}/pam-settings`).set('Authorization', `Bearer ${a1.token}`).expect(401);
    await request(t.http).get(`/api/v1/agents/${a1.id}/pam-settings`).set('Authorization', k.admin.adminA).expect(401);
  });
});
