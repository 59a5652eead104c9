import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../services/platform/repoRoot.ts';

/**
 * ARCHITECTURE.md and the reference pages under docs/ are where a newcomer looks for a file: a path they name that
 * moved, or a link to a section that was renamed, sends the reader nowhere. Every repository path in a code span
 * (`<name>` standing for any one entry, `{a,b}` for either) must exist, and every relative link and its anchor resolve.
 */
const pages = [
  'ARCHITECTURE.md',
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const productFolders = /^(schemas|services|projections|plugins|daemon|scripts|test|docs|bench|examples)\//;
/** Written by runs, not kept in the repository. */
const writtenAtRunTime = (path: string) => path.startsWith('test/artifacts/');

const withoutCodeBlocks = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

function expandBraces(path: string): string[] {
  const match = /\{([^}]*)\}/.exec(path);
  if (!match) return [path];
  return match[1]!.split(',').flatMap((alternative) => expandBraces(path.slice(0, match.index) + alternative + path.slice(match.index + match[0].length)));
}

/** Whether a path exists, a segment holding `<…>` matching any entry of its folder that fits around it. */
function pathExists(path: string): boolean {
  const segments = path.split('/').filter((s) => s !== '');
  const walk = (dir: string, rest: string[]): boolean => {
    if (rest.length === 0) return true;
    const [segment, ...others] = rest as [string, ...string[]];
    if (!segment.includes('<')) return existsSync(join(dir, segment)) && walk(join(dir, segment), others);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
    const pattern = new RegExp(
      `^${segment
        .split(/<[^>]*>/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.+')}$`,
    );
    return readdirSync(dir).some((entry) => pattern.test(entry) && walk(join(dir, entry), others));
  };
  return walk(repoRoot, segments);
}

const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replaceAll(' ', '-');
const anchorsOf = (page: string) => new Set([...withoutCodeBlocks(readFileSync(join(repoRoot, page), 'utf8')).matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1]!)));

describe.each(pages)('%s', (page) => {
  const text = withoutCodeBlocks(readFileSync(join(repoRoot, page), 'utf8'));

  it('names repository paths that exist', () => {
    const named = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!.replace(/[.,;:]+$/, '')).filter((span) => productFolders.test(span));
    const missing = named
      .filter((path) => !writtenAtRunTime(path))
      .flatMap(expandBraces)
      .filter((path) => !/[*|]/.test(path) && !pathExists(path));
    expect(missing).toEqual([]);
  });

  it('links to files and sections that exist', () => {
    const broken: string[] = [];
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link!)) continue;
      const [path, anchor] = link!.split('#') as [string, string | undefined];
      const target = path === '' ? page : relative(repoRoot, normalize(join(repoRoot, dirname(page), path)));
      if (!existsSync(join(repoRoot, target))) broken.push(link!);
      else if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor)) broken.push(link!);
    }
    expect(broken).toEqual([]);
  });
});
