// What a thrown value says, without casts: the errno code of a system error, and a message for any value.

/** The `code` of a Node system error (ENOENT, ENOSPC, ...), or undefined when the value has none. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
