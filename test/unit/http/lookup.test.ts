import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Address, boundedLookup, withoutDns } from '../../../src/http/lookup.ts';

describe('name lookups', () => {
  test('literals and localhost never reach DNS', () => {
    assert.deepEqual(withoutDns('127.0.0.1'), [{ address: '127.0.0.1', family: 4 }]);
    assert.deepEqual(withoutDns('[::1]'), [{ address: '::1', family: 6 }]);
    assert.deepEqual(withoutDns('LOCALHOST'), [{ address: '127.0.0.1', family: 4 }]);
    assert.equal(withoutDns('istio.example'), undefined);
  });

  test('one lookup in flight per name, each caller bounded; a black hole does not hold up localhost', async () => {
    const calls: string[] = [];
    const never = new Promise<Address[]>(() => undefined);
    const lookup = boundedLookup((host) => {
      calls.push(host);
      return never;
    }, 20);
    const ask = (host: string) =>
      new Promise<string>((resolve) =>
        lookup(host, {}, (error, address) => resolve(error === null ? String(address) : String(error.code))),
      );
    const answers = await Promise.all([ask('black.hole'), ask('black.hole'), ask('black.hole'), ask('localhost')]);
    assert.deepEqual(answers, ['EAI_AGAIN', 'EAI_AGAIN', 'EAI_AGAIN', '127.0.0.1']);
    assert.deepEqual(calls, ['black.hole']);
    assert.equal(await ask('black.hole'), 'EAI_AGAIN');
    assert.deepEqual(calls, ['black.hole'], 'still the first lookup, shared');
  });
});
