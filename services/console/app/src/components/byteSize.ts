const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];

/** Bytes in decimal units, as disks are sold, to three significant digits; `unknown size` for null. */
export function byteSize(bytes: number | null): string {
  if (bytes === null) return 'unknown size';
  const power = Math.min(units.length - 1, Math.max(0, Math.floor(Math.log10(Math.max(bytes, 1)) / 3)));
  return `${Number((bytes / 1000 ** power).toPrecision(3))} ${units[power]}`;
}
