// One HTTP attempt's outcome, classified by what it means for a retry. No HTTP client here: main,
// readiness and quit read attempts without loading undici.

export type Attempt =
  | { readonly kind: 'response'; readonly status: number; readonly body: string }
  | { readonly kind: 'refused' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'failed'; readonly code: string };

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Network errors by what they mean for a retry. */
export function classify(error: unknown): Attempt {
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') return { kind: 'refused' };
  if (RESET_CODES.has(code)) return { kind: 'reset' };
  if (TIMEOUT_CODES.has(code)) return { kind: 'timeout' };
  return { kind: 'failed', code };
}

function errorCode(error: unknown): string {
  // undici wraps connection errors; the system error is the cause, sometimes an AggregateError.
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const record = current as { code?: unknown; cause?: unknown; errors?: unknown };
    if (Array.isArray(record.errors) && record.errors.length > 0) return errorCode(record.errors[0]);
    if (typeof record.code === 'string' && record.code !== 'UND_ERR') {
      if (!record.code.startsWith('UND_ERR') || record.cause === undefined) return record.code;
    }
    current = record.cause;
  }
  return error instanceof Error ? error.name : 'EUNKNOWN';
}

/** How an attempt reads in a log line. */
export function describeAttempt(attempt: Attempt): string {
  switch (attempt.kind) {
    case 'response': {
      const body = attempt.body.trim();
      return body === '' ? `HTTP ${attempt.status}` : `HTTP ${attempt.status} ${JSON.stringify(body.slice(0, 80))}`;
    }
    case 'refused':
      return 'connection refused';
    case 'reset':
      return 'connection reset';
    case 'timeout':
      return 'timed out';
    case 'aborted':
      return 'cancelled';
    case 'failed':
      return attempt.code;
  }
}
