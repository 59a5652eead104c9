/** The stable `code` of what `fn` throws, or `'no error'`: for asserting refusals by code in one line. */
export function thrownCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'no error';
}
