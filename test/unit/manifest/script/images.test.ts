// What sh is in an image (src/manifest/script/images.ts): busybox's ash, bash as sh, dash, or dash assumed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Dialect } from '../../../../src/manifest/script/dialect.ts';
import { shOfImage } from '../../../../src/manifest/script/images.ts';

test("sh is what the image's sh is: busybox's ash, bash, dash, or dash assumed", () => {
  const cases: [string, Dialect, boolean][] = [
    ['alpine:3.20', 'ash', true],
    ['busybox', 'ash', true],
    ['docker.io/curlimages/curl:8.8.0', 'ash', true],
    ['python:3.12-alpine', 'ash', true],
    ['gcr.io/distroless/base:debug', 'ash', true],
    ['debian:12', 'dash', true],
    ['ubuntu', 'dash', true],
    ['python:3.12-slim', 'dash', true],
    ['node:20', 'dash', true],
    ['registry.access.redhat.com/ubi9/ubi-minimal:9.4', 'bash-posix', true],
    ['amazonlinux:2023', 'bash-posix', true],
    ['registry.example/app:1.0', 'dash', false],
  ];
  for (const [image, dialect, known] of cases) assert.deepEqual(shOfImage(image), { dialect, known }, image);
});
