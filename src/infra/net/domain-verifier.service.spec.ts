import { TestDnsServer } from '../../../test/support/dns/test-dns-server';
import { DomainVerifierService } from './domain-verifier.service';
import { TxtResolver } from './resolver.types';
import { SystemResolverService } from './system-resolver.service';

describe('DomainVerifierService', () => {
  const verifier = new DomainVerifierService({ resolver: { resolveTxt: () => Promise.resolve([]) } });

  it('names the record _svc-verify.<domain>', () => {
    expect(verifier.recordName('example.com')).toBe('_svc-verify.example.com');
  });

  it('gives the record value svc-domain-verify=<token>', () => {
    expect(verifier.recordValue('abc_-123')).toBe('svc-domain-verify=abc_-123');
  });

  it('makes tokens of 32 random bytes in base64url, different each time', () => {
    const tokens = new Set(Array.from({ length: 20 }, () => verifier.newToken()));

    expect(tokens.size).toBe(20);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    }
  });

  describe('with an injected resolver', () => {
    const failingWith = (code: string): TxtResolver => ({
      resolveTxt: () => Promise.reject(Object.assign(new Error(code), { code })),
    });

    it.each([['ENOTFOUND'], ['ENODATA']])('reports %s as missing', async (code) => {
      await expect(new DomainVerifierService({ resolver: failingWith(code) }).check('example.com', 't')).resolves.toBe(
        'missing',
      );
    });

    it.each([['ETIMEOUT'], ['ESERVFAIL'], ['EREFUSED'], ['ECONNREFUSED']])('reports %s as an error', async (code) => {
      await expect(new DomainVerifierService({ resolver: failingWith(code) }).check('example.com', 't')).resolves.toBe(
        'error',
      );
    });

    it('reports an error when the resolver never answers within the timeout', async () => {
      const hanging = new DomainVerifierService({ resolver: { resolveTxt: () => new Promise(() => undefined) }, timeoutMs: 50 });

      await expect(hanging.check('example.com', 't')).resolves.toBe('error');
    });

    it('asks for the _svc-verify name of the domain', async () => {
      const asked: string[] = [];
      const recording = new DomainVerifierService({
        resolver: { resolveTxt: (name) => (asked.push(name), Promise.resolve([])) },
      });

      await recording.check('example.com', 't');

      expect(asked).toEqual(['_svc-verify.example.com']);
    });
  });
});

describe('DomainVerifierService against a real DNS server on loopback', () => {
  const dns = new TestDnsServer();
  const token = 'Zm9vYmFyLXRva2VuLXRoYXQtaXMtbG9uZy1lbm91Z2gt';
  let verifier: DomainVerifierService;

  beforeAll(async () => {
    await dns.start();
  });
  afterAll(async () => {
    await dns.stop();
  });
  beforeEach(() => {
    verifier = new DomainVerifierService({ resolver: new SystemResolverService({ servers: [dns.address], timeoutMs: 1000 }), timeoutMs: 1500 });
  });

  it('verifies a domain whose TXT record holds the token', async () => {
    dns.setTxt('_svc-verify.single.example', [[`svc-domain-verify=${token}`]]);

    await expect(verifier.check('single.example', token)).resolves.toBe('verified');
  });

  it('joins the character-strings of a TXT record split into several pieces', async () => {
    dns.setTxt('_svc-verify.split.example', [['svc-domain-', 'verify=', token.slice(0, 10), token.slice(10)]]);

    await expect(verifier.check('split.example', token)).resolves.toBe('verified');
  });

  it('finds the token among several TXT records at the name', async () => {
    dns.setTxt('_svc-verify.many.example', [
      ['v=spf1 -all'],
      ['svc-domain-verify=someone-elses-token'],
      [`svc-domain-verify=${token}`],
    ]);

    await expect(verifier.check('many.example', token)).resolves.toBe('verified');
  });

  it('does not join separate TXT records into one value', async () => {
    dns.setTxt('_svc-verify.apart.example', [['svc-domain-verify='], [token]]);

    await expect(verifier.check('apart.example', token)).resolves.toBe('missing');
  });

  it('reports missing when the record holds another token', async () => {
    dns.setTxt('_svc-verify.other.example', [[`svc-domain-verify=${token}x`], [`svc-domain-verify=${token.slice(1)}`]]);

    await expect(verifier.check('other.example', token)).resolves.toBe('missing');
  });

  it('reports missing when the token is published without the prefix', async () => {
    dns.setTxt('_svc-verify.bare.example', [[token]]);

    await expect(verifier.check('bare.example', token)).resolves.toBe('missing');
  });

  it('reports missing when the name does not exist (NXDOMAIN)', async () => {
    await expect(verifier.check('absent.example', token)).resolves.toBe('missing');
  });

  it('reports missing when the name exists without TXT records (NODATA)', async () => {
    dns.setA('_svc-verify.nodata.example', '93.184.216.34');

    await expect(verifier.check('nodata.example', token)).resolves.toBe('missing');
  });

  it('reports missing once a published record is removed', async () => {
    dns.setTxt('_svc-verify.removed.example', [[`svc-domain-verify=${token}`]]);
    await expect(verifier.check('removed.example', token)).resolves.toBe('verified');

    dns.remove('_svc-verify.removed.example');

    await expect(verifier.check('removed.example', token)).resolves.toBe('missing');
  });

  it('reports an error when the server answers SERVFAIL', async () => {
    dns.setTxt('_svc-verify.servfail.example', [[`svc-domain-verify=${token}`]]).setServfail('_svc-verify.servfail.example');

    await expect(verifier.check('servfail.example', token)).resolves.toBe('error');
  });

  it('reports an error, within its timeout, when the server answers too late', async () => {
    dns.setTxt('_svc-verify.slow.example', [[`svc-domain-verify=${token}`]]).setSlow('_svc-verify.slow.example', 3000);
    const started = Date.now();

    await expect(verifier.check('slow.example', token)).resolves.toBe('error');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('applies its own timeout even when the resolver would wait longer', async () => {
    dns.setTxt('_svc-verify.slower.example', [[`svc-domain-verify=${token}`]]).setSlow('_svc-verify.slower.example', 3000);
    const resolver = new SystemResolverService({ servers: [dns.address], timeoutMs: 10000 });
    const patient = new DomainVerifierService({ resolver, timeoutMs: 200 });
    const started = Date.now();

    try {
      await expect(patient.check('slower.example', token)).resolves.toBe('error');
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      resolver.cancel();
    }
  });
});
