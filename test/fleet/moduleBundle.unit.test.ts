import { createHash } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../schemas/canonicalJson.ts';
import { readTar, writeTar, type TarEntry } from '../../schemas/fleet/bundleTar.ts';
import { manifestSigningMessage, verifyModuleBundle } from '../../schemas/fleet/moduleBundle.ts';
import { bundleOf, newPublisher } from './bundleFixture.ts';

const acme = newPublisher('acme');
const trusted = [{ publisherId: acme.publisherId, publicKey: acme.publicKey }];
const valid = bundleOf(acme);
const enc = (v: unknown) => new TextEncoder().encode(canonicalJson(v));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The valid bundle's entries, changed by `edit`, written back as a canonical tarball. */
const rewritten = (edit: (entries: TarEntry[]) => TarEntry[]) => writeTar(edit(readTar(valid)));
const manifestOf = (entries: TarEntry[]) => JSON.parse(new TextDecoder().decode(entries.find((e) => e.path === 'manifest.json')!.data)) as Record<string, any>;
/** Replaces the manifest and signs it again with acme's key: only the file checks can refuse it. */
const resigned = (entries: TarEntry[], manifest: unknown): TarEntry[] => {
  const json = enc(manifest);
  const signature = { publisherId: 'acme', publicKey: acme.publicKey, signature: Buffer.from(acme.sign(manifestSigningMessage(json))).toString('base64') };
  return entries.map((e) => (e.path === 'manifest.json' ? { ...e, data: json } : e.path === 'manifest.sig' ? { ...e, data: enc(signature) } : e));
};
const codeOf = (bytes: Uint8Array, keys = trusted) => {
  const v = verifyModuleBundle(bytes, keys);
  return v.ok ? 'ok' : v.code;
};

describe('verifyModuleBundle', () => {
  it('accepts a bundle signed by a trusted key and returns its manifest, digest and files', () => {
    const v = verifyModuleBundle(valid, trusted);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.manifest.name).toBe('dns-resolver');
    expect(v.manifest.files.map((f) => [f.path, f.mode])).toEqual([
      ['bin/resolver', 0o755],
      ['etc/resolver.conf', 0o644],
    ]);
    expect(v.manifestSha256).toBe(sha(readTar(valid).find((e) => e.path === 'manifest.json')!.data));
    expect(new TextDecoder().decode(v.files.get('etc/resolver.conf'))).toBe('listen 127.0.0.53\n');
    expect(v.publisherId).toBe('acme');
  });

  it('refuses an empty bundle: no bytes, no entries, or no file listed', () => {
    expect(codeOf(new Uint8Array())).toBe('BUNDLE_EMPTY');
    expect(codeOf(writeTar([]))).toBe('BUNDLE_EMPTY');
    expect(codeOf(bundleOf(acme, {}, []))).toBe('BUNDLE_EMPTY');
  });

  it('refuses an unsigned bundle', () => {
    expect(codeOf(rewritten((es) => es.filter((e) => e.path !== 'manifest.sig')))).toBe('BUNDLE_UNSIGNED');
  });

  it('refuses a signature by another key under the trusted key, an unknown publisher and a revoked one', () => {
    const mallory = newPublisher('acme');
    const forged = bundleOf({ ...mallory, publicKey: acme.publicKey });
    expect(codeOf(forged)).toBe('BUNDLE_SIGNATURE_INVALID');
    expect(codeOf(bundleOf(mallory))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    expect(codeOf(bundleOf(newPublisher('globex')))).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
    // Revoked or rotated out: the key is simply no longer among the trusted ones.
    expect(codeOf(valid, [])).toBe('BUNDLE_PUBLISHER_UNTRUSTED');
  });

  it('refuses a file whose bytes or mode differ from the signed manifest', () => {
    const tampered = rewritten((es) => es.map((e) => (e.path === 'files/bin/resolver' ? { ...e, data: new TextEncoder().encode('rm -rf /\n') } : e)));
    expect(codeOf(tampered)).toBe('BUNDLE_FILE_MISMATCH');
    const chmodded = rewritten((es) => es.map((e) => (e.path === 'files/etc/resolver.conf' ? { ...e, mode: 0o666 } : e)));
    expect(codeOf(chmodded)).toBe('BUNDLE_FILE_MISMATCH');
  });

  it('refuses a file the manifest does not list, and a listed file that is missing', () => {
    const extra = rewritten((es) => [...es, { path: 'files/bin/backdoor', kind: 'file', mode: 0o755, data: new Uint8Array([1]) }]);
    expect(codeOf(extra)).toBe('BUNDLE_FILE_UNLISTED');
    const outside = rewritten((es) => [...es, { path: 'README', kind: 'file', mode: 0o644, data: new Uint8Array([1]) }]);
    expect(codeOf(outside)).toBe('BUNDLE_FILE_UNLISTED');
    expect(codeOf(rewritten((es) => es.filter((e) => e.path !== 'files/etc/resolver.conf')))).toBe('BUNDLE_FILE_MISSING');
    // Missing even though the (re-signed) manifest is otherwise valid.
    const listedMore = rewritten((es) => {
      const m = manifestOf(es);
      return resigned(es, { ...m, files: [...m.files, { path: 'zz', sha256: 'a'.repeat(64), mode: 0o644 }] });
    });
    expect(codeOf(listedMore)).toBe('BUNDLE_FILE_MISSING');
  });

  it('refuses path traversal, absolute paths and links', () => {
    const entry = (path: string): TarEntry => ({ path, kind: 'file', mode: 0o644, data: new Uint8Array([1]) });
    expect(codeOf(rewritten((es) => [...es, entry('files/../../etc/passwd')]))).toBe('BUNDLE_PATH_UNSAFE');
    expect(codeOf(rewritten((es) => [...es, entry('/etc/passwd')]))).toBe('BUNDLE_PATH_UNSAFE');
    // A symlink: written by hand, since the codec writes files and folders only (type flag '2' at offset 156).
    const withLink = writeTar([...readTar(valid), entry('files/link')]);
    const at = withLink.byteLength - 1024 - 512 - 512;
    withLink[at + 156] = '2'.charCodeAt(0);
    expect(codeOf(withLink)).toBe('BUNDLE_PATH_UNSAFE');
    // A manifest listing a traversing path does not parse: the schema refuses `..` segments.
    const traversing = rewritten((es) => {
      const m = manifestOf(es);
      return resigned(es, { ...m, files: [{ path: '../x', sha256: 'a'.repeat(64), mode: 0o644 }, ...m.files] });
    });
    expect(codeOf(traversing)).toBe('BUNDLE_MALFORMED');
  });

  it('refuses a duplicate entry, a non-canonical manifest and trailing bytes', () => {
    expect(codeOf(rewritten((es) => [...es, es.at(-1)!]))).toBe('BUNDLE_MALFORMED');
    const spaced = rewritten((es) =>
      resigned(es, manifestOf(es)).map((e) =>
        e.path === 'manifest.json' ? { ...e, data: new TextEncoder().encode(` ${new TextDecoder().decode(e.data)}`) } : e,
      ),
    );
    expect(codeOf(spaced)).toBe('BUNDLE_MALFORMED');
    expect(codeOf(new Uint8Array([...valid, ...new Uint8Array(512).fill(1)]))).toBe('BUNDLE_MALFORMED');
    expect(codeOf(new Uint8Array(1024).fill(7))).toBe('BUNDLE_MALFORMED');
  });

  test.prop([fc.nat(), fc.integer({ min: 1, max: 255 })], { numRuns: 400 })('any single-byte change anywhere in the bundle is refused', (position, xor) => {
    const bytes = valid.slice();
    const at = position % bytes.byteLength;
    bytes[at] = bytes[at]! ^ xor;
    expect(verifyModuleBundle(bytes, trusted).ok).toBe(false);
  });

  test.prop([fc.nat(), fc.integer({ min: 1, max: 255 }), fc.constantFrom('manifest.json', 'files/bin/resolver', 'files/etc/resolver.conf')], { numRuns: 300 })(
    'any single-byte change to a file or to the manifest is refused, even written back as a canonical tarball',
    (position, xor, path) => {
      const bytes = rewritten((es) =>
        es.map((e) => {
          if (e.path !== path) return e;
          const data = e.data.slice();
          const at = position % data.byteLength;
          data[at] = data[at]! ^ xor;
          return { ...e, data };
        }),
      );
      expect(verifyModuleBundle(bytes, trusted).ok).toBe(false);
    },
  );
});
