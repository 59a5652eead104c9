import { statSync } from 'node:fs';

/** Which file a path names right now (device and inode), or undefined when it names none. */
export function fileIdentity(file: string): string | undefined {
  try {
    const stat = statSync(file);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}
