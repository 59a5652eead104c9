import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { buildDirs } from '../../scripts/emulatedSite/buildOutput.ts';
import { buildImage, type ImageBuild } from '../../scripts/emulatedSite/buildImage.ts';

const WAIT_MS = 30 * 60_000;

/**
 * The host image `npm run build:image` makes, built once per test run and shared by every test file that boots it (a
 * build competes with the VMs of the other e2e files for CI's two cores). The first caller builds (an atomic `mkdir`
 * decides who); the others wait for its result, or its failure. `BC_HOST_IMAGE`: an image `npm run build:image` already
 * made (its disk.raw, with manifest.json beside it) is used instead (building it takes minutes on a loaded machine).
 */
export async function sharedHostImage(): Promise<ImageBuild> {
  const built = process.env.BC_HOST_IMAGE;
  if (built) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(built)) hash.update(chunk as Buffer);
    return { image: built, manifest: join(built, '..', 'manifest.json'), sha256: hash.digest('hex'), sizeBytes: statSync(built).size };
  }
  const dir = join(inject('runDir'), 'host-image');
  const done = join(dir, 'build.json');
  const failed = join(dir, 'failed.txt');
  try {
    mkdirSync(dir);
  } catch {
    for (const until = Date.now() + WAIT_MS; Date.now() < until; await sleep(1_000)) {
      if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as ImageBuild;
      if (existsSync(failed)) throw new Error(`the shared host image build failed: ${readFileSync(failed, 'utf8')}`);
    }
    throw new Error(`the shared host image was not built within ${WAIT_MS / 60_000} minutes`);
  }
  try {
    const build = await buildImage(join(dir, 'out'), buildDirs('image').cacheDir);
    writeFileSync(done, JSON.stringify(build));
    return build;
  } catch (err) {
    writeFileSync(failed, err instanceof Error ? (err.stack ?? err.message) : String(err));
    throw err;
  }
}
