import { metricsAccess } from './metrics-endpoint';

describe('metricsAccess', () => {
  const local = { socketAddress: '::ffff:127.0.0.1', clientAddress: '127.0.0.1' };
  const token = 't'.repeat(32);

  it('lets a caller on this machine read without a token outside production', () => {
    expect(metricsAccess({ isProduction: false }, local)).toBe('allow');
  });

  it('refuses a remote caller outside production, whether it connects directly or through a local proxy', () => {
    expect(metricsAccess({ isProduction: false }, { socketAddress: '10.0.0.5', clientAddress: '10.0.0.5' })).toBe('forbidden');
    expect(metricsAccess({ isProduction: false }, { socketAddress: '127.0.0.1', clientAddress: '203.0.113.7' })).toBe('forbidden');
  });

  it('hides the route in production without a token, even from loopback', () => {
    expect(metricsAccess({ isProduction: true }, local)).toBe('not_found');
  });

  it('in production, admits the configured bearer token from anywhere and nothing else', () => {
    const remote = { socketAddress: '10.0.0.5', clientAddress: '10.0.0.5' };
    expect(metricsAccess({ isProduction: true, metricsToken: token }, { ...remote, authorization: `Bearer ${token}` })).toBe('allow');
    expect(metricsAccess({ isProduction: true, metricsToken: token }, { ...remote, authorization: `Bearer ${token}x` })).toBe('unauthorized');
    expect(metricsAccess({ isProduction: true, metricsToken: token }, local)).toBe('unauthorized');
  });
});
