import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { classifyLinuxInterfaces } from '../../src/native/sysfs.js';
import { classifyMacInterfaces, parseHardwarePorts } from '../../src/native/networksetup.js';
import { discoverInterfaces, joinAddresses } from '../../src/native/interfaces.js';
import { parseMeminfo, parseSwapUsage, parseSysctlMemsize, parseVmStat, readMemory } from '../../src/native/memory.js';

const fx = (p: string): string => fileURLToPath(new URL(`../fixtures/native/${p}`, import.meta.url));
const text = (p: string): string => readFileSync(fx(p), 'utf8');
const types = (list: readonly { name: string; type: string }[]): Record<string, string> =>
  Object.fromEntries(list.map((i) => [i.name, i.type]));

t.test('Linux sysfs captured on this VM (root namespace and a lab namespace)', async (t) => {
  const root = await classifyLinuxInterfaces(fx('sysfs-vm/root'));
  t.same(types(root), { eth0: 'ethernet', ifb0: 'unknown', ifb1: 'unknown', lo: 'unknown' });
  t.match(
    root.find((i) => i.name === 'eth0'),
    { driver: 'virtio_net', reason: /physical/ },
  );
  t.equal(root.find((i) => i.name === 'eth0')?.speedMbps, undefined, 'speed -1 means the OS does not say');
  const ns = await classifyLinuxInterfaces(fx('sysfs-vm/lab-ns'));
  t.same(
    types(ns),
    { br0: 'unknown', lo: 'unknown', tap0: 'unknown', tun0: 'unknown', vethx: 'unknown', vethy: 'unknown' },
    'virtual devices stay unknown',
  );
  t.equal(ns.find((i) => i.name === 'vethx')?.speedMbps, 10000, 'veth reports 10000');
  t.match(
    ns.find((i) => i.name === 'br0'),
    { reason: /bridge/ },
  );
  t.match(
    ns.find((i) => i.name === 'tun0'),
    { reason: /tun/ },
  );
  const labelled = await classifyLinuxInterfaces(fx('sysfs-vm/lab-ns'), { vethx: 'thunderbolt' });
  t.match(
    labelled.find((i) => i.name === 'vethx'),
    { type: 'thunderbolt', reason: 'override' },
    '--iface-type wins',
  );
});

t.test(
  'Linux sysfs workstation layout (wifi, thunderbolt-net, e1000e, ixgbe, usb r8152, docker, wireguard)',
  async (t) => {
    const ws = await classifyLinuxInterfaces(fx('sysfs-workstation'));
    t.same(types(ws), {
      docker0: 'unknown',
      eno1: 'ethernet',
      enp5s0: 'ethernet',
      enx00e04c680001: 'ethernet',
      lo: 'unknown',
      tailscale0: 'unknown',
      thunderbolt0: 'thunderbolt',
      veth1a2b3c: 'unknown',
      wg0: 'unknown',
      wlp2s0: 'wifi',
    });
    t.equal(ws.find((i) => i.name === 'enp5s0')?.speedMbps, 10000);
    t.equal(ws.find((i) => i.name === 'thunderbolt0')?.driver, 'thunderbolt-net');
  },
);

t.test('macOS networksetup -listallhardwareports', async (t) => {
  const studio = parseHardwarePorts(text('networksetup-mac-studio.txt'));
  t.equal(studio.length, 9);
  t.same(studio[0], { port: 'Ethernet', device: 'en0', mac: '1c:1d:d3:e0:11:01' });
  t.same(types(classifyMacInterfaces(text('networksetup-mac-studio.txt'))), {
    en0: 'ethernet',
    en1: 'wifi',
    bridge0: 'thunderbolt',
    en2: 'thunderbolt',
    en3: 'thunderbolt',
    en4: 'thunderbolt',
    en5: 'thunderbolt',
    en8: 'ethernet',
    en9: 'maybe_ethernet',
  });
  t.same(types(classifyMacInterfaces(text('networksetup-macbook.txt'), { en7: 'unknown', en6: 'ethernet' })), {
    en0: 'wifi',
    bridge0: 'thunderbolt',
    en1: 'thunderbolt',
    en2: 'thunderbolt',
    en6: 'ethernet',
    en7: 'unknown',
  });
  t.same(
    types(classifyMacInterfaces(text('networksetup-macbook.txt'))).en7,
    'maybe_ethernet',
    'other en* beyond en0/en1',
  );
  t.same(parseHardwarePorts('garbage\n\nHardware Port: X\n'), [], 'incomplete blocks are ignored');
});

t.test('addresses joined: loopback and link-local never listed, unknown stays unknown', async (t) => {
  const list = await discoverInterfaces({
    platform: 'linux',
    sysRoot: fx('sysfs-workstation'),
    overrides: { veth1a2b3c: 'ethernet' },
    addresses: {
      lo: [
        { address: '127.0.0.1', netmask: '255.0.0.0', family: 'IPv4', mac: '', internal: true, cidr: '127.0.0.1/8' },
      ],
      eno1: [
        { address: '192.168.1.10', netmask: '255.255.255.0', family: 'IPv4', mac: '', internal: false, cidr: null },
        {
          address: 'fe80::1',
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          mac: '',
          internal: false,
          cidr: null,
          scopeid: 2,
        },
        {
          address: 'fd00::10',
          netmask: 'ffff:ffff:ffff:ffff::',
          family: 'IPv6',
          mac: '',
          internal: false,
          cidr: null,
          scopeid: 0,
        },
      ],
      thunderbolt0: [
        { address: '169.254.10.2', netmask: '255.255.0.0', family: 'IPv4', mac: '', internal: false, cidr: null },
      ],
      veth1a2b3c: [
        { address: '10.0.0.2', netmask: '255.255.255.0', family: 'IPv4', mac: '', internal: false, cidr: null },
      ],
      mystery0: [
        { address: '10.9.0.2', netmask: '255.255.255.0', family: 'IPv4', mac: '', internal: false, cidr: null },
      ],
    },
  });
  t.same(
    list.map((i) => [i.name, i.type, i.ips]),
    [
      ['eno1', 'ethernet', ['192.168.1.10', 'fd00::10']],
      ['mystery0', 'unknown', ['10.9.0.2']],
      ['thunderbolt0', 'thunderbolt', ['169.254.10.2']],
      ['veth1a2b3c', 'ethernet', ['10.0.0.2']],
    ],
  );
  t.equal(list[0]?.speedMbps, 1000);
  t.same(joinAddresses([], {}), []);
});

t.test('memory: /proc/meminfo, vm_stat, sysctl', async (t) => {
  const vm = parseMeminfo(text('meminfo-vm.txt'));
  t.ok(vm.ramTotal > 1e9 && vm.ramAvailable > 0 && vm.ramAvailable <= vm.ramTotal);
  t.same(parseMeminfo(text('meminfo-noavail.txt')), {
    ramTotal: 2048000 * 1024,
    ramAvailable: (512000 + 10240 + 204800) * 1024,
    swapTotal: 0,
    swapAvailable: 0,
  });
  t.same(parseVmStat(text('vm_stat-mac-studio.txt')), { pageSize: 16384, availableBytes: (93450 + 1198034) * 16384 });
  t.equal(parseSysctlMemsize(text('sysctl-hw.memsize-mac-studio.txt')), 68719476736);
  t.same(parseSwapUsage(text('sysctl-vm.swapusage-mac-studio.txt')), {
    total: 2048 * 1024 ** 2,
    free: Math.round(1023.5 * 1024 ** 2),
  });
  if (process.platform === 'linux') {
    const live = await readMemory();
    t.ok(live.ramTotal > 0 && live.ramAvailable > 0, 'reads this machine');
  }
});
