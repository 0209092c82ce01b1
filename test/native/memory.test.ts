import t from 'tap';
import { capMemory } from '../../src/native/memory.js';

const reading = { ramTotal: 32 * 2 ** 30, ramAvailable: 20 * 2 ** 30, swapTotal: 2 ** 30, swapAvailable: 2 ** 29 };

t.test(
  'capMemory: --memory-limit caps available and total RAM, leaves swap, and is a no-op without a limit',
  async (t) => {
    t.same(capMemory(reading, undefined), reading, 'no limit: unchanged');
    t.same(capMemory(reading, 24 * 2 ** 20), { ...reading, ramTotal: 24 * 2 ** 20, ramAvailable: 24 * 2 ** 20 });
    t.same(
      capMemory(reading, 24 * 2 ** 30),
      { ...reading, ramTotal: 24 * 2 ** 30 },
      'a limit above what is available caps the total only',
    );
    t.same(capMemory(reading, 64 * 2 ** 30), reading, 'a limit above the machine changes nothing');
  },
);
