import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isLoopback, listenerKey } from '../../../src/http/listener.ts';

describe('isLoopback', () => {
  const rows: [href: string, loopback: boolean][] = [
    ['http://127.0.0.1:15020/quitquitquit', true],
    ['http://127.1.2.3/q', true],
    ['http://localhost:15020/q', true],
    ['http://[::1]:15020/q', true],
    ['http://10.0.0.1:15020/q', false],
    ['http://example.com/q', false],
    ['http://128.0.0.1/q', false],
    ['http://[::2]/q', false],
    ['http://localhost.example.com/q', false],
  ];
  for (const [href, loopback] of rows) {
    test(`${href}: ${loopback ? 'loopback' : 'not loopback'}`, () => {
      assert.equal(isLoopback(new URL(href)), loopback);
    });
  }
});

describe('listenerKey: one listener, however a URL names it', () => {
  const rows: [a: string, b: string, same: boolean][] = [
    ['http://127.0.0.1:15020/quitquitquit', 'http://localhost:15020/other', true],
    ['http://[::1]:15020/a', 'http://127.0.0.2:15020/b', true],
    ['http://127.0.0.1/a', 'http://127.0.0.1:80/b', true],
    ['https://127.0.0.1/a', 'http://127.0.0.1:443/b', true],
    ['http://127.0.0.1:15020/a', 'http://127.0.0.1:15021/a', false],
    ['http://10.0.0.1:15020/a', 'http://127.0.0.1:15020/a', false],
  ];
  for (const [a, b, same] of rows) {
    test(`${a} and ${b}: ${same ? 'one' : 'two'}`, () => {
      assert.equal(listenerKey(new URL(a)) === listenerKey(new URL(b)), same);
    });
  }
});
