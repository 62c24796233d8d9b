import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressPolicy, classifyAddress, parseCidrs, type AddressClass } from './address-policy.js';

describe('classifyAddress', () => {
  // First and last address of each range, plus neighbours just outside where a boundary is easy to get wrong.
  const cases: Array<[string, AddressClass]> = [
    ['0.0.0.0', 'unspecified'], ['0.255.255.255', 'unspecified'],
    ['127.0.0.1', 'loopback'], ['127.0.0.0', 'loopback'], ['127.255.255.255', 'loopback'],
    ['10.0.0.0', 'private'], ['10.255.255.255', 'private'], ['11.0.0.0', 'public'], ['9.255.255.255', 'public'],
    ['172.16.0.0', 'private'], ['172.31.255.255', 'private'], ['172.15.255.255', 'public'], ['172.32.0.0', 'public'],
    ['192.168.0.0', 'private'], ['192.168.255.255', 'private'], ['192.169.0.0', 'public'],
    ['100.64.0.0', 'private'], ['100.127.255.255', 'private'], ['100.63.255.255', 'public'], ['100.128.0.0', 'public'],
    ['169.254.169.254', 'metadata'], ['169.254.170.2', 'metadata'],
    ['169.254.0.0', 'link-local'], ['169.254.169.253', 'link-local'], ['169.254.255.255', 'link-local'], ['169.255.0.0', 'public'],
    ['224.0.0.0', 'multicast'], ['239.255.255.255', 'multicast'], ['223.255.255.255', 'public'],
    ['240.0.0.0', 'reserved'], ['255.255.255.254', 'reserved'], ['255.255.255.255', 'reserved'],
    ['192.0.0.0', 'reserved'], ['192.0.0.255', 'reserved'], ['192.0.1.0', 'public'],
    ['192.0.2.0', 'reserved'], ['192.0.2.255', 'reserved'],
    ['198.18.0.0', 'reserved'], ['198.19.255.255', 'reserved'], ['198.17.255.255', 'public'], ['198.20.0.0', 'public'],
    ['198.51.100.0', 'reserved'], ['198.51.100.255', 'reserved'],
    ['203.0.113.0', 'reserved'], ['203.0.113.255', 'reserved'],
    ['93.184.216.34', 'public'], ['8.8.8.8', 'public'], ['1.1.1.1', 'public'],
    ['::', 'unspecified'], ['0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fd00:ec2::254', 'metadata'], ['fd00:ec2:0:0:0:0:0:254', 'metadata'], ['fd00:ec2::253', 'private'],
    ['fc00::', 'private'], ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'private'], ['fbff:ffff::', 'public'],
    ['fe80::', 'link-local'], ['fe80::1%eth0', 'link-local'], ['febf:ffff::1', 'link-local'], ['fec0::', 'private'], ['2002:7f00:1::', 'reserved'], ['::7f00:1', 'reserved'],
    ['ff00::', 'multicast'], ['ff02::1', 'multicast'], ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
    ['2001:db8::', 'reserved'], ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved'], ['2001:db9::', 'public'],
    ['2606:4700:4700::1111', 'public'], ['2001:4860:4860::8888', 'public'],
    // IPv4-mapped IPv6, in dotted and hex spellings, is the IPv4 address it maps.
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::FFFF:7F00:1', 'loopback'], ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'], ['::ffff:a9fe:a9fe', 'metadata'], ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'], ['::ffff:93.184.216.34', 'public'],
    // NAT64 carries an IPv4 address too.
    ['64:ff9b::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'metadata'], ['64:ff9b::c0a8:1', 'private'], ['64:ff9b::808:808', 'public'],
  ];
  for (const [ip, cls] of cases) it(`${ip} → ${cls}`, () => assert.equal(classifyAddress(ip), cls));

  it('throws TypeError for anything that is not an IP literal', () => {
    for (const bad of ['', 'localhost', 'example.com', '127.1', '2130706433', '0x7f.0.0.1', '[::1]', '256.0.0.1', '127.0.0.1/8', ':::1']) {
      assert.throws(() => classifyAddress(bad), TypeError, bad);
    }
  });
});

describe('parseCidrs', () => {
  it('parses a comma-separated list, defaulting bare addresses to a host prefix', () => {
    assert.deepEqual(parseCidrs('127.0.0.0/8, ::1/128'), ['127.0.0.0/8', '::1/128']);
    assert.deepEqual(parseCidrs(' 10.1.2.3 ,fd00::1,192.168.0.0/16,'), ['10.1.2.3/32', 'fd00::1/128', '192.168.0.0/16']);
    assert.deepEqual(parseCidrs('0.0.0.0/0,::/0'), ['0.0.0.0/0', '::/0']);
  });

  it('returns [] for empty or blank text', () => {
    assert.deepEqual(parseCidrs(''), []);
    assert.deepEqual(parseCidrs('   '), []);
    assert.deepEqual(parseCidrs(' , '), []);
  });

  it('stores IPv4-mapped ranges in IPv4 form, since addresses are checked that way', () => {
    assert.deepEqual(parseCidrs('::ffff:127.0.0.0/104, ::ffff:a00:1'), ['127.0.0.0/8', '10.0.0.1/32']);
  });

  const bad: Array<[string, string]> = [
    ['localhost', 'localhost'], ['10.0.0.0/33', '10.0.0.0/33'], ['::1/129', '::1/129'], ['10.0.0.0/', '10.0.0.0/'],
    ['10.0.0.0/-1', '10.0.0.0/-1'], ['10.0.0.0/8/8', '10.0.0.0/8/8'], ['10.0.0.0/ 8', '10.0.0.0/ 8'], ['10.0.0.0/0x8', '10.0.0.0/0x8'],
    ['300.0.0.0/8', '300.0.0.0/8'], ['fe80::1%eth0/64', 'fe80::1%eth0/64'], ['127.0.0.0/8, 10.0.0.0/99', '10.0.0.0/99'], ['*', '*'],
  ];
  for (const [text, entry] of bad) {
    it(`rejects ${JSON.stringify(text)}, naming ${JSON.stringify(entry)}`, () => {
      assert.throws(() => parseCidrs(text), (e: unknown) => e instanceof Error && e.message.includes(JSON.stringify(entry)));
    });
  }
});

describe('AddressPolicy.checkAddress', () => {
  it('allows public addresses and refuses every other class by default', () => {
    const policy = new AddressPolicy([]);
    assert.deepEqual(policy.checkAddress('93.184.216.34'), { allowed: true, address: '93.184.216.34', class: 'public' });
    assert.deepEqual(policy.checkAddress('2606:4700:4700::1111'), { allowed: true, address: '2606:4700:4700::1111', class: 'public' });
    for (const ip of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '169.254.1.1', '0.0.0.0', '224.0.0.1', '198.51.100.7', '::1', '::', 'fd00:ec2::254', 'fd12::1', 'fe80::1%eth0', 'ff02::1', '2001:db8::1', '::ffff:7f00:1', '64:ff9b::a00:1']) {
      const verdict = policy.checkAddress(ip);
      assert.equal(verdict.allowed, false, ip);
      assert.ok(!verdict.allowed && verdict.reason === 'blocked_address' && verdict.address === ip, ip);
    }
  });

  it('allows a non-public address inside an allow-listed CIDR, and nothing else', () => {
    const policy = new AddressPolicy(parseCidrs('127.0.0.0/8, 10.1.0.0/16, 169.254.169.254'));
    assert.deepEqual(policy.checkAddress('127.8.9.10'), { allowed: true, address: '127.8.9.10', class: 'loopback' });
    assert.equal(policy.checkAddress('10.1.2.3').allowed, true);
    assert.equal(policy.checkAddress('10.2.0.1').allowed, false);
    assert.equal(policy.checkAddress('169.254.169.254').allowed, true);
    assert.equal(policy.checkAddress('169.254.170.2').allowed, false);
    assert.equal(policy.checkAddress('::1').allowed, false);
  });

  it('checks IPv4-mapped IPv6 as its IPv4 address against the allow-list', () => {
    const v4 = new AddressPolicy(['127.0.0.0/8']);
    assert.deepEqual(v4.checkAddress('::ffff:127.0.0.1'), { allowed: true, address: '::ffff:127.0.0.1', class: 'loopback' });
    assert.equal(v4.checkAddress('::ffff:7f00:1').allowed, true);
    assert.equal(v4.checkAddress('::ffff:10.0.0.1').allowed, false);
    // A mapped entry in the allow-list covers the plain IPv4 address, too.
    const mapped = new AddressPolicy(['::ffff:127.0.0.1']);
    assert.equal(mapped.checkAddress('127.0.0.1').allowed, true);
    assert.equal(mapped.checkAddress('127.0.0.2').allowed, false);
  });

  it('keeps the IPv6 allow-list for IPv6: [::1/128] allows ::1 only', () => {
    const policy = new AddressPolicy(['::1/128']);
    assert.deepEqual(policy.checkAddress('::1'), { allowed: true, address: '::1', class: 'loopback' });
    assert.equal(policy.checkAddress('0:0:0:0:0:0:0:1').allowed, true);
    assert.equal(policy.checkAddress('127.0.0.1').allowed, false);
    assert.equal(policy.checkAddress('::ffff:127.0.0.1').allowed, false);
    assert.equal(policy.checkAddress('::').allowed, false);
    assert.equal(policy.checkAddress('fe80::1').allowed, false);
  });

  it('never lets an IPv6 range admit IPv4 addresses (BlockList alone would match 10.0.0.1 against ::/0)', () => {
    const policy = new AddressPolicy(['::/0']);
    assert.equal(policy.checkAddress('fd12::1').allowed, true);
    assert.equal(policy.checkAddress('10.0.0.1').allowed, false);
    assert.equal(policy.checkAddress('::ffff:10.0.0.1').allowed, false);
  });

  it('allows a NAT64 address when either its IPv4 address or the NAT64 range is allow-listed', () => {
    assert.equal(new AddressPolicy(['10.0.0.0/8']).checkAddress('64:ff9b::a00:1').allowed, true);
    assert.equal(new AddressPolicy(['64:ff9b::/96']).checkAddress('64:ff9b::a00:1').allowed, true);
    assert.equal(new AddressPolicy(['192.168.0.0/16']).checkAddress('64:ff9b::a00:1').allowed, false);
  });

  it('throws TypeError for a non-IP, and the constructor rejects a bad allow-list entry', () => {
    assert.throws(() => new AddressPolicy([]).checkAddress('example.com'), TypeError);
    assert.throws(() => new AddressPolicy(['10.0.0.0/40']), /10\.0\.0\.0\/40/);
  });
});

describe('AddressPolicy.checkHost on WHATWG URL hostnames', () => {
  // WHATWG URL parsing turns decimal, hex and octal IPv4 into dotted quads before we see the host.
  const local = ['http://2130706433/', 'http://0x7f.0.0.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://localhost:8080/', 'http://foo.localhost/', 'http://LOCALHOST./'];
  const refusedUrls = [...local, 'http://[::1]/', 'http://169.254.169.254/', 'http://10.0.0.1/', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://metadata/', 'http://0/', 'http://[::]/'];
  const hostOf = (u: string) => new URL(u).hostname;

  it('normalises alternative IPv4 notations to dotted quads', () => {
    for (const u of ['http://2130706433/', 'http://0x7f.0.0.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://0x7f000001/']) assert.equal(hostOf(u), '127.0.0.1', u);
    assert.equal(hostOf('http://[::ffff:127.0.0.1]/'), '[::ffff:7f00:1]');
  });

  for (const u of refusedUrls) {
    it(`refuses ${u} without an allow-list`, () => {
      const verdict = new AddressPolicy([]).checkHost(hostOf(u));
      assert.ok('allowed' in verdict && !verdict.allowed && verdict.reason === 'blocked_address', JSON.stringify(verdict));
    });
  }

  it('with allow-list [127.0.0.0/8] allows only the 127.x and localhost URLs', () => {
    const policy = new AddressPolicy(['127.0.0.0/8']);
    for (const u of local) {
      const verdict = policy.checkHost(hostOf(u));
      assert.ok('allowed' in verdict && verdict.allowed && verdict.class === 'loopback', `${u}: ${JSON.stringify(verdict)}`);
    }
    assert.deepEqual(policy.checkHost(hostOf('http://localhost:8080/')), { allowed: true, address: '127.0.0.1', class: 'loopback' });
    assert.deepEqual(policy.checkHost(hostOf('http://[::ffff:127.0.0.1]/')), { allowed: true, address: '::ffff:7f00:1', class: 'loopback' });
    for (const u of refusedUrls.filter((x) => !local.includes(x))) {
      const verdict = policy.checkHost(hostOf(u));
      assert.ok('allowed' in verdict && !verdict.allowed, u);
    }
  });

  it('with allow-list [::1/128] allows http://[::1]/ but not 127.0.0.1 or localhost', () => {
    const policy = new AddressPolicy(['::1/128']);
    assert.deepEqual(policy.checkHost(hostOf('http://[::1]/')), { allowed: true, address: '::1', class: 'loopback' });
    for (const u of ['http://127.0.0.1/', 'http://localhost/', 'http://[::ffff:127.0.0.1]/']) {
      const verdict = policy.checkHost(hostOf(u));
      assert.ok('allowed' in verdict && !verdict.allowed, u);
    }
  });

  it('classifies the metadata names as metadata, allowed only when 169.254.169.254 is allow-listed', () => {
    for (const name of ['metadata.google.internal', 'metadata', 'METADATA.google.internal.']) {
      assert.deepEqual(new AddressPolicy([]).checkHost(name), { allowed: false, address: '169.254.169.254', class: 'metadata', reason: 'blocked_address' });
      assert.deepEqual(new AddressPolicy(['169.254.169.254/32']).checkHost(name), { allowed: true, address: '169.254.169.254', class: 'metadata' });
    }
  });

  it('allows a public literal IP and asks for resolution of any other name', () => {
    const policy = new AddressPolicy([]);
    assert.deepEqual(policy.checkHost(hostOf('http://93.184.216.34/')), { allowed: true, address: '93.184.216.34', class: 'public' });
    assert.deepEqual(policy.checkHost(hostOf('https://[2606:4700:4700::1111]:8443/x')), { allowed: true, address: '2606:4700:4700::1111', class: 'public' });
    for (const name of ['example.com', 'localhost.example.com', 'metadata.example', 'notlocalhost', 'internal']) {
      assert.deepEqual(policy.checkHost(name), { needsResolution: true }, name);
    }
  });

  it('throws TypeError on an empty host or a bracketed non-IPv6 host', () => {
    const policy = new AddressPolicy([]);
    assert.throws(() => policy.checkHost(''), TypeError);
    assert.throws(() => policy.checkHost('[127.0.0.1]'), TypeError);
    assert.throws(() => policy.checkHost('[::1'), TypeError);
  });
});
