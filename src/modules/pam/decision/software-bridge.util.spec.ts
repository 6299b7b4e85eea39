import type { SoftwareEntry, SoftwareMode } from '../../policies/features/pam.features';
import type { AppliedSoftwarePolicy } from './decision.types';
import { compileSoftwarePolicy, runBridge, SoftwarePolicyError } from './software-bridge.util';

const HASH = 'ab'.repeat(32);
const exe = { path: 'C:\\Program Files\\Contoso\\Setup.EXE', hash: HASH, signer: 'Contoso Ltd' };

let seq = 0;
function policy(mode: SoftwareMode, entries: unknown[], name = `${mode} ${++seq}`): AppliedSoftwarePolicy {
  return {
    policyId: `p-${name}`,
    policyName: name,
    policyUpdatedAt: new Date(0),
    level: 'organization',
    priority: 100,
    assignedAt: new Date(0),
    assignmentId: `a-${name}`,
    settings: { mode, entries: entries as SoftwareEntry[] },
  };
}
const bridge = (policies: AppliedSoftwarePolicy[], x: Parameters<typeof runBridge>[1] = exe) => runBridge(policies.map(compileSoftwarePolicy), x);

describe('software-policy bridge', () => {
  it('matches each criterion ignoring case: file name, SHA-256, signer, path glob', () => {
    for (const entry of [{ name: 'setup.exe' }, { sha256: HASH.toUpperCase() }, { signer: 'CONTOSO LTD' }, { pathGlob: 'c:/program files/**/*.exe' }]) {
      expect(bridge([policy('allowlist', [entry])]).verdict).toBe('allow');
    }
    for (const entry of [{ name: 'other.exe' }, { sha256: 'cd'.repeat(32) }, { signer: 'Contoso' }, { pathGlob: 'C:\\Windows\\**' }]) {
      expect(bridge([policy('allowlist', [entry])]).verdict).toBeNull();
    }
  });

  it('requires every criterion an entry sets', () => {
    expect(bridge([policy('blocklist', [{ name: 'setup.exe', signer: 'Contoso Ltd' }])]).verdict).toBe('deny');
    expect(bridge([policy('blocklist', [{ name: 'setup.exe', signer: 'Fabrikam' }])]).verdict).toBeNull();
  });

  it('never matches a criterion on a value the request lacks', () => {
    expect(bridge([policy('allowlist', [{ signer: 'Contoso Ltd' }])], { path: exe.path, hash: HASH, signer: null }).verdict).toBeNull();
    expect(bridge([policy('blocklist', [{ sha256: HASH }])], { path: exe.path }).verdict).toBeNull();
    expect(bridge([policy('blocklist', [{ name: 'setup.exe' }])], { hash: HASH }).verdict).toBeNull();
  });

  it('lets a blocklist hit beat an allowlist hit, wherever each policy is assigned', () => {
    const allow = policy('allowlist', [{ name: 'setup.exe' }], 'Allow');
    const block = policy('blocklist', [{ signer: 'Contoso Ltd' }], 'Block');
    for (const order of [[allow, block], [block, allow]]) {
      const result = bridge(order);
      expect(result).toMatchObject({ verdict: 'deny', policy: { id: 'p-Block', name: 'Block', mode: 'blocklist' } });
    }
  });

  it('reports the closest policy of the deciding kind', () => {
    const near = policy('allowlist', [{ name: 'setup.exe' }], 'Near');
    const far = policy('allowlist', [{ name: 'setup.exe' }], 'Far');
    expect(bridge([near, far]).policy?.name).toBe('Near');
  });

  it('attaches every audit hit as evidence without deciding', () => {
    const audit = policy('audit', [{ name: 'other.exe' }, { name: 'setup.exe' }, { signer: 'contoso ltd' }], 'Watch');
    const result = bridge([audit]);
    expect(result.verdict).toBeNull();
    expect(result.policy?.name).toBe('Watch');
    expect(result.evidence).toEqual([
      { policyId: 'p-Watch', policyName: 'Watch', mode: 'audit', entryIndex: 1, entry: { name: 'setup.exe' } },
      { policyId: 'p-Watch', policyName: 'Watch', mode: 'audit', entryIndex: 2, entry: { signer: 'contoso ltd' } },
    ]);
    const withBlock = bridge([audit, policy('blocklist', [{ name: 'setup.exe' }], 'Block')]);
    expect(withBlock).toMatchObject({ verdict: 'deny', policy: { name: 'Block' } });
    expect(withBlock.evidence).toHaveLength(2);
  });

  it('refuses settings written around the API instead of reading them as an empty list', () => {
    const broken = (settings: unknown) => () => compileSoftwarePolicy({ ...policy('audit', []), settings } as AppliedSoftwarePolicy);
    expect(broken({ mode: 'denylist', entries: [] })).toThrow(SoftwarePolicyError);
    expect(broken({ mode: 'blocklist', entries: {} })).toThrow(SoftwarePolicyError);
    expect(broken({ mode: 'blocklist', entries: [{}] })).toThrow(/no criterion/);
    expect(broken({ mode: 'blocklist', entries: [{ name: 7 }] })).toThrow(/name/);
    expect(broken(['blocklist'])).toThrow(SoftwarePolicyError);
  });
});
