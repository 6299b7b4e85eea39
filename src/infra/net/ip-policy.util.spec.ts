import { isLoopbackAddress, isPublicAddress } from './ip-policy.util';

describe('isPublicAddress', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network"'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8 upper bound'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT upper bound'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback /8'],
    ['169.254.169.254', 'cloud metadata (link-local)'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 upper bound'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private 192.168/16'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking upper bound'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.7', 'TEST-NET-3'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'limited broadcast'],
  ])('refuses the IPv4 address %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback, uncompressed'],
    ['::10.0.0.1', 'deprecated IPv4-compatible'],
    ['fc00::1', 'unique-local fc00::/7'],
    ['fd00::1', 'unique-local fd00::/8'],
    ['FD12:3456:789a::1', 'unique-local in upper case'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'scoped link-local'],
    ['febf::1', 'link-local upper bound'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['64:ff9b::a00:1', 'NAT64 well-known prefix'],
    ['64:ff9b::808:808', 'NAT64 even with a public embedded address'],
    ['64:ff9b:1::1', 'NAT64 local-use prefix'],
    ['100::1', 'discard-only'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:0a00:0001', 'IPv4-mapped private in hex'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::FFFF:7f00:1', 'IPv4-mapped loopback in upper-case hex'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata address'],
    ['::ffff:0:10.0.0.1', 'IPv4-translated'],
    ['2002:a00:1::1', '6to4 embedding 10.0.0.1'],
    ['2002:7f00:1::', '6to4 embedding 127.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 embedding 169.254.169.254'],
    ['4000::1', 'outside global unicast'],
  ])('refuses the IPv6 address %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['93.184.216.34'],
    ['100.63.255.255'],
    ['100.128.0.0'],
    ['172.15.255.255'],
    ['172.32.0.0'],
    ['192.167.255.255'],
    ['198.20.0.0'],
    ['223.255.255.255'],
    ['2606:4700:4700::1111'],
    ['2a00:1450:4001:81b::200e'],
    ['::ffff:8.8.8.8'],
    ['::ffff:808:808'],
    ['2002:808:808::1'],
  ])('accepts the public address %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each([['localhost'], ['example.com'], [''], ['1.2.3'], ['[::1]'], ['::ffff:10.0.0.1.5']])(
    'refuses %p, which is not an IP literal',
    (value) => {
      expect(isPublicAddress(value)).toBe(false);
    },
  );
});

describe('isLoopbackAddress', () => {
  it.each([['127.0.0.1'], ['127.1.2.3'], ['::1'], ['::ffff:127.0.0.1']])('recognises %s as loopback', (ip) => {
    expect(isLoopbackAddress(ip)).toBe(true);
  });

  it.each([['10.0.0.1'], ['::'], ['::2'], ['8.8.8.8'], ['localhost'], ['fe80::1%lo']])(
    'does not treat %s as loopback',
    (ip) => {
      expect(isLoopbackAddress(ip)).toBe(false);
    },
  );
});
