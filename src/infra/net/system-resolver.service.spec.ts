import { TestDnsServer } from '../../../test/support/dns/test-dns-server';
import { parseDnsServers, SystemResolverService } from './system-resolver.service';

describe('SystemResolverService against a real DNS server on loopback', () => {
  const dns = new TestDnsServer();
  let resolver: SystemResolverService;

  beforeAll(async () => {
    await dns.start();
  });
  afterAll(async () => {
    await dns.stop();
  });
  beforeEach(() => {
    resolver = new SystemResolverService({ servers: [dns.address], timeoutMs: 500 });
  });

  it('returns both the A and the AAAA addresses of a name, IPv4 first', async () => {
    dns.setA('dual.example.com', ['93.184.216.34', '93.184.216.35']).setAAAA('dual.example.com', '2606:2800:220:1::1');

    await expect(resolver.resolve('dual.example.com')).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '93.184.216.35', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });

  it('returns only the family that exists when the other answers NODATA', async () => {
    dns.setAAAA('v6only.example.com', '2606:4700::1');

    await expect(resolver.resolve('v6only.example.com')).resolves.toEqual([{ address: '2606:4700::1', family: 6 }]);
  });

  it('fails with ENOTFOUND for a name that does not exist', async () => {
    await expect(resolver.resolve('nowhere.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('fails with ENOTFOUND for a name that exists without address records', async () => {
    dns.setTxt('txtonly.example.com', [['hello']]);

    await expect(resolver.resolve('txtonly.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('fails the whole resolution when one family fails with SERVFAIL', async () => {
    dns.setA('broken.example.com', '93.184.216.34').setServfail('broken.example.com');

    await expect(resolver.resolve('broken.example.com')).rejects.toMatchObject({ code: 'ESERVFAIL' });
  });

  it('gives up after its timeout when the server answers too late', async () => {
    dns.setA('slow.example.com', '93.184.216.34').setSlow('slow.example.com', 2000);
    const started = Date.now();

    await expect(resolver.resolve('slow.example.com')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeLessThan(1900);
  });

  it('abandons queries in flight when cancelled', async () => {
    dns.setA('stalled.example.com', '93.184.216.34').setSlow('stalled.example.com', 3000);
    const patient = new SystemResolverService({ servers: [dns.address], timeoutMs: 10000 });
    const pending = patient.resolve('stalled.example.com');

    patient.cancel();

    await expect(pending).rejects.toMatchObject({ code: 'ECANCELLED' });
  });

  it('answers IP literals itself without asking the DNS server', async () => {
    const before = dns.queries.length;

    await expect(resolver.resolve('10.0.0.1')).resolves.toEqual([{ address: '10.0.0.1', family: 4 }]);
    await expect(resolver.resolve('[::1]')).resolves.toEqual([{ address: '::1', family: 6 }]);
    expect(dns.queries.length).toBe(before);
  });

  it('answers localhost names as loopback without asking the DNS server', async () => {
    const before = dns.queries.length;

    await expect(resolver.resolve('LocalHost.')).resolves.toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    await expect(resolver.resolve('idp.localhost')).resolves.toHaveLength(2);
    expect(dns.queries.length).toBe(before);
  });

  it('returns each TXT record with its character-strings kept apart', async () => {
    dns.setTxt('_svc-verify.example.com', [['first', 'second'], ['other']]);

    const records = await resolver.resolveTxt('_svc-verify.example.com');

    expect(records).toHaveLength(2);
    expect(records).toContainEqual(['first', 'second']);
    expect(records).toContainEqual(['other']);
  });
});

describe('parseDnsServers', () => {
  it('reads comma-separated IPv4 and bracketed IPv6 host:port entries', () => {
    expect(parseDnsServers(' 127.0.0.1:5353, [::1]:53 ,10.1.2.3:53')).toEqual([
      '127.0.0.1:5353',
      '[::1]:53',
      '10.1.2.3:53',
    ]);
  });

  it.each([[undefined], [''], ['   ']])('means "system resolvers" for %p', (value) => {
    expect(parseDnsServers(value)).toEqual([]);
  });

  it.each([
    ['127.0.0.1'],
    ['dns.example.com:53'],
    ['::1:53'],
    ['[127.0.0.1]:53'],
    ['127.0.0.1:0'],
    ['127.0.0.1:70000'],
    ['127.0.0.1:53,'],
  ])('refuses the malformed setting %p and names the bad entry', (value) => {
    expect(() => parseDnsServers(value)).toThrow(/DNS_SERVERS entry/);
  });

  it('produces values the resolver accepts', () => {
    expect(() => new SystemResolverService({ servers: parseDnsServers('127.0.0.1:5353,[::1]:5353') })).not.toThrow();
  });
});
